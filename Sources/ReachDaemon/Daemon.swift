import Dispatch
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
    /// What the engine watches and how.
    public var engine = EngineConfiguration()

    /// Creates options for a socket path.
    public init(socketPath: String) {
        self.socketPath = socketPath
    }
}

/// The reachd process: engine, Varlink server and service-manager notifications,
/// started in the order that makes the first answer right and shut down on SIGTERM/SIGINT.
public enum Daemon {
    /// Runs until SIGTERM or SIGINT; returns after a clean shutdown.
    public static func run(_ options: DaemonOptions, logger: Logger) async throws {
        let notifier = SystemdNotifier()
        let instance = UUID().uuidString.lowercased()
        let relay = StateRelay(logger: logger, notifier: notifier)
        let engine = ReachabilityEngine(configuration: options.engine, logger: logger, notifier: notifier) { state in
            relay.publish(state)
        }

        // Signals are turned into dispatch events before anything can deliver them.
        let signals = SignalWaiter(signals: [SIGTERM, SIGINT])

        // 1. Know the answer before anyone can ask: dump the kernel and derive.
        let first = try await engine.start()
        logger.info("initial state: \(first.path.summary)")

        // 2. Serve it. The socket appears only now, so the first GetStatus is already right.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = VarlinkServer(
            socketPath: options.socketPath, socketMode: options.socketMode, instance: instance,
            initialState: first, eventLoop: group.next(), logger: logger
        )
        do {
            try await server.start()
        } catch {
            await engine.stop()
            try? await group.shutdownGracefully()
            throw error
        }
        relay.attach(server, initial: first)
        logger.info("serving io.reachd.Reachability on \(options.socketPath)")

        // 3. Tell systemd we are ready, with the answer as status.
        notifier.ready(status: first.path.summary)

        let signal = await signals.next()
        logger.info("received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"), shutting down")
        notifier.stopping()
        await engine.stop()
        await server.shutdown()
        try? await group.shutdownGracefully()
    }
}

/// Hands each new state from the engine thread to the server, logging real changes and
/// keeping systemd's `STATUS=` current. States that arrive before the server exists are
/// held (latest only) and handed over when it is attached.
final class StateRelay: Sendable {
    private struct Slot {
        var server: VarlinkServer?
        var pending: ReachabilityState?
        var lastPath: Path?
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
            if slot.lastPath == nil { slot.lastPath = initial.path }
            defer { slot.pending = nil }
            return slot.pending
        }
        if let pending { publish(pending) }
    }

    func publish(_ state: ReachabilityState) {
        let (server, previous) = slot.withLock { slot -> (VarlinkServer?, Path?) in
            let previous = slot.lastPath
            if slot.server == nil { slot.pending = state }
            slot.lastPath = state.path
            return (slot.server, previous)
        }
        if previous != state.path {
            logger.info("path changed: \(state.path.summary)")
            notifier.status(state.path.summary)
        }
        server?.publish(state)
    }
}

/// Waits for termination signals without a signal handler that could race the runtime:
/// the signals are ignored at the process level and observed through dispatch sources.
final class SignalWaiter: Sendable {
    private let stream: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    init(signals: [Int32]) {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        self.stream = stream
        let queue = DispatchQueue(label: "reachd.signals")
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            return source
        }
    }

    func next() async -> Int32 {
        for await number in stream { return number }
        return SIGTERM
    }
}
