import ArgumentParser
import ReachabilityCore
import ReachClient
import ReachProtocol
import Synchronization

extension Reachctl {
    /// `reachctl wait`: a wait-online for scripts and units.
    struct Wait: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Wait until the path is satisfied (a wait-online for scripts and units).",
            discussion: """
                Exit codes: 0 satisfied; 1 timed out while reachd answered but the path was not \
                satisfied; 2 reachd could not be reached by the deadline. Until the deadline it \
                keeps retrying, so it works while reachd is still starting.
                """
        )

        @ParentCommand var root: Reachctl
        @OptionGroup var connection: ConnectionOptions

        @Option(help: ArgumentHelp("Give up after this many seconds; 0 waits forever.", valueName: "seconds"))
        var timeout: Double = 120

        @Option(name: .customLong("interface-type"), help: ArgumentHelp("Only interfaces of this type count.", valueName: "type"))
        var interfaceType: InterfaceType?

        @Option(help: ArgumentHelp("Require this IP family to be usable: 4 or 6.", valueName: "4|6"))
        var family: IPFamily?

        @Option(help: ArgumentHelp("Require this interface to be among the usable ones.", valueName: "name"))
        var interface: String?

        @Option(help: ArgumentHelp("Wait until this host name or address is reachable instead.", valueName: "host-or-address"))
        var target: String?

        func validate() throws {
            guard timeout >= 0 else { throw ValidationError("--timeout must be 0 (forever) or more seconds") }
            if let target, case let .failure(problem) = Target.parse(host: target) { throw ValidationError("'\(target)' is \(problem)") }
        }

        /// Whether a path meets what was asked for.
        static func isSatisfied(_ path: Path, family: IPFamily?, interface: String?) -> Bool {
            guard path.status == .satisfied else { return false }
            switch family {
            case .v4?: guard path.supportsIPv4 else { return false }
            case .v6?: guard path.supportsIPv6 else { return false }
            case nil: break
            }
            if let interface, !path.availableInterfaces.contains(interface) { return false }
            return true
        }

        func run() async throws {
            let client = connection.client(root)
            let filter = PathFilter(requiredInterfaceType: interfaceType)
            let family = self.family, interface = self.interface, target = self.target.flatMap(Target.init(host:))
            let progress = WaitProgress()
            let outcome = await withTaskGroup(of: WaitOutcome.self) { group in
                if let target {
                    group.addTask { await Reachctl.waitForTarget(client, target: target, progress: progress) }
                } else {
                    group.addTask { await Self.watch(client, filter: filter, family: family, interface: interface, progress: progress) }
                }
                if timeout > 0 {
                    let seconds = timeout
                    group.addTask {
                        try? await Task.sleep(for: .seconds(seconds))
                        return .deadline
                    }
                }
                let first = await group.next() ?? .deadline
                group.cancelAll()
                return first
            }
            switch outcome {
            case .satisfied:
                return
            case .deadline:
                if progress.daemonAnswered.withLock({ $0 }) {
                    printError("reachctl: timed out after \(timeout) s waiting for \(target.map { "\($0) to be reachable" } ?? "the path to be satisfied")")
                    throw ExitCode(1)
                }
                printError("reachctl: timed out after \(timeout) s: cannot reach reachd at \(client.socketPath)")
                throw ExitCode(2)
            }
        }

        /// Subscribes, and re-subscribes after any failure, until a reply satisfies.
        private static func watch(
            _ client: ReachabilityClient, filter: PathFilter, family: IPFamily?, interface: String?, progress: WaitProgress
        ) async -> WaitOutcome {
            while !Task.isCancelled {
                do {
                    for try await reply in client.subscribe(filter: filter) {
                        progress.daemonAnswered.withLock { $0 = true }
                        if isSatisfied(reply.path, family: family, interface: interface) { return .satisfied }
                    }
                } catch {
                    progress.daemonAnswered.withLock { $0 = false }
                }
                try? await Task.sleep(for: .milliseconds(200))  // reachd starting or restarting
            }
            return .deadline
        }
    }

    /// The same for one target (`--target`).
    fileprivate static func waitForTarget(_ client: ReachabilityClient, target: Target, progress: WaitProgress) async -> WaitOutcome {
        while !Task.isCancelled {
            do {
                for try await reply in client.subscribe(target: target) {
                    progress.daemonAnswered.withLock { $0 = true }
                    if reply.path.status == .satisfied { return .satisfied }
                }
            } catch {
                progress.daemonAnswered.withLock { $0 = false }
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return .deadline
    }

    /// An IP family as `--family` takes it.
    enum IPFamily: String, ExpressibleByArgument {
        case v4 = "4"
        case v6 = "6"
    }

    enum WaitOutcome: Sendable {
        case satisfied
        case deadline
    }
}

/// Whether the daemon answered on the latest attempt: at the deadline this decides
/// between exit 1 (reachd answered, the path never satisfied) and exit 2 (unreachable).
final class WaitProgress: Sendable {
    let daemonAnswered = Mutex(false)
}
