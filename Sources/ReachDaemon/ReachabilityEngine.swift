import Glibc
import LinuxSystem
import NIOCore
import Logging
import NetlinkMonitor
import ReachabilityCore
import ReachConfiguration
import ReachMetrics
import ReachServer
import ReachTargets
import Synchronization
import SystemPackage

/// Settings the engine needs to watch the network.
package struct EngineConfiguration: Sendable, Equatable {
    /// Where sysfs is mounted (tests point this at fixture trees).
    package var sysfsRoot: String = "/sys"
    /// The resolver configuration read for `supportsDNS`.
    package var resolvConfPath: String = "/etc/resolv.conf"
    /// systemd-resolved's upstream list, consulted when resolv.conf names only the stub.
    package var resolvedUpstreamPath: String = "/run/systemd/resolve/resolv.conf"
    /// Netlink receive buffer; generous so floods rarely overflow (docs/DESIGN.md rule 4).
    package var receiveBufferSize: Int = ReachdConfiguration.Netlink().receiveBufferSize
    /// `[stall]`: when the TCP sockets are read and judged.
    package var stall = ReachdConfiguration.Stall()
    /// `[nat64]`: whether IPv6-only links' resolvers are asked for their NAT64 prefix.
    package var nat64 = ReachdConfiguration.NAT64()
    /// systemd-resolved's Varlink socket, asked for `ipv4only.arpa` on the link when it exists.
    package var resolvedSocket: String? = NameResolver.systemdResolvedSocket

    /// Creates the default configuration.
    package init() {}
}

/// Why the engine could not start, or stopped for good.
package struct EngineError: Error, CustomStringConvertible {
    /// What went wrong, for the log and the exit message.
    package var description: String
}

