import Foundation
import Logging
import NIOCore
import NIOPosix
import ReachProtocol
import ReachabilityCore
import Synchronization

/// Everything `reachd` needs to run, after command line and configuration are read.
public struct DaemonOptions: Sendable {
    /// Where to serve the Varlink interface.
    public var socketPath: String
    /// Permission bits of the socket file.
    public var socketMode: UInt32 = 0o666
    /// The log level in force (applied through `logLevelSwitch`).
    public var logLevel: Logger.Level = .info
    /// What the engine watches and how.
    public var engine = EngineConfiguration()
    /// Where a changed log level is applied on reload; nil: the level is not managed.
    public var logLevelSwitch: LogLevelSwitch?
    /// Reads the options afresh on SIGHUP (configuration file + the same command line);
    /// nil: a reload re-reads nothing and only re-announces readiness.
    public var reload: (@Sendable () throws(ConfigurationError) -> DaemonOptions)?

    /// Creates options for a socket path.
    public init(socketPath: String) {
        self.socketPath = socketPath
    }
}

/// The reachd process: engine, Varlink server and service-manager notifications,
/// started in the order that makes the first answer right, reloaded on SIGHUP and shut
/// down on SIGTERM/SIGINT.
public enum Daemon {
    /// Runs until SIGTERM or SIGINT; returns after a clean shutdown. SIGHUP reloads.
    ///
    /// Blocking, with no Swift concurrency or libdispatch on the way (their worker pools
    /// would wake an idle daemon): the calling thread ends up waiting in `sigwaitinfo(2)`.
    /// Call it before any other thread exists, so that every thread inherits the blocked
    /// signal mask and the signals reach only this wait.
    public static func run(_ options: DaemonOptions, logger: Logger) throws {
        // Block the signals first: the engine and event-loop threads inherit the mask, and
        // a SIGHUP arriving before READY stays pending until the wait below picks it up.
        let signals = SignalSet([SIGTERM, SIGINT, SIGHUP])

        let notifier = SystemdNotifier()
        let instance = UUID().uuidString.lowercased()
        let relay = StateRelay(logger: logger, notifier: notifier)
        let engine = ReachabilityEngine(configuration: options.engine, logger: logger, notifier: notifier) { state in
            relay.publish(state)
        }

        // 1. Know the answer before anyone can ask: dump the kernel and derive.
        let first = try engine.start()
        logger.info("initial state: \(first.path.summary)")

        // 2. Serve it. The socket appears only now, so the first GetStatus is already right.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = VarlinkServer(
            socketPath: options.socketPath, socketMode: options.socketMode, instance: instance,
            initialState: first, eventLoop: group.next(), logger: logger
        )
        do {
            // Socket activation (reachd.socket): serve the socket systemd listens on, so
            // clients that connected before reachd ran are answered, none refused.
            if let descriptor = try SocketActivation.listeningDescriptor() {
                try server.start(listeningDescriptor: descriptor)
                logger.info("serving io.reachd.Reachability on the socket systemd passed (fd \(descriptor))")
            } else {
                try server.start()
                logger.info("serving io.reachd.Reachability on \(options.socketPath)")
            }
        } catch {
            engine.stop()
            try? group.syncShutdownGracefully()
            throw error
        }
        relay.attach(server, initial: first)

        // 3. Tell systemd we are ready, with the answer as status.
        notifier.ready(status: first.path.summary)

        var running = options
        var signal = signals.wait()
        while signal == SIGHUP {
            running = reload(running, engine: engine, relay: relay, notifier: notifier, logger: logger)
            signal = signals.wait()
        }
        logger.info("received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"), shutting down")
        notifier.stopping()
        engine.stop()
        server.shutdown()
        try? group.syncShutdownGracefully()
    }
}

