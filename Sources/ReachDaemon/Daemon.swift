import FoundationEssentials
import LinuxSystem
import Logging
import NIOCore
import NIOPosix
import ReachabilityCore
import ReachConfiguration
import ReachConnectivity
import ReachProtocol
import ReachServer
import ReachSystemd
import ReachTargets
import Synchronization

/// Everything `reachd` needs to run, after command line and configuration are read.
package struct DaemonOptions: Sendable {
    /// Where to serve the Varlink interface.
    package var socketPath: String
    /// Permission bits of the socket file.
    package var socketMode: UInt32 = ReachdConfiguration.Socket().mode
    /// The log level in force (applied through `logLevelSwitch`).
    package var logLevel: Logger.Level = ReachdConfiguration.Log().level
    /// How interfaces are treated (ignored ones, overrides): applied on the event loop.
    package var policy = ReachdConfiguration.Interfaces().policy
    /// What any client may take.
    package var limits = ServerLimits()
    /// systemd-resolved's Varlink socket, asked for target names when it exists.
    package var resolvedSocket = NameResolver.systemdResolvedSocket
    /// What the engine watches and how.
    package var engine = EngineConfiguration()
    /// Connectivity probes and captive-portal APIs (`[probe]`, `[captive-portal]`).
    package var connectivity = ConnectivitySettings()
    /// Where the metrics go (`[metrics]`).
    package var metrics = ReachdConfiguration.Metrics()
    /// The targets watched from start-up on (`[targets] watch`); a reload changes them.
    package var watchedTargets: [WatchedTarget] = []
    /// Where a changed log level is applied on reload; nil: the level is not managed.
    package var logLevelSwitch: LogLevelSwitch?
    /// Reads the options afresh on SIGHUP (configuration file + the same command line);
    /// nil: a reload re-reads nothing and only re-announces readiness.
    package var reload: (@Sendable () throws(ConfigurationError) -> DaemonOptions)?

    /// Creates options for a socket path.
    package init(socketPath: String) {
        self.socketPath = socketPath
    }
}

/// Why the daemon stopped other than by SIGTERM or SIGINT.
package struct DaemonFailure: Error, CustomStringConvertible {
    /// What went wrong, in one line.
    package var description: String
}

/// The reachd process: engine, Varlink server and service-manager notifications.
///
/// Two threads. The calling (main) thread becomes the engine: it owns the kernel view and
/// takes signals through a signalfd. One SwiftNIO event loop owns everything published.
/// The start order makes the first answer right: dump the kernel and derive, then open the
/// socket, then tell systemd READY=1. No semaphores: each step is a plain return value.
package enum Daemon {
    /// Runs until SIGTERM or SIGINT; returns after a clean shutdown. SIGHUP reloads.
    ///
    /// Call it before any other thread exists: the signals are blocked here and every
    /// thread created later inherits the mask, so they reach only the engine's signalfd.
    /// No Swift concurrency or libdispatch on the way: their worker pools would wake an
    /// idle daemon.
    ///
    /// - Throws: `DaemonFailure` (already logged) when reachd cannot start or cannot go on;
    ///   the process should exit non-zero so the service manager restarts it.
    package static func run(_ options: DaemonOptions, logger: Logger) throws(DaemonFailure) {
        // First, what --check-config and a reload check too: pinned certificates, the metrics address.
        let resources: StartResources
        do {
            resources = try options.checkStartRequirements(metricsListener: .none)
        } catch {
            for line in error.problems.dropLast() { logger.critical("\(line)") }
            throw fail(error.problems.last ?? "\(error)", logger: logger)
        }
        let notifier = SystemdNotifier()
        let signals: SignalDescriptor
        let engine: ReachabilityEngine
        do {
            signals = try SignalDescriptor([SIGTERM, SIGINT, SIGHUP])
            // 1. Know the answer before anyone can ask: dump the kernel and take a snapshot
            //    (the routes only as far as the answer needs them; the engine reads the rest
            //    first thing in `run` and publishes the complete snapshot as a change).
            var engineConfiguration = options.engine
            engineConfiguration.resolvedSocket = options.resolvedSocket
            engine = try ReachabilityEngine(configuration: engineConfiguration, signals: signals, logger: logger, policy: options.policy)
        } catch {
            throw fail("\(error)", logger: logger)
        }
        let first = ReachabilityState(snapshot: engine.snapshot, policy: options.policy)
        logger.info("initial state: \(first.path.summary)")
        // Enough descriptors for every connection the caps allow, plus reachd's own.
        let wanted = options.limits.connections + 256
        let descriptors = (try? ProcessResources.raiseDescriptorLimit(to: wanted)) ?? 0
        if descriptors < wanted {
            logger.warning("the descriptor limit is \(descriptors), below the \(wanted) the connection caps need; accepts pause at the limit")
        }

        // 2. Serve it. The socket appears only now, so the first GetStatus is already right.
        // Never shut down: the loop's thread ends with the process, after `server.shutdown()`
        // closed every channel. NIO's group shutdown hands its callback to libdispatch, whose
        // worker threads try to raise their priority, which the unit's system-call filter
        // (and any unprivileged user) refuses, and log that failure at every stop.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var activated = false
        let settings = ServerSettings(
            socketPath: options.socketPath, socketMode: options.socketMode, limits: options.limits, resolvedSocket: options.resolvedSocket,
            connectivity: options.connectivity, probeTLS: resources.probeTLS, apiTLS: resources.apiTLS
        )
        let owner = DaemonReload(running: options, notifier: notifier, logger: logger)
        let server = VarlinkServer(
            settings: settings, instance: UUID().uuidString.lowercased(), snapshot: engine.snapshot, policy: options.policy,
            eventLoop: group.next(), logger: logger, notifier: notifier, engine: engine.mailbox, owner: owner, counters: engine.counters
        )
        owner.serve(server)
        do {
            // Socket activation (reachd.socket): serve the socket systemd listens on, so
            // clients that connected before reachd ran are answered, none refused.
            if let descriptor = try SocketActivation.listeningDescriptor() {
                activated = true
                try server.start(listeningDescriptor: descriptor)
                logger.info("serving io.reachd.Reachability on the socket systemd passed (fd \(descriptor))")
            } else {
                try server.start()
                logger.info("serving io.reachd.Reachability on \(options.socketPath)")
            }
        } catch {
            throw fail("\(error)", logger: logger)
        }

        server.watch(targets: options.watchedTargets)
        do {
            try server.startMetrics(options.metrics)
        } catch {
            server.shutdown()
            throw fail("metrics: \(error)", logger: logger)
        }

        // 3. Tell systemd we are ready, with the answer as status, and watch.
        notifier.ready(status: first.path.summary)
        // Pinged at half the interval systemd asked for, from the event loop (`EngineEvent.watchdogDue`).
        let watchdogInterval = notifier.watchdogIntervalMicroseconds.map { Duration.microseconds($0 / 2) }
        // A socket file deleted under reachd is noticed and put back (not one systemd passed).
        let socketFile = activated ? nil : options.socketPath
        let outcome = Result { () throws(EngineError) in
            try engine.run(deliver: server.deliver, watchdogInterval: watchdogInterval, socketFile: socketFile)
        }

        notifier.stopping()
        server.shutdown()
        switch outcome {
        case let .success(signal):
            logger.info("received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"), shut down")
        case let .failure(error):
            throw fail(error.description, logger: logger)
        }
    }

    private static func fail(_ reason: String, logger: Logger) -> DaemonFailure {
        logger.critical("\(reason)")
        return DaemonFailure(description: reason)
    }

    /// CLOCK_MONOTONIC in microseconds, as `MONOTONIC_USEC=` wants it.
    package static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
    }
}

