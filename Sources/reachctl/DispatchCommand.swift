import ArgumentParser
import Dispatch
import Glibc
import LinuxSystem
import ReachabilityCore
import ReachClient
import ReachDispatch
import ReachProtocol
import Synchronization
import SystemPackage

extension Reachctl {
    /// `reachctl dispatch`: runs a directory's hooks on every change, like NetworkManager's dispatcher.
    struct DispatchHooks: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "dispatch",
            abstract: "Run the executables of a directory on every change (reachd-dispatcher.service runs it).",
            discussion: """
                On each change of the path, the directory's executables run one at a time, in \
                name order, with the change in their environment: REACHD_EVENT (initial, change, \
                reconnected, restarted), REACHD_STATUS, REACHD_REASON, REACHD_REACHABILITY, \
                REACHD_PRIMARY, REACHD_PRIMARY_TYPE, REACHD_INTERFACES, REACHD_GATEWAYS, \
                REACHD_IPV4, REACHD_IPV6, REACHD_DNS, REACHD_EXPENSIVE, REACHD_CONSTRAINED \
                (yes/no), REACHD_FLAGS, REACHD_CONNECTIVITY, REACHD_CONNECTIVITY_CAUSE, \
                REACHD_CAPTIVE_PORTAL, REACHD_LINK_QUALITY, REACHD_CHANGES (what changed, comma-separated), \
                REACHD_SEQUENCE and REACHD_INSTANCE; PATH is the system's directories and \
                nothing else is inherited. Values carry no control characters (they are escaped).
                The state at start runs the hooks once (REACHD_EVENT=initial). Changes that come \
                while hooks run are folded into one: the next round runs with the latest state \
                and every change since the last round. A hook still running at --hook-timeout \
                gets SIGTERM (its whole process group), SIGKILL --kill-after later. Its output \
                goes to reachctl's, each line after the hook's name.
                A file runs only if it is a regular file (or a link to one), executable, owned \
                by root (or by the user running the dispatcher) and writable by nobody else; \
                others are skipped with a warning. Dotfiles, names ending in ~ and package \
                leftovers (.dpkg-old, .rpmnew …) are ignored, and so is a link to /dev/null. \
                A restart of reachd is survived: the dispatcher reconnects, and runs the hooks \
                when the path then differs from the last one seen.
                """
        )

        @ParentCommand var root: Reachctl
        @OptionGroup var connection: ConnectionOptions

        @Argument(help: ArgumentHelp("The hook directory.", valueName: "directory"))
        var directory = "/etc/reachd/dispatcher.d"

        @Option(name: .customLong("hook-timeout"), help: ArgumentHelp("Stop a hook that still runs after this many seconds.", valueName: "seconds"))
        var hookTimeout: Double = 30

        @Option(name: .customLong("kill-after"), help: ArgumentHelp("Kill a hook this many seconds after it was asked to stop.", valueName: "seconds"))
        var killAfter: Double = 5

        func validate() throws {
            guard hookTimeout > 0 else { throw ValidationError("--hook-timeout must be more than 0 seconds") }
            guard killAfter >= 0 else { throw ValidationError("--kill-after must be 0 or more seconds") }
        }

        func run() async throws {
            let client = connection.client(root)
            let dispatcher = HookDispatcher(
                directory: directory,
                deadline: HookDeadline(timeout: .milliseconds(Int64(hookTimeout * 1000)), grace: .milliseconds(Int64(killAfter * 1000)))
            )
            HookDispatcher.stopHooksOnTermination()
            printLine("reachctl dispatch: running \(shown(directory)) on each change of reachd at \(shown(client.socketPath))")
            let subscription = ReconnectingSubscription<StatusReply>(
                policy: .default, open: { client.subscribe() }, instance: \.instance,
                onEvent: { dispatcher.handle($0) }
            )
            subscription.start()
            // Runs until a signal ends the process.
            while true { try await Task.sleep(for: .seconds(3600)) }
        }
    }
}

/// Carries out a `HookRunner`: turns answers into events, lists the directory, runs each
/// hook on a thread of its own (the hooks block), and logs what happened.
final class HookDispatcher: Sendable {
    private struct State {
        var runner = HookRunner<DispatchEvent>()
        /// The path of the last answer, whether or not it ran the hooks.
        var lastPath: Path?
    }

    private let directory: String
    private let deadline: HookDeadline
    private let state = Mutex(State())
    /// Where hooks run, one at a time; the subscription's task only hands events over.
    private let queue = DispatchQueue(label: "io.reachd.dispatch")

    init(directory: String, deadline: HookDeadline) {
        self.directory = directory
        self.deadline = deadline
    }

    /// An answer or outage from the subscription.
    func handle(_ event: SubscriptionEvent<StatusReply>) {
        switch event {
        case let .unavailable(error):
            printWarning("reachctl dispatch: \(shown(error.description)); retrying")
        case let .answer(reply, answer):
            let kind: DispatchEvent.Kind
            switch answer {
            case .first: kind = .initial
            case .update: kind = .change
            case .reconnected: kind = .reconnected
            case .restarted: kind = .restarted
            }
            let action = state.withLock { state -> HookRunner<DispatchEvent>.Action in
                defer { state.lastPath = reply.path }
                guard let event = DispatchEvent.of(reply, kind: kind, lastPath: state.lastPath) else { return .wait }
                return state.runner.received(event)
            }
            perform(action)
        }
    }