extension Daemon {
    /// Re-reads the configuration and applies what can change while clients stay
    /// connected; the server is never restarted. Returns the options now in force.
    ///
    /// Tells systemd `RELOADING=1` + `MONOTONIC_USEC` first and always ends with `READY=1`,
    /// so the manager leaves the reloading state whether the new configuration was good
    /// (applied; `STATUS=` the current path) or bad (refused, the running configuration
    /// kept; the reason logged at error and shown as `STATUS=config reload failed: …`).
    static func reload(
        _ running: DaemonOptions, engine: ReachabilityEngine, relay: StateRelay, notifier: SystemdNotifier, logger: Logger
    ) -> DaemonOptions {
        notifier.reloading(monotonicMicroseconds: monotonicMicroseconds())
        logger.info("received SIGHUP, reloading the configuration")
        guard let read = running.reload else {
            notifier.ready(status: relay.currentSummary)
            return running
        }
        let proposed: DaemonOptions
        do {
            proposed = try read()
        } catch {
            logger.error("configuration reload refused, keeping the running configuration:")
            for line in error.description.split(separator: "\n") { logger.error("  \(line)") }
            notifier.send(["READY=1", "STATUS=config reload failed: \(error.summary)"])
            return running
        }
        let plan = ReloadPlan(running: running, proposed: proposed)
        for reason in plan.refused { logger.warning("reload: \(reason)") }
        if let level = plan.logLevel { running.logLevelSwitch?.level = level }
        if let policy = plan.policy { engine.apply(policy: policy) }
        let applied = plan.appliedChanges
        logger.info("configuration reloaded: \(applied.isEmpty ? "nothing to change" : applied.joined(separator: ", "))")
        notifier.ready(status: relay.currentSummary)
        return ReloadPlan.applied(running: running, proposed: proposed)
    }

    /// CLOCK_MONOTONIC in microseconds, as `MONOTONIC_USEC=` wants it.
    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
    }
}

/// Hands each new state from the engine thread to the server, logging real changes and
/// keeping systemd's `STATUS=` current. States that arrive before the server exists are
/// held (latest only) and handed over when it is attached.
final class StateRelay: Sendable {
    private struct Slot {
        var server: VarlinkServer?
        var pending: ReachabilityState?
        var last: ReachabilityState?
    }

    private let slot = Mutex(Slot())
    private let logger: Logger
    private let notifier: SystemdNotifier

    init(logger: Logger, notifier: SystemdNotifier) {
        self.logger = logger
        self.notifier = notifier
    }

    func attach(_ server: VarlinkServer, initial: ReachabilityState) {
        let pending = slot.withLock { slot in
            slot.server = server
            if slot.last == nil { slot.last = initial }
            defer { slot.pending = nil }
            return slot.pending
        }
        if let pending { publish(pending) }
    }

    /// The current path's one-line summary, for `STATUS=`.
    var currentSummary: String {
        slot.withLock { $0.last?.path.summary } ?? "starting"
    }

    /// Logs a changed answer once at info, naming what changed, and forwards every state.
    func publish(_ state: ReachabilityState) {
        let (server, previous) = slot.withLock { slot -> (VarlinkServer?, ReachabilityState?) in
            let previous = slot.last
            if slot.server == nil { slot.pending = state }
            slot.last = state
            return (slot.server, previous)
        }
        if let line = Self.changeLine(from: previous, to: state) {
            logger.info("\(line)")
            notifier.status(state.path.summary)
        }
        server?.publish(state)
    }

    /// "path changed (primaryInterface, gateways): <summary>", or nil when the answer is
    /// the same (a snapshot detail that no client sees changed).
    static func changeLine(from previous: ReachabilityState?, to state: ReachabilityState) -> String? {
        guard let previous else { return "path: \(state.path.summary)" }
        guard previous.answer != state.answer else { return nil }
        let changes = state.answer.changes(since: previous.answer)
        let what = changes.isEmpty ? "" : " (\(changes.map(\.rawValue).joined(separator: ", ")))"
        return "path changed\(what): \(state.path.summary)"
    }
}

/// Signals taken synchronously: blocked in the creating thread (and so in every thread
/// created after it) and collected with `sigwaitinfo(2)`. No handler runs, so nothing can
/// race the runtime, and no dispatch source needs libdispatch's worker threads.
struct SignalSet {
    private var set = sigset_t()

    /// Blocks `signals` in the calling thread.
    init(_ signals: [Int32]) {
        sigemptyset(&set)
        for number in signals { sigaddset(&set, number) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Waits for one of the signals and returns it.
    func wait() -> Int32 {
        var set = self.set
        while true {
            let number = sigwaitinfo(&set, nil)
            if number > 0 { return number }
            if errno != EINTR { return SIGTERM }
        }
    }
}
