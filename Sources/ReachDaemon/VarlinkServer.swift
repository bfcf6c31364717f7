import Logging
import NIOCore
import NIOPosix
import ReachabilityCore
import ReachProtocol

/// Serves `io.reachd.Reachability` (and `org.varlink.service`) on a Unix socket.
///
/// Everything it publishes lives on the one event loop given at creation, in a
/// `ServerCore`; the methods here may be called from any thread and hop onto the loop.
/// The engine hands it kernel snapshots with `publish(_:)`; whether anything changed, and
/// for which subscribers, is decided there, once (`Publication`).
///
/// `start` and `shutdown` block on NIO futures instead of being `async`: reachd never
/// touches Swift concurrency, whose dispatch worker pool on Linux wakes the process once
/// a second for as long as it lives. Call them from a thread that is not the event loop.
public final class VarlinkServer: Sendable {
    /// The socket path (for a server given a listening descriptor: informational).
    public let socketPath: String
    private let socketMode: UInt32
    private let eventLoop: any EventLoop
    private let logger: Logger
    private let core: NIOLoopBoundBox<ServerCore>

    /// Creates a server; nothing listens until `start()`.
    ///
    /// - Parameters:
    ///   - socketPath: where to listen.
    ///   - socketMode: permissions of the socket file (0666: any local user may ask).
    ///   - instance: identifies this daemon run in every status reply.
    ///   - snapshot: the first kernel snapshot: what is served until the next `publish(_:)`.
    ///   - policy: how interfaces are treated.
    ///   - serviceInfo: what `org.varlink.service.GetInfo` answers.
    ///   - eventLoop: the one loop all connections and subscriptions live on.
    ///   - logger: changes at info, connection problems at debug and notice.
    ///   - notifier: where `STATUS=`, `READY=1` and `WATCHDOG=1` go.
    ///   - onFatalError: called (on the loop) if serving fails for good; the caller should exit.
    public init(
        socketPath: String, socketMode: UInt32 = 0o666, instance: String, snapshot: NetworkSnapshot,
        policy: InterfacePolicy, serviceInfo: ServiceInfo = .reachd, eventLoop: any EventLoop, logger: Logger,
        notifier: SystemdNotifier = SystemdNotifier(), onFatalError: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.socketPath = socketPath
        self.socketMode = socketMode
        self.eventLoop = eventLoop
        self.logger = logger
        let core = ServerCore(
            publication: Publication(instance: instance, snapshot: snapshot, policy: policy), serviceInfo: serviceInfo,
            eventLoop: eventLoop, logger: logger, notifier: notifier, onFatalError: onFatalError
        )
        // Created off the loop and handed over whole: from here on only the loop touches it.
        self.core = NIOLoopBoundBox.makeBoxSendingValue(core, eventLoop: eventLoop)
    }

    /// Binds `socketPath` and starts serving.
    ///
    /// Creates the parent directory (0755) if missing and replaces a stale socket file.
    /// Refuses when a live server already answers on the path, or when the path exists
    /// and is not a socket.
    public func start() throws(VarlinkServerError) {
        try SocketFile.createParentDirectories(of: socketPath)
        switch try SocketFile.kind(of: socketPath) {
        case .nothing:
            break
        case .socket:
            if Self.isAnswering(socketPath, on: eventLoop) { throw .alreadyRunning(socketPath: socketPath) }
            logger.info("removing stale socket \(socketPath)")
            try SocketFile.remove(socketPath)
        case .regularFile, .directory, .other:
            throw .notASocket(path: socketPath)
        }
        let channel: any Channel
        do {
            channel = try bootstrap().bind(unixDomainSocketPath: socketPath).wait()
        } catch {
            throw .bindFailed(socketPath: socketPath, reason: "\(error)")
        }
        do {
            try SocketFile.setMode(socketPath, socketMode)
        } catch {
            try? channel.close().wait()
            throw error
        }
        adopt(channel, ownsSocketFile: true)
    }

    /// Starts serving on a socket that is already bound and listening (socket activation).
    ///
    /// The socket file belongs to whoever created it: `shutdown()` leaves it in place.
    public func start(listeningDescriptor descriptor: CInt) throws(VarlinkServerError) {
        let channel: any Channel
        do {
            channel = try bootstrap().withBoundSocket(descriptor).wait()
        } catch {
            throw .bindFailed(socketPath: socketPath, reason: "\(error)")
        }
        adopt(channel, ownsSocketFile: false)
    }

    /// Hands the engine's newest kernel snapshot to the loop. Callable from any thread.
    public func publish(_ snapshot: NetworkSnapshot) {
        let core = self.core
        eventLoop.execute { core.value.update(snapshot: snapshot) }
    }

    /// Applies a reloaded interface policy (nil: unchanged), then tells systemd the reload is
    /// done (`READY=1` with the status as it is now). Callable from any thread.
    public func finishReload(policy: InterfacePolicy?) {
        let core = self.core
        eventLoop.execute {
            if let policy { core.value.update(policy: policy) }
            core.value.notifier.ready(status: core.value.publication.state.path.summary)
        }
    }

    /// Pings the systemd watchdog from the loop, so a ping proves the loop is alive too.
    public func pingWatchdog() {
        let core = self.core
        eventLoop.execute { core.value.notifier.watchdog() }
    }

    /// Stops accepting, closes every connection and removes the socket file (if created here).
    public func shutdown() {
        let core = self.core
        let removeFile = try? eventLoop.flatSubmit { () -> EventLoopFuture<Bool> in
            core.value.shutdown().map { core.value.ownsSocketFile }
        }.wait()
        if removeFile == true, (try? SocketFile.kind(of: socketPath)) == .socket {
            try? SocketFile.remove(socketPath)
        }
    }

    /// Active subscriptions (for tests and diagnostics).
    func subscriptionCount() -> EventLoopFuture<Int> {
        let core = self.core
        return eventLoop.submit { core.value.publication.subscriberCount }
    }

    // MARK: Internals

    private func bootstrap() -> ServerBootstrap {
        let core = self.core
        let logger = self.logger
        // One loop serves as the whole group, so child channels share the core's loop.
        return ServerBootstrap(group: eventLoop)
            .serverChannelOption(.backlog, value: 128)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = VarlinkConnectionHandler(core: core.value, logger: logger)
                    try channel.pipeline.syncOperations.addHandlers([ByteToMessageHandler(VarlinkFrameDecoder()), handler])
                }
            }
    }

    private func adopt(_ channel: any Channel, ownsSocketFile: Bool) {
        let core = self.core
        try? eventLoop.submit { core.value.adopt(channel, ownsSocketFile: ownsSocketFile) }.wait()
    }

    /// Whether something accepts connections on `path` (a stale socket refuses them).
    private static func isAnswering(_ path: String, on eventLoop: any EventLoop) -> Bool {
        do {
            let channel = try ClientBootstrap(group: eventLoop)
                .connectTimeout(.seconds(2))
                .connect(unixDomainSocketPath: path).wait()
            try? channel.close().wait()
            return true
        } catch {
            return false
        }
    }
}
