import Glibc
import LinuxSystem
import Logging
import NIOCore
import NIOPosix
import ReachabilityCore
import ReachConfiguration
import ReachConnectivity
import ReachMetrics
import ReachProtocol
import ReachSystemd
import ReachTargets
import SystemPackage

/// Serves `io.reachd.Reachability` (and `org.varlink.service`) on a Unix socket.
///
/// Everything it publishes lives on the one event loop given at creation, in a
/// `ServerCore`; the methods here may be called from any thread and hop onto the loop.
/// The engine hands it what it found with `deliver(_:)`; whether anything changed, and
/// for which subscribers, is decided there, once (`Publication`).
///
/// `start` and `shutdown` block on NIO futures instead of being `async`: reachd never
/// touches Swift concurrency, whose dispatch worker pool on Linux wakes the process once
/// a second for as long as it lives. Call them from a thread that is not the event loop.
package final class VarlinkServer: Sendable {
    /// The socket path (for a server given a listening descriptor: informational).
    package let socketPath: String
    private let socketMode: UInt32
    private let eventLoop: any EventLoop
    private let logger: Logger
    private let core: NIOLoopBoundBox<ServerCore>

    /// Creates a server; nothing listens until `start()`.
    ///
    /// - Parameters:
    ///   - settings: where to listen, what clients may take, how names are resolved and
    ///     which connectivity checks run.
    ///   - instance: identifies this daemon run in every status reply.
    ///   - snapshot: the first kernel snapshot: what is served until the engine delivers another.
    ///   - policy: how interfaces are treated.
    ///   - eventLoop: the one loop all connections and subscriptions live on.
    ///   - logger: changes at info, connection problems at debug and notice.
    ///   - notifier: where `STATUS=`, `READY=1` and `WATCHDOG=1` go.
    ///   - engine: what clients' calls ask of the engine (target lookups), what a reload
    ///     tells it, and where a failure of the server for good is reported.
    ///   - owner: reads the configuration for a reload and puts the socket file back.
    ///   - counters: what the engine counts, for the metrics.
    package init(
        settings: ServerSettings, instance: String, snapshot: NetworkSnapshot, policy: InterfacePolicy,
        eventLoop: any EventLoop, logger: Logger, notifier: SystemdNotifier, engine: any EngineRequests, owner: any ServerOwner & Sendable,
        counters: DaemonCounters
    ) {
        self.socketPath = settings.socketPath
        self.socketMode = settings.socketMode
        self.eventLoop = eventLoop
        self.logger = logger
        let core = ServerCore(
            publication: Publication(instance: instance, snapshot: snapshot, policy: policy), settings: settings,
            eventLoop: eventLoop, logger: logger, notifier: notifier, engine: engine, owner: owner, counters: counters
        )
        // Created off the loop and handed over whole: from here on only the loop touches it.
        self.core = NIOLoopBoundBox.makeBoxSendingValue(core, eventLoop: eventLoop)
    }

    /// Binds `socketPath` and starts serving.
    ///
    /// Creates the parent directory (0755) if missing and replaces a stale socket file (one
    /// that refuses connections). Refuses when a live server may answer on the path, or
    /// when the path exists and is not a socket.
    package func start() throws(VarlinkServerError) {
        try SocketFile.createParentDirectories(of: socketPath)
        switch try SocketFile.kind(of: socketPath) {
        case .nothing:
            break
        case .socket:
            switch Self.probe(socketPath, on: eventLoop) {
            case .answering:
                throw .alreadyRunning(socketPath: socketPath)
            case let .unknown(reason):
                // A listener with a full backlog answers EAGAIN: it is busy, not stale.
                throw .alreadyRunning(socketPath: socketPath, reason: reason)
            case .refused:
                logger.info("removing stale socket \(socketPath)")
                try SocketFile.remove(socketPath)
            }
        case .regularFile, .directory, .other:
            throw .notASocket(path: socketPath)
        }
        adopt(try bind(), socketFile: try SocketFile.identity(of: socketPath))
    }

    /// Starts serving on a socket that is already bound and listening (socket activation).
    ///
    /// The socket file belongs to whoever created it: `shutdown()` leaves it in place.
    package func start(listeningDescriptor descriptor: CInt) throws(VarlinkServerError) {
        let channel: any Channel
        do {
            channel = try bootstrap().withBoundSocket(descriptor).wait()
        } catch {
            throw .bindFailed(socketPath: socketPath, reason: Self.describe(error))
        }
        adopt(channel, socketFile: nil)
    }

    /// Makes sure the socket file this server created is still at its path, and binds a
    /// new one there if it was deleted (or replaced by something that is not a live
    /// socket). Connections already open are kept. A no-op for an activated socket.
    /// Returns whether it had to re-create the socket.
    @discardableResult
    package func restoreSocketFileIfGone() throws(VarlinkServerError) -> Bool {
        let core = self.core
        guard let created = try? eventLoop.submit({ core.value.socketFile }).wait() else { return false }
        guard try SocketFile.identity(of: socketPath) != created else { return false }
        switch try SocketFile.kind(of: socketPath) {
        case .nothing:
            break
        case .socket:
            // Someone else's socket now: a live one is theirs to keep.
            if case .refused = Self.probe(socketPath, on: eventLoop) { try SocketFile.remove(socketPath) } else { return false }
        case .regularFile, .directory, .other:
            throw .notASocket(path: socketPath)
        }
        try SocketFile.createParentDirectories(of: socketPath)
        adopt(try bind(), socketFile: try SocketFile.identity(of: socketPath))
        logger.notice("the socket file \(socketPath) was gone; listening there again")
        return true
    }

    /// Hands what the engine found or wants to the loop, in one hop. Callable from any thread.
    package func deliver(_ event: EngineEvent) {
        let core = self.core
        eventLoop.execute { core.value.handle(event) }
    }

    /// Watches the targets `[targets] watch` names from now on, instead of those named before.
    /// Callable from any thread.
    package func watch(targets: [WatchedTarget]) {
        let core = self.core
        eventLoop.execute { core.value.watch(configured: targets) }
    }

    /// Stops accepting, closes every connection and removes the socket file if it is still
    /// the one this server created (same device and inode): a socket another reachd has
    /// since put at the path is left alone.
    package func shutdown() {
        let core = self.core
        let created = try? eventLoop.flatSubmit { () -> EventLoopFuture<FileIdentity?> in
            core.value.shutdown().map { core.value.socketFile }
        }.wait()
        if let created, (try? SocketFile.identity(of: socketPath)) == created {
            try? SocketFile.remove(socketPath)
        }
    }

    /// Starts what `[metrics]` asks for: the HTTP endpoint (bound now, so a port in use
    /// fails the start) and the textfile (written now, then on every change).
    package func startMetrics(_ settings: ReachdConfiguration.Metrics) throws(VarlinkServerError) {
        let core = self.core
        if let address = settings.listen {
            do {
                let channel = try MetricsEndpoint.start(address, eventLoop: eventLoop, core: core)
                eventLoop.execute {
                    core.value.metrics.channel = channel
                    core.value.updateStallListeners()
                }
                logger.info("serving metrics on http://\(address)/metrics")
            } catch {
                throw .bindFailed(socketPath: "\(address)", reason: Self.describe(error))
            }
        }
        if let directory = settings.textfileDirectory {
            eventLoop.execute { core.value.writeMetrics(to: directory) }
            logger.info("writing metrics to \(directory)/\(MetricsTextfile.name) on every change")
        }
    }

    /// Active subscriptions (for tests and diagnostics).
    package func subscriptionCount() -> EventLoopFuture<Int> {
        let core = self.core
        return eventLoop.submit { core.value.publication.subscriberCount }
    }

    // MARK: Internals

    private func bootstrap() -> ServerBootstrap {
        let core = self.core
        let logger = self.logger
        // One loop serves as the whole group, so child channels share the core's loop.
        return ServerBootstrap(group: eventLoop)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AcceptPauseHandler { core.value.acceptFailed($0) })
                }
            }
            .childChannelInitializer { channel in
                Self.peerUID(of: channel).flatMapThrowing { uid in
                    switch core.value.admit(channel, uid: uid) {
                    case let .success(ticket):
                        try channel.pipeline.syncOperations.addHandlers([
                            RequestFramingHandler(core: core.value, ticket: ticket),
                            VarlinkConnectionHandler(core: core.value, ticket: ticket, logger: logger),
                        ])
                    case let .failure(limit):
                        core.value.refuse(nil, .admission(limit, uid: uid))
                        Self.refuse(channel, limit: limit, limits: core.value.limits)
                    }
                }
            }
            // Small buffers per connection: requests are small, and thousands of idle clients
            // must not cost megabytes each.
            .childChannelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 1024, maximum: 65536))
            .childChannelOption(.writeBufferWaterMark, value: Self.writeBuffer)
    }

    /// What a connection may hold unsent beyond its socket's own buffer: over 4 KiB it is
    /// unwritable (a stream pauses and folds its replies into the newest, calls wait and are
    /// not read) until all of it is sent. With NIO's default, 64 KiB, 4,096 clients that do
    /// not read could hold 256 MiB of replies.
    static let writeBuffer = ChannelOptions.Types.WriteBufferWaterMark(low: 1, high: 4096)

    /// Answers a refused client's first call with `ConnectionLimitReached`, then ends the
    /// connection gracefully: what the client sends is read and dropped and only the
    /// sending side is shut, because closing with its call still unread would reset the
    /// connection and lose the reply on the way. The client's hang-up (or 2 s) closes it.
    private static func refuse(_ channel: any Channel, limit: ServerBudget.Limit, limits: ServerLimits) {
        let maximum: Int
        switch limit {
        case .connections: maximum = limits.connections
        case .connectionsPerUser: maximum = limits.connectionsPerUser
        case .bufferedBytes: maximum = limits.bufferedBytes
        case .bufferedBytesPerUser: maximum = limits.bufferedBytesPerUser
        }
        var buffer = channel.allocator.buffer(capacity: 160)
        let error = VarlinkError.other(
            name: ReachabilityInterface.Error.connectionLimitReached,
            parameters: ["limit": .string(limit.rawValue), "maximum": .integer(maximum)]
        )
        _ = try? buffer.writeVarlinkMessage(AnyVarlinkReply(error: error))
        try? channel.pipeline.syncOperations.addHandler(DiscardingHandler())
        channel.writeAndFlush(buffer).whenComplete { _ in channel.close(mode: .output, promise: nil) }
        channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
    }

    /// The connecting process's uid (`SO_PEERCRED`); `UInt32.max` if the kernel does not say.
    private static func peerUID(of channel: any Channel) -> EventLoopFuture<UInt32> {
        guard let provider = channel as? any SocketOptionProvider else { return channel.eventLoop.makeSucceededFuture(.max) }
        let credentials: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: .socket, name: NIOBSDSocket.Option(rawValue: PeerCredentials.socketOption)
        )
        return credentials.map { $0.uid }.recover { _ in UInt32.max }
    }

    /// Binds and listens at `socketPath` itself and hands the socket to NIO: a socket NIO
    /// bound it would unlink by path when it closes, even if the file there is another
    /// daemon's by then; this way only `shutdown()` removes it, after checking it is ours.
    private func bind() throws(VarlinkServerError) -> any Channel {
        let descriptor: SystemPackage.FileDescriptor
        do {
            descriptor = try UnixSocket.listen(at: socketPath, backlog: 128)
        } catch {
            throw .bindFailed(socketPath: socketPath, reason: "bind: \(error) (errno \(error.rawValue))")
        }
        func abandon() {
            try? descriptor.close()
            try? SocketFile.remove(socketPath)
        }
        do {
            try SocketFile.setMode(socketPath, socketMode)
        } catch {
            abandon()
            throw error
        }
        do {
            return try bootstrap().withBoundSocket(descriptor.rawValue).wait()
        } catch {
            abandon()
            throw .bindFailed(socketPath: socketPath, reason: Self.describe(error))
        }
    }

    private func adopt(_ channel: any Channel, socketFile: FileIdentity?) {
        let core = self.core
        try? eventLoop.submit { core.value.adopt(channel, socketFile: socketFile) }.wait()
    }

    /// What connecting to a socket file says about the server behind it.
    private enum Probe {
        /// A server accepted the connection.
        case answering
        /// Nothing listens there any more: a stale file, safe to replace.
        case refused
        /// Anything else (a full backlog answers EAGAIN, a slow one times out): cannot tell.
        case unknown(String)
    }

    private static func probe(_ path: String, on eventLoop: any EventLoop) -> Probe {
        do {
            let channel = try ClientBootstrap(group: eventLoop)
                .connectTimeout(.seconds(2))
                .connect(unixDomainSocketPath: path).wait()
            try? channel.close().wait()
            return .answering
        } catch {
            if let code = Self.errno(of: error), code == .connectionRefused { return .refused }
            return .unknown(describe(error))
        }
    }

    /// The errno behind a NIO error, if there is one.
    private static func errno(of error: any Error) -> Errno? {
        if let error = error as? IOError { return Errno(rawValue: error.errnoCode) }
        if let error = error as? NIOConnectionError { return error.connectionErrors.first.flatMap { errno(of: $0.error) } }
        return nil
    }

    /// A NIO error in one clean line: the failed call and the errno's text.
    package static func describe(_ error: any Error) -> String {
        if let error = error as? IOError {
            let call = error.description.prefix { $0 != "(" }
            return "\(call): \(Errno(rawValue: error.errnoCode)) (errno \(error.errnoCode))"
        }
        if let error = error as? NIOConnectionError, let first = error.connectionErrors.first { return describe(first.error) }
        return "\(error)"
    }
}