/// reachd's side of a reload: the options in force, read afresh and compared on a
/// blocking-work thread (`ServerOwner`); the server applies the result on its loop and
/// tells the engine. The server is never restarted. Sendable: the reads run on other
/// threads, one at a time, the options behind a lock.
///
/// Tells systemd `RELOADING=1` + `MONOTONIC_USEC` first; the server always ends with
/// `READY=1`, so the manager leaves the reloading state whether the new configuration was
/// good (applied, then `READY=1` with the current path as `STATUS=`) or bad (refused, the
/// running configuration kept; the reason logged at error and shown as
/// `STATUS=config reload failed: …`). A client that asked is answered then.
final class DaemonReload: ServerOwner, Sendable {
    private struct State {
        var running: DaemonOptions
        /// The server whose socket file is put back; weak, as the server holds this.
        weak var server: VarlinkServer?
    }

    private let state: Mutex<State>
    private let notifier: SystemdNotifier
    private let logger: Logger

    /// A reload of `running`, reporting to `notifier` and `logger`.
    init(running: DaemonOptions, notifier: SystemdNotifier, logger: Logger) {
        state = Mutex(State(running: running))
        self.notifier = notifier
        self.logger = logger
    }

    /// The server whose socket file a reload and `restoreSocketFile` put back.
    func serve(_ server: VarlinkServer) {
        state.withLock { $0.server = server }
    }

    func reload(askedByClient: Bool, work: BlockingWork) -> EventLoopFuture<ReloadResult> {
        work.run { self.read(askedByClient: askedByClient) }
    }

    func restoreSocketFile(work: BlockingWork) {
        work.submit(for: .daemon, { self.restoreSocketFile() }) { _ in }
    }

    /// The reload itself; blocks.
    private func read(askedByClient: Bool) -> ReloadResult {
        notifier.reloading(monotonicMicroseconds: Daemon.monotonicMicroseconds())
        logger.info("\(askedByClient ? "asked over Varlink" : "received SIGHUP"), reloading the configuration")
        // A reload also puts back a socket file someone deleted (clients connected meanwhile stay connected).
        defer { restoreSocketFile() }
        let running = state.withLock { $0.running }
        guard let read = running.reload else { return ReloadResult(.applied) }
        let proposed: DaemonOptions
        do {
            proposed = try read()
        } catch {
            return refused(error.description.split(separator: "\n").map(String.init), summary: error.summary)
        }
        do {
            // What the next start would refuse is refused now, not applied until then.
            _ = try proposed.checkStartRequirements(metricsListener: .thisProcess(running.metrics.listen))
        } catch {
            return refused(error.problems, summary: error.summary)
        }
        let plan = ReloadPlan(running: running, proposed: proposed)
        for reason in plan.refused { logger.warning("reload: \(reason)") }
        if let level = plan.logLevel { running.logLevelSwitch?.level = level }
        let applied = plan.appliedChanges
        logger.info("configuration reloaded: \(applied.isEmpty ? "nothing to change" : applied.joined(separator: ", "))")
        state.withLock { $0.running = ReloadPlan.applied(running: running, proposed: proposed) }
        return ReloadResult(.applied, policy: plan.policy, watchedTargets: plan.watchedTargets)
    }

    private func restoreSocketFile() {
        guard let server = state.withLock({ $0.server }) else { return }
        do {
            try server.restoreSocketFileIfGone()
        } catch {
            logger.error("cannot re-create the socket file: \(error)")
        }
    }

    private func refused(_ lines: [String], summary: String) -> ReloadResult {
        logger.error("configuration reload refused, keeping the running configuration:")
        for line in lines { logger.error("  \(line)") }
        return ReloadResult(.refused(summary))
    }
}