/// The owner of the kernel view.
///
/// It runs on the thread that calls `run` (reachd's main thread) and blocks in `poll(2)`
/// on the rtnetlink event socket, the resolver watch, the signal descriptor and its
/// mailbox: nothing else, and no timeout unless the watchdog, a retry, a lookup recheck
/// or the TCP socket reads (only while someone listens and the path is satisfied) need
/// one, so an idle daemon nobody listens to makes no system calls at all. When netlink is
/// readable it drains everything queued, takes one snapshot (two FIB lookups) and hands
/// it on; the event loop decides whether the answer changed (docs/DESIGN.md rule 5: no
/// debounce, one evaluation per drained batch). It never derives paths, formats JSON or
/// talks to clients.
///
/// docs/DESIGN.md rule 6: the kernel may announce a route's removal before its lookups stop
/// seeing it. After each evaluation `LookupRecheck` judges the lookups against the
/// default routes the batch removed and those still tracked; while one still answers
/// through a removed route nothing tracked explains, the engine takes the snapshot again
/// on a short bounded schedule (1 to 32 ms), handing each on as usual, and then settles.
package final class ReachabilityEngine {
    private let monitor: any KernelView
    private let resolver: ResolverWatcher
    private let signals: SignalDescriptor
    private let logger: Logger
    /// What the engine was started with; the loop follows reloads from there.
    private let started: StartSettings
    /// The TCP sockets' reads for stalls (`[stall]`), and the verdicts last handed on.
    private var stallReads: StallReads
    /// The TCP sockets' destruction, watched while `stallReads` says so (a stall stands).
    private var destroyWatch: (any DestroyedSocketWatch)?
    /// Where the event loop posts commands.
    package let mailbox: EngineMailbox
    /// Netlink events and resyncs, counted for the metrics (read on the event loop).
    package let counters = DaemonCounters()
    /// The latest kernel view: after `init`, the first one.
    package private(set) var snapshot: NetworkSnapshot

    /// Opens the netlink sockets, dumps the kernel's state and takes the first snapshot,
    /// so the answer is known before anyone can ask.
    ///
    /// The default routes are read only as far as the first answer under `policy` needs
    /// them (`PathDerivation.familiesAwaitingRoutes`); `run` reads the rest first thing
    /// and publishes the complete snapshot. With a million routes installed the route dump
    /// is most of a start, and the answer seldom depends on it.
    ///
    /// - Parameters:
    ///   - signals: the signals the engine takes (created before any other thread).
    ///   - policy: how interfaces are treated, which decides what the first answer needs.
    package convenience init(
        configuration: EngineConfiguration, signals: SignalDescriptor, logger: Logger, policy: InterfacePolicy = InterfacePolicy()
    ) throws(EngineError) {
        let monitor: NetlinkMonitor
        do {
            monitor = try NetlinkMonitor(sysfsRoot: configuration.sysfsRoot, receiveBufferSize: configuration.receiveBufferSize)
            try monitor.start(deferringRoutes: true)
        } catch {
            throw EngineError(description: "cannot watch the kernel's network state: \(error)")
        }
        let resolver = ResolverWatcher(
            resolvConfPath: configuration.resolvConfPath, resolvedUpstreamPath: configuration.resolvedUpstreamPath, logger: logger
        )
        try self.init(
            kernel: monitor, resolver: resolver, signals: signals, logger: logger, policy: policy, stall: configuration.stall,
            nat64: configuration.nat64, resolvedSocket: configuration.resolvedSocket
        )
    }

    /// The engine over any kernel view (tests hand in a scripted one); takes the first
    /// snapshot, with the routes it needs under `policy` read.
    init(
        kernel: any KernelView, resolver: ResolverWatcher, signals: SignalDescriptor, logger: Logger,
        recheckSchedule: [Duration] = LookupRecheck.schedule, policy: InterfacePolicy = InterfacePolicy(),
        stall: ReachdConfiguration.Stall = ReachdConfiguration.Stall(), nat64: ReachdConfiguration.NAT64 = ReachdConfiguration.NAT64(),
        resolvedSocket: String? = nil
    ) throws(EngineError) {
        monitor = kernel
        started = StartSettings(
            recheckSchedule: recheckSchedule, policy: policy, discoverDNS64: nat64.discoverDNS64, resolvedSocket: resolvedSocket
        )
        stallReads = StallReads(settings: stall)
        do {
            mailbox = try EngineMailbox()
        } catch {
            throw EngineError(description: "cannot create the engine's wake-up descriptor: \(error)")
        }
        self.resolver = resolver
        self.signals = signals
        self.logger = logger
        snapshot = NetworkSnapshot()
        snapshot = evaluate()
        do {
            // Each round reads at least one pending family, so two rounds read them all;
            // should a third still find the answer waiting, everything is read.
            for _ in AddressFamily.allCases {
                let needed = PathDerivation.familiesAwaitingRoutes(snapshot, policy: policy)
                guard !needed.isEmpty else { break }
                try monitor.readRoutes(of: needed)
                snapshot = evaluate()
            }
            if !PathDerivation.familiesAwaitingRoutes(snapshot, policy: policy).isEmpty {
                _ = try monitor.finishStart()
                snapshot = evaluate()
            }
        } catch {
            throw EngineError(description: "cannot read the kernel's routes: \(error)")
        }
        if !snapshot.pendingRouteFamilies.isEmpty {
            let families = snapshot.pendingRouteFamilies.map(\.rawValue).sorted().joined(separator: " and ")
            logger.debug("the first answer needs no \(families) routes besides the ones the lookups matched: answering before they are read")
        }
    }

    /// Watches until SIGTERM or SIGINT and returns that signal; SIGHUP asks the loop for a
    /// reload (`EngineEvent.reloadRequested`).
    ///
    /// Each wake-up hands what `poll(2)` found to `EngineMachine` one input at a time, then
    /// `.timers` and `.quiet`, and carries its actions out (`Turn`).
    ///
    /// - Parameters:
    ///   - deliver: takes what the engine tells the event loop, on the engine thread, and
    ///     hands it over (`VarlinkServer.deliver`).
    ///   - watchdogInterval: how often the watchdog is due (nil: never).
    ///   - socketFile: the socket file to watch for deletion, through its directory
    ///     (`EngineEvent.socketFileMayBeGone`); nil when reachd did not create the socket.
    ///     Events about other entries there are ignored.
    /// - Throws: `EngineError` when it cannot go on: `poll` failed, netlink stayed broken
    ///   through every retry, or another thread posted `.fail`.
    package func run(deliver: @escaping (EngineEvent) -> Void, watchdogInterval: Duration?, socketFile: String? = nil) throws(EngineError) -> Int32 {
        // Whatever ends the loop, no command posted to it waits for an answer.
        defer { mailbox.close() }
        let clock = ContinuousClock()
        let socketWatch = socketFile.flatMap { file -> DirectoryWatch? in
            guard let watch = try? DirectoryWatch(), (try? watch.watch(FileSystem.directory(containing: file))) == true else { return nil }
            return watch
        }
        let socketName: Set<String> = socketFile.map { [FileSystem.name(of: $0)] } ?? []
        // Fixed slots first; the optional watches after them (a missing one is simply not polled).
        let (netlink, signal, commands, deadlines) = (0, 1, 2, 3)
        let timer: BootClockTimer
        do {
            timer = try BootClockTimer()
        } catch {
            throw EngineError(description: "cannot create the deadline timer: \(error)")
        }
        var descriptors = [monitor.eventDescriptor, signals.descriptor, mailbox.doorbell.descriptor, timer.descriptor]
        let resolverFiles = resolver.watch.map { watch -> Int in descriptors.append(watch.descriptor); return descriptors.count - 1 }
        let socketFiles = socketWatch.map { watch -> Int in descriptors.append(watch.descriptor); return descriptors.count - 1 }
        var polls = PollSet(descriptors)
        var turn = Turn(machine: EngineMachine(
            now: clock.now, watchdogInterval: watchdogInterval, recheckSchedule: started.recheckSchedule,
            stallPollInterval: stallReads.settings.enabled ? stallReads.settings.pollInterval : nil, discoverDNS64: started.discoverDNS64,
            policy: started.policy, asleepSinceBoot: SuspendClock.asleepSinceBoot()
        ), deliver: deliver)

        // The snapshot taken at start is settled as any other; then the routes the first
        // answer did not need (see `init`), published before any command is taken: a
        // target's answer may need them.
        var inputs: [EngineInput] = [.evaluated(snapshot)]
        // The server listened before this watch existed: a deletion in between is seen here.
        if socketWatch != nil { inputs.append(.socketFileMayBeGone) }
        if !snapshot.pendingRouteFamilies.isEmpty {
            do {
                let outcome = try monitor.finishStart()
                account(outcome)
                logger.debug("the remaining routes are read: publishing the complete snapshot")
                inputs.append(.drained(outcome))
            } catch {
                logger.error("reading the routes at start failed: \(error); resynchronising")
                inputs.append(.readFailed)
            }
        }
        var ending = try take(inputs, &turn, clock: clock)
        // The start is over: the code only it ran need not stay mapped (ProcessResources).
        ProcessResources.releaseStartupCode()

        while true {
            let deadline: ContinuousClock.Instant?
            switch ending {
            case let .stop(signal):
                return signal
            case let .sleep(until, pollingNetlink, pollingResolverFiles):
                // While a resync waits for its retry, netlink is left out: a broken socket
                // would poll readable at once and spin.
                polls.setEnabled(pollingNetlink, at: netlink)
                if let resolverFiles { polls.setEnabled(pollingResolverFiles, at: resolverFiles) }
                deadline = until
            }
            do {
                // Deadlines are CLOCK_BOOTTIME instants: the timer, not poll's monotonic
                // timeout, so one that passed while the machine slept fires at resume.
                try timer.arm(at: deadline, now: clock.now)
            } catch {
                throw EngineError(description: "arming the deadline timer failed: \(error)")
            }
            let ready: [Bool]
            do {
                ready = try polls.wait(timeoutMilliseconds: nil)
            } catch {
                throw EngineError(description: "poll failed: \(error)")
            }
            if ready[deadlines] { timer.acknowledge() }

            var inputs: [EngineInput] = []
            if ready[signal] {
                while let number = try? signals.next() { inputs.append(.signal(number)) }
            }
            if ready[commands] { inputs += mailbox.take().map(EngineInput.command) }
            if ready[netlink] {
                do {
                    let outcome = try monitor.drain()
                    account(outcome)
                    inputs.append(.drained(outcome))
                } catch {
                    logger.error("netlink receive failed: \(error); resynchronising")
                    counters.resyncsAfterReceiveFailure.add(1, ordering: .relaxed)
                    inputs.append(.readFailed)
                }
            }
            if let resolverFiles, ready[resolverFiles] {
                let text = resolver.textGeneration
                let changed = resolver.handleEvents()
                inputs.append(.resolverFiles(Self.read(changed: changed, text: text, now: resolver.textGeneration), watched: true))
            }
            if let socketFiles, ready[socketFiles], socketWatch?.drain().mayConcern(socketName) == true {
                inputs.append(.socketFileMayBeGone)
            }
            ending = try take(inputs, &turn, clock: clock)
        }
    }

    /// How a wake-up ends: wait for the next one, or return a signal.
    private enum Ending {
        case sleep(until: ContinuousClock.Instant?, pollingNetlink: Bool, pollingResolverFiles: Bool)
        case stop(Int32)
    }

    /// The machine, where its actions go, and what the actions of the wake-up under way
    /// said about its end.
    private struct Turn {
        var machine: EngineMachine
        let deliver: (EngineEvent) -> Void
        var ending = Ending.sleep(until: nil, pollingNetlink: true, pollingResolverFiles: true)
        var failure: String?
    }

    /// One wake-up: `inputs`, then `.timers` and `.quiet`, each input's actions carried out
    /// and their outcomes handed back in before the next input. A stop or a failure takes
    /// effect once every input is answered (commands taken with it are abandoned).
    private func take(_ inputs: [EngineInput], _ turn: inout Turn, clock: ContinuousClock) throws(EngineError) -> Ending {
        // First: a wake seen here starts the watches afresh before anything this wake-up read is judged.
        handle(.clocks(asleepSinceBoot: SuspendClock.asleepSinceBoot()), &turn, clock: clock)
        for input in inputs { handle(input, &turn, clock: clock) }
        handle(.timers(heldAnnouncementsDue: monitor.nextAnnouncementRelease), &turn, clock: clock)
        handle(.quiet, &turn, clock: clock)
        if let failure = turn.failure { throw EngineError(description: failure) }
        return turn.ending
    }

    private func handle(_ input: EngineInput, _ turn: inout Turn, clock: ContinuousClock) {
        let now = clock.now
        for action in turn.machine.handle(input, at: now) {
            if let outcome = carryOut(action, at: now, &turn) { handle(outcome, &turn, clock: clock) }
        }
    }

    /// Carries out one action; returns what its IO found, for the machine, when it found anything.
    private func carryOut(_ action: EngineAction, at now: ContinuousClock.Instant, _ turn: inout Turn) -> EngineInput? {
        switch action {
        case let .stop(signal):
            turn.ending = .stop(signal)
        case let .fail(reason):
            turn.failure = reason
        case let .abandon(command):
            command.abandon()
        case .requestReload:
            turn.deliver(.reloadRequested)
        case .rereadResolverFiles:
            // A reload re-reads the resolver files too, events or not.
            let text = resolver.textGeneration
            let changed = resolver.refresh()
            return .resolverFiles(Self.read(changed: changed, text: text, now: resolver.textGeneration), watched: false)
        case let .lookUp(keys, reply):
            reply.succeed(keys.map { monitor.targetLookup($0, nat64Prefixes: snapshot.nat64Prefixes) })
        case let .watch(addresses):
            do {
                try monitor.watch(addresses)
            } catch {
                logger.warning("cannot update the route event filter (\(error)); every route event is read instead")
            }
        case .restoreSocket:
            turn.deliver(.socketFileMayBeGone)
        case .resynchronize:
            do {
                let removed = try monitor.resynchronize()
                logger.notice("netlink resynchronised after a receive failure (resync #\(monitor.resyncCount))")
                return .resynced(.resynchronized(removed: removed))
            } catch {
                return .resynced(.failed("\(error)"))
            }
        case .releaseHeldAnnouncements:
            // RA options held over their link's budget (NetlinkMonitor) whose time has come.
            return .announcementsReleased(changed: monitor.releaseHeldAnnouncements(now: now), nextDue: monitor.nextAnnouncementRelease)
        case .readSockets:
            let (addresses, limit) = (snapshot.addresses, stallReads.settings.socketLimit)
            let read = Result { () throws(NetlinkError) in try monitor.readSockets(addresses: addresses, limit: limit) }
            // Drained after the dump: a socket destroyed in between is in both, and the rule takes that.
            let destroyed = destroyWatch.map { watch in
                Result { () throws(NetlinkError) in try watch.drain(addresses: addresses, limit: limit) }
            }
            // The radio of each Wi-Fi interface the sockets use, read beside them (nl80211).
            let wireless = Set(snapshot.links.values.lazy.filter { $0.device.isWireless && $0.isUp }.map(\.index))
            var stations: [Int32: Result<WirelessStation?, NetlinkError>] = [:]
            for index in stallReads.stationsToRead(read, wireless: wireless) {
                stations[index] = Result { () throws(NetlinkError) in try monitor.readStation(interfaceIndex: index) }
            }
            deliver(stallReads.judge(read, destroyed: destroyed, stations: stations, at: Int(time(nil)), instant: now, logger: logger), in: &turn)
            followDestroyWatch()
        case .forgetSockets:
            deliver(stallReads.forget(), in: &turn)
            followDestroyWatch()
        case .startStallWatchAfresh:
            deliver(stallReads.startAfresh(), in: &turn)
            followDestroyWatch()
        case .rereadGateways:
            monitor.rereadGateways()
        case let .announceWake(after):
            turn.deliver(.woke(after: after))
        case let .askDNS64(link):
            turn.deliver(askDNS64(on: link))
        case let .learnDNS64(link, prefixes):
            var changed = monitor.withdrawNAT64Prefixes(.dns64, on: link)
            for prefix in prefixes where monitor.learnNAT64Prefix(prefix, lifetime: nil, on: link, now: now) { changed = true }
            logger.info("DNS64 (ipv4only.arpa) on interface \(link): \(prefixes.isEmpty ? "no NAT64 prefix" : prefixes.map(\.description).joined(separator: ", "))")
            return .nat64Learnt(changed: changed)
        case let .withdrawDNS64(link):
            _ = monitor.withdrawNAT64Prefixes(.dns64, on: link)
        case let .report(report):
            log(report)
        case .evaluate:
            snapshot = evaluate(looking: turn.machine.targets)
            turn.deliver(.snapshot(snapshot))
            return .evaluated(snapshot)
        case .pingWatchdog:
            turn.deliver(.watchdogDue)
        case let .sleep(until, pollingNetlink, pollingResolverFiles):
            turn.ending = .sleep(until: until, pollingNetlink: pollingNetlink, pollingResolverFiles: pollingResolverFiles)
        }
        return nil
    }

    /// Hands the loop what a read (or its end) changed.
    private func deliver(_ findings: StallReads.Findings, in turn: inout Turn) {
        if let stalls = findings.stalls { turn.deliver(.stalls(stalls)) }
        if let estimates = findings.linkQuality { turn.deliver(.linkQuality(estimates)) }
    }

    /// Opens or closes the destroy watch as `stallReads` wants it: open only while a stall
    /// stands, so an idle or healthy daemon holds no such socket.
    private func followDestroyWatch() {
        switch (stallReads.watchesDestroyedSockets, destroyWatch) {
        case (true, nil):
            do {
                destroyWatch = try monitor.openDestroyWatch()
            } catch {
                stallReads.watchFailed(error, logger: logger)
            }
        case (false, _?):
            destroyWatch = nil
        default:
            break
        }
    }

    /// What a look at the resolver files found: `changed` what they say, or their text went
    /// from generation `text` to `now`.
    private static func read(changed: Bool, text: Int, now: Int) -> ResolverFilesRead {
        changed ? .changed : now != text ? .rewritten : .unchanged
    }

    /// The RFC 7050 query for `link`, run where the loop runs blocking work; its answer is posted back.
    private func askDNS64(on link: Int32) -> EngineEvent {
        logger.debug("asking interface \(link)'s resolver for the AAAA records of ipv4only.arpa (RFC 7050)")
        let mailbox = self.mailbox
        let socket = started.resolvedSocket
        return .runBlocking({ mailbox.post(.dns64Answered(link, DNS64Query.ask(interfaceIndex: link, resolvedSocket: socket))) },
                            dropped: { mailbox.post(.dns64Answered(link, .failed)) })
    }

    /// Says what the loop decided that only the log needs.
    private func log(_ report: EngineReport) {
        switch report {
        case let .resyncFailed(reason, delay):
            logger.error("netlink resync failed: \(reason); retrying in \(delay)")
        case let .lookingAgain(delay, attempt):
            logger.debug("a FIB lookup still answers through a default route the kernel reported gone (\(Self.describe(snapshot.lookups))); looking again in \(delay) (\(attempt) of \(started.recheckSchedule.count))")
        case .gaveUpRechecking:
            logger.info("FIB lookups still answer through a default route the kernel reported gone after \(started.recheckSchedule.count) rechecks; keeping the kernel's answer (\(Self.describe(snapshot.lookups)))")
        }
    }

    /// Counts what a drain read, and says so when events were lost.
    private func account(_ outcome: DrainOutcome) {
        counters.netlinkEvents.add(outcome.events, ordering: .relaxed)
        guard outcome.resynchronizedAfterLostEvents else { return }
        counters.resyncsAfterLostEvents.add(1, ordering: .relaxed)
        logger.warning("netlink events were lost (receive buffer overflow): re-read links, addresses and default routes (resync #\(monitor.resyncCount))")
    }

    /// The lookups for a log line: `ipv4 via 192.0.2.1 dev 2 table 254, ipv6 noRoute`.
    package static func describe(_ lookups: [AddressFamily: RouteLookup]) -> String {
        lookups.sorted { $0.key == .ipv4 && $1.key != .ipv4 }.map { family, lookup in
            switch lookup {
            case let .route(result):
                "\(family) via \(result.gateway.map { "\($0)" } ?? "on-link") dev \(result.outputInterface)" + (result.table.map { " table \($0)" } ?? "")
            case let .failure(failure):
                "\(family) \(failure)"
            }
        }.joined(separator: ", ")
    }

    /// The tracked state and fresh lookups (`init`: no target is watched before `run`).
    private func evaluate() -> NetworkSnapshot {
        evaluate(looking: EmptyCollection())
    }

    /// The tracked state, fresh lookups, and a lookup per target.
    private func evaluate(looking targets: some Sequence<TargetKey>) -> NetworkSnapshot {
        var snapshot = monitor.snapshot()
        snapshot.hasNameserver = resolver.hasNameserver
        for key in targets {
            let found = monitor.targetLookup(key, nat64Prefixes: snapshot.nat64Prefixes)
            snapshot.targets[key] = found.route
            snapshot.nat64Targets[key] = found.nat64
        }
        return snapshot
    }

}

/// What `ReachabilityEngine` was started with.
private struct StartSettings {
    /// The delays between lookup rechecks (`LookupRecheck`).
    var recheckSchedule: [Duration]
    /// The interface policy at start.
    var policy: InterfacePolicy
    /// `[nat64] discover-dns64`.
    var discoverDNS64: Bool
    /// systemd-resolved's socket for the DNS64 query (nil: the system resolver only).
    var resolvedSocket: String?
}