/// Stops accepting for a while after `accept(2)` fails (descriptors exhausted, mostly), so
/// a full descriptor table costs no CPU.
///
/// NIO's `AcceptBackoffHandler` is not enough: it only delays the next read request, and
/// NIO keeps a listening socket registered for readability while a read is pending, so at
/// EMFILE the loop still spins (docs/performance.md, "A full descriptor table"). Turning
/// `autoRead` off takes the socket out of epoll; it is turned back on after the pause.
final class AcceptPauseHandler: ChannelInboundHandler {
    package typealias InboundIn = any Channel

    private let pause: (IOError) -> TimeAmount
    private var resumption: Scheduled<Void>?

    /// `pause` says how long to wait after an accept error (and may log it).
    init(pause: @escaping (IOError) -> TimeAmount) {
        self.pause = pause
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? IOError else {
            context.fireErrorCaught(error)
            return
        }
        let delay = pause(error)
        guard resumption == nil, let options = context.channel.syncOptions else { return }
        try? options.setOption(.autoRead, value: false)
        resumption = context.eventLoop.assumeIsolated().scheduleTask(in: delay) { [self] in
            resumption = nil
            try? context.channel.syncOptions?.setOption(.autoRead, value: true)
        }
    }

    package func channelInactive(context: ChannelHandlerContext) {
        resumption?.cancel()
        resumption = nil
        context.fireChannelInactive()
    }
}

/// Reads and drops whatever a refused client sends, until it hangs up.
final class DiscardingHandler: ChannelInboundHandler {
    package typealias InboundIn = ByteBuffer

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