    /// A round to start goes to the hook queue; anything else needs nothing now.
    private func perform(_ action: HookRunner<DispatchEvent>.Action) {
        if case .wait = action { return }
        queue.async { [self] in carryOut(action) }
    }

    /// On the queue: every step of the rounds until the runner waits.
    private func carryOut(_ first: HookRunner<DispatchEvent>.Action) {
        var action = first
        while true {
            switch action {
            case .wait:
                return
            case let .list(event):
                let hooks = listHooks()
                printLine("reachctl dispatch: \(event.kind.rawValue) \(event.sequence): \(event.path.status.rawValue)"
                          + (event.path.primaryInterface.map { " via \(shown($0))" } ?? "")
                          + (event.changes.isEmpty ? "" : " (\(event.changes.map(\.rawValue).joined(separator: ",")))")
                          + "; \(hooks.count) hook\(hooks.count == 1 ? "" : "s") to run")
                action = state.withLock { $0.runner.listed(hooks) }
            case let .run(hook, event):
                runHook(hook, event: event)
                action = state.withLock { $0.runner.finished() }
            }
        }
    }

    private func runHook(_ name: String, event: DispatchEvent) {
        let label = shown(name)
        let started = ContinuousClock.now
        do {
            let outcome = try HookProcess.run(path: directory + "/" + name, label: label,
                                              environment: HookEnvironment.entries(for: event), deadline: deadline)
            let elapsed = ContinuousClock.now - started
            let line = "reachctl dispatch: \(label) \(outcome.description) after \(Self.seconds(elapsed))"
            if case .exited(0) = outcome { printLine(line) } else { printWarning(line) }
        } catch {
            printWarning("reachctl dispatch: \(label) could not be started: \(error)")
        }
    }

    /// "0.012 s".
    private static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        let fraction = String(milliseconds % 1000)
        return "\(milliseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction) s"
    }

    /// The hooks that run now, in order; the others are logged.
    private func listHooks() -> [String] {
        let files: [HookFile]
        do {
            files = try Self.entries(of: directory)
        } catch {
            printWarning("reachctl dispatch: cannot read \(shown(directory)): \(error)")
            return []
        }
        let plan = HookEligibility.plan(files, runner: geteuid())
        for (name, reason) in plan.skipped {
            printWarning("reachctl dispatch: skipping \(shown(directory))/\(shown(name)): \(reason)")
        }
        return plan.run
    }

    /// What stat(2) and lstat(2) say about each entry of `directory`.
    private static func entries(of directory: String) throws(Errno) -> [HookFile] {
        var files: [HookFile] = []
        for name in try FileSystem.names(in: directory, limit: .max) {
            let path = FilePath(directory + "/" + name)
            guard let link = try? Stat(path, followTargetSymlink: false) else { continue }
            let target = link.type == .symbolicLink ? try? FileSystem.symbolicLinkTarget(of: path.string) : nil
            guard let info = try? Stat(path, followTargetSymlink: true) else {
                files.append(HookFile(name: name, kind: .danglingLink, mode: 0, owner: link.userID.rawValue, linkTarget: target))
                continue
            }
            let kind: HookFile.Kind
            switch info.type {
            case .regular: kind = .regular
            case .directory: kind = .directory
            default: kind = .other
            }
            files.append(HookFile(name: name, kind: kind, mode: UInt32(info.mode.rawValue) & 0o7777,
                                  owner: info.userID.rawValue, linkTarget: target))
        }
        return files
    }

    /// SIGTERM, SIGINT and SIGHUP end the dispatcher; the hook running then (in its own
    /// process group) gets SIGTERM first, so it does not outlive it.
    static func stopHooksOnTermination() {
        for number in [SIGTERM, SIGINT, SIGHUP] {
            signal(number) { number in
                let group = runningHookGroup.load(ordering: .relaxed)
                if group > 0 { kill(-group, SIGTERM) }
                signal(number, SIG_DFL)
                raise(number)
            }
        }
    }
}

/// One of the dispatcher's own warnings (a skipped hook, a timeout, a failed hook, reachd
/// gone) on stderr. When stderr is the journal it carries sd-daemon's `<4>` prefix, so
/// `journalctl -p warning -u reachd-dispatcher` lists them; a hook's own lines start with
/// its name, so a hook cannot set a priority.
func printWarning(_ text: String) {
    printError(journalWarningPrefix + text)
}

/// `<4>` when stderr is the journal stream systemd says it is (`JOURNAL_STREAM`, device
/// and inode), else nothing.
private let journalWarningPrefix: String = {
    guard let raw = getenv("JOURNAL_STREAM"), let info = try? FileDescriptor.standardError.stat() else { return "" }
    let parts = String(cString: raw).split(separator: ":")
    guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return "" }
    return device == UInt64(info.deviceID.rawValue) && inode == UInt64(info.inode.rawValue) ? "<4>" : ""
}()
