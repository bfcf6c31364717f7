import Logging
import NIOCore
import NIOPosix
import ReachabilityCore
import ReachProtocol

/// Serves `io.reachd.Reachability` (and `org.varlink.service`) on a Unix socket.
///
/// All connection and subscription state is confined to the one event loop given at
/// creation; `publish(_:)` may be called from any thread and hops onto it.
///
/// `sequence` starts at 1 and grows by one each time the unfiltered path changes;
/// subscribers with a filter are woken only when the path they see changes.
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
    private let core: NIOLoopBoundBox<VarlinkServerCore>
    /// Whether `shutdown()` should remove the socket file (not when systemd owns it).
    private let ownsSocketFile: NIOLoopBoundBox<Bool>

    /// Creates a server; nothing listens until `start()`.
    ///
    /// - Parameters:
    ///   - socketPath: where to listen.
    ///   - socketMode: permissions of the socket file (0666: any local user may ask).
    ///   - instance: identifies this daemon run in every status reply.
    ///   - initialState: the state served until the first `publish(_:)`.
    ///   - serviceInfo: what `org.varlink.service.GetInfo` answers.
    ///   - eventLoop: the one loop all connections and subscriptions live on.
    ///   - logger: connection problems are logged at debug and notice level.
    public init(
        socketPath: String, socketMode: UInt32 = 0o666, instance: String, initialState: ReachabilityState,
        serviceInfo: ServiceInfo = .reachd, eventLoop: any EventLoop, logger: Logger
    ) {
        self.socketPath = socketPath
        self.socketMode = socketMode
        self.eventLoop = eventLoop
        self.logger = logger
        let core = VarlinkServerCore(instance: instance, serviceInfo: serviceInfo, state: initialState, eventLoop: eventLoop, logger: logger)
        // Created off the loop and handed over whole: from here on only the loop touches it.
        self.core = NIOLoopBoundBox.makeBoxSendingValue(core, eventLoop: eventLoop)
        self.ownsSocketFile = NIOLoopBoundBox.makeBoxSendingValue(false, eventLoop: eventLoop)
    }

    /// Binds `socketPath` and starts serving.
    ///
    /// Creates the parent directory (0755) if missing and replaces a stale socket file.
    /// Refuses when a live server already answers on the path, or when the path exists
    /// and is not a socket.
    public func start() throws(VarlinkServerError) {
        try SocketFile.createParentDirectory(of: socketPath)
        switch try SocketFile.inspect(socketPath) {
        case .nothing:
            break
        case .other:
            throw .notASocket(path: socketPath)
        case .socket:
            if Self.isAnswering(socketPath, on: eventLoop) { throw .alreadyRunning(socketPath: socketPath) }
            logger.info("removing stale socket \(socketPath)")
            try SocketFile.remove(socketPath)
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
        adopt(channel, ownsFile: true)
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
        adopt(channel, ownsFile: false)
    }

    /// Hands a new state to the server. Callable from any thread.
    public func publish(_ state: ReachabilityState) {
        let core = self.core
        eventLoop.execute { core.value.publish(state) }
    }

    /// Stops accepting, closes every connection and removes the socket file (if created here).
    public func shutdown() {
        let core = self.core
        let owns = self.ownsSocketFile
        let removeFile = try? eventLoop.flatSubmit { () -> EventLoopFuture<Bool> in
            core.value.shutdown().map { owns.value }
        }.wait()
        if removeFile == true, (try? SocketFile.inspect(socketPath)) == .socket {
            try? SocketFile.remove(socketPath)
        }
    }

    /// Active subscriptions (for tests and diagnostics).
    func subscriptionCount() -> EventLoopFuture<Int> {
        let core = self.core
        return eventLoop.submit { core.value.hub.count }
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
                    try channel.pipeline.syncOperations.addHandlers([
                        ByteToMessageHandler(VarlinkFrameDecoder()), handler,
                    ])
                }
            }
    }

    private func adopt(_ channel: any Channel, ownsFile: Bool) {
        let core = self.core
        let owns = self.ownsSocketFile
        try? eventLoop.submit {
            core.value.serverChannel = channel
            owns.value = ownsFile
        }.wait()
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
