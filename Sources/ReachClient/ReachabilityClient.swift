import NIOCore
import NIOPosix
import ReachabilityCore
import ReachProtocol

/// Talks to reachd over its Varlink socket: one connection per call or subscription.
///
/// ```swift
/// let client = ReachabilityClient()
/// let status = try await client.status()
/// for try await update in client.subscribe(filter: PathFilter(requiredInterfaceType: .wifi)) {
///     print(update.path.summary)
/// }
/// ```
public final class ReachabilityClient: Sendable {
    /// The socket this client connects to.
    public let socketPath: String
    /// How long to wait for the daemon's answer: a call's reply, a subscription's first reply.
    public let timeout: Duration
    private let group: any EventLoopGroup

    /// Creates a client; nothing connects until a call is made.
    ///
    /// - Parameters:
    ///   - socketPath: the daemon's socket; by default `SocketLocation.clientDefault()`.
    ///   - timeout: how long to wait for an answer (a stopped daemon still accepts
    ///     connections, so without it a call would wait forever), including the wait to
    ///     be accepted while the daemon's listen backlog is full; 10 s by default.
    ///   - eventLoopGroup: where connections run; by default NIO's shared singleton.
    public init(
        socketPath: String = SocketLocation.clientDefault(), timeout: Duration = .seconds(10),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.socketPath = socketPath
        self.timeout = timeout
        self.group = eventLoopGroup
    }

    /// The current system-wide path (`GetStatus`).
    public func status() async throws(ReachClientError) -> StatusReply {
        try await call(ReachabilityInterface.Method.getStatus, NoParameters(), returning: StatusReply.self)
    }

    /// The current path and the targets reachd's configuration watches (`GetStatus`).
    public func statusWithTargets() async throws(ReachClientError) -> StatusWithTargets {
        try await call(ReachabilityInterface.Method.getStatus, NoParameters(), returning: StatusWithTargets.self)
    }

    /// Every interface the daemon knows, ignored ones included (`ListInterfaces`).
    public func interfaces() async throws(ReachClientError) -> [InterfaceDescription] {
        try await call(ReachabilityInterface.Method.listInterfaces, NoParameters(), returning: ListInterfacesReply.self).interfaces
    }

    /// The daemon's vendor, product, version and interfaces (`org.varlink.service.GetInfo`).
    public func info() async throws(ReachClientError) -> ServiceInfo {
        try await call(VarlinkService.Method.getInfo, NoParameters(), returning: ServiceInfo.self)
    }

    /// Whether this host can reach `target` (`CheckTarget`), as this process's user would:
    /// the name resolved by reachd, each address looked up with this user's routing rules
    /// (a scoped link-local one out of its interface).
    public func checkTarget(_ target: Target) async throws(ReachClientError) -> TargetReply {
        try await call(ReachabilityInterface.Method.checkTarget, TargetParameters(target), returning: TargetReply.self)
    }

    /// Runs a connectivity check now (`CheckConnectivity`) on every interface probes run
    /// over, or only `interface`, and returns the interfaces once it is done. Errors:
    /// `.remoteError` named `io.reachd.Reachability.ProbingDisabled` when reachd has nothing
    /// configured to check, `NoSuchInterface`, `NothingToProbe` (no interface, or not the
    /// one named, carries a usable route), or `LimitReached` (6 per minute per user).
    public func checkConnectivity(interface: String? = nil) async throws(ReachClientError) -> [InterfaceDescription] {
        try await call(ReachabilityInterface.Method.checkConnectivity, ConnectivityCheckParameters(interface: interface),
                       returning: ListInterfacesReply.self).interfaces
    }

    /// reachd's metrics in Prometheus' text exposition format (`GetMetrics`).
    public func metrics() async throws(ReachClientError) -> String {
        try await call(ReachabilityInterface.Method.getMetrics, NoParameters(), returning: MetricsReply.self).text
    }

    /// Asks reachd to re-read its configuration file (`io.systemd.service.Reload`) and
    /// returns once it is applied. Only root and reachd's own user may: others get
    /// `.remoteError` with `VarlinkError.permissionDenied`; a configuration reachd refuses
    /// is `.remoteError` named `io.reachd.Reachability.ReloadRefused`, with the reason.
    public func reload() async throws(ReachClientError) {
        _ = try await call(SystemdServiceInterface.Method.reload, NoParameters(), returning: NoParameters.self)
    }

    /// The current path at once, then one element per change as seen through `filter`.
    ///
    /// A consumer that falls behind gets the newest update, whose `changes` include those
    /// of the updates it skipped. The stream ends with an error when the connection fails
    /// or the daemon goes away; cancelling the consuming task (or dropping the sequence)
    /// closes the connection.
    public func subscribe(filter: PathFilter = .none) -> StatusUpdates {
        stream(ReachabilityInterface.Method.subscribe, SubscribeParameters(filter: filter))
    }

    /// `target`'s answer at once, then one element per change of it (`SubscribeTarget`), as
    /// this process's user would reach it. reachd looks its addresses up with every change
    /// of the kernel's state and resolves a name again when the path changes. A consumer
    /// that falls behind gets the newest answer.
    public func subscribe(target: Target) -> TargetUpdates {
        stream(ReachabilityInterface.Method.subscribeTarget, TargetParameters(target))
    }

    /// One `more` call and its stream of replies.
    private func stream<Parameters: Codable & Sendable, Reply: Coalescible & Codable & Sendable>(
        _ method: String, _ parameters: Parameters
    ) -> Updates<Reply> {
        let stream = SubscriptionStream<Reply>(socketPath: socketPath)
        let socketPath = self.socketPath
        // Weak: when the consumer drops the sequence, the stream goes and cancels this task.
        let task = Task { [self, weak stream] in
            do {
                let channel = try await connect()
                try await channel.executeThenClose { inbound, outbound in
                    try await outbound.write(try Self.frame(VarlinkCall(method: method, parameters: parameters, more: true)))
                    for try await message in inbound {
                        let reply = try Self.decodeReply(message, as: Reply.self, socketPath: socketPath)
                        guard let stream else { return }
                        stream.offer(reply.parameters)
                        if !reply.continues { break }
                    }
                }
                // A subscription never ends on its own: the daemon went away, unless we were cancelled.
                stream?.finish(Task.isCancelled ? nil : .connectionClosed(socketPath: socketPath))
            } catch {
                stream?.finish(Task.isCancelled ? nil : ReachClientError(error, socketPath: socketPath))
            }
        }
        stream.onStop { task.cancel() }
        return Updates(stream: stream)
    }

    // MARK: Internals

    /// One call and its single reply. Internal so tests can send what the API never does.
    func call<Parameters: Codable & Sendable, Reply: Codable & Sendable>(
        _ method: String, _ parameters: Parameters, returning: Reply.Type
    ) async throws(ReachClientError) -> Reply {
        let socketPath = self.socketPath
        do {
            let channel = try await connect()
            return try await channel.executeThenClose { inbound, outbound in
                try await outbound.write(try Self.frame(VarlinkCall(method: method, parameters: parameters)))
                for try await message in inbound {
                    return try Self.decodeReply(message, as: Reply.self, socketPath: socketPath).parameters
                }
                throw ReachClientError.connectionClosed(socketPath: socketPath)
            }
        } catch {
            throw ReachClientError(error, socketPath: socketPath)
        }
    }

    /// Connects, waiting while the daemon's listen backlog is full.
    ///
    /// A non-blocking connect to a Unix socket whose backlog is full fails with EAGAIN
    /// where a blocking one would wait to be accepted: a burst of clients, not a missing
    /// daemon. So the connect is tried again (5 ms apart, doubling up to 100 ms) until
    /// `timeout`; a backlog still full by then is a daemon that does not accept (stopped
    /// or stuck), reported as `.timedOut`.
    private func connect() async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        let deadline = ContinuousClock.now + timeout
        var pause = Duration.milliseconds(5)
        while true {
            do {
                return try await connectOnce()
            } catch where Self.isBacklogFull(error) {
                // The whole timeout is waited out: the last pause is cut to what is left.
                let left = deadline - ContinuousClock.now
                guard left > .zero else { throw ReachClientError.timedOut(socketPath: socketPath, after: timeout) }
                try await Task.sleep(for: min(pause, left))
                pause = min(pause * 2, .milliseconds(100))
            }
        }
    }

    /// Whether a connect failed because the listener's backlog is full (EAGAIN).
    static func isBacklogFull(_ error: any Error) -> Bool {
        switch error {
        case let error as IOError: error.errnoCode == EAGAIN
        case let error as NIOConnectionError: error.connectionErrors.contains { isBacklogFull($0.error) }
        default: false
        }
    }

    private func connectOnce() async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        let (socketPath, timeout) = (self.socketPath, self.timeout)
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        return try await ClientBootstrap(group: group)
            .connectTimeout(.nanoseconds(nanoseconds))
            .connect(unixDomainSocketPath: socketPath) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        // Replies are not bounded like requests: a host with hundreds of
                        // interfaces answers ListInterfaces with hundreds of KiB.
                        ByteToMessageHandler(VarlinkFrameDecoder(maximumMessageSize: VarlinkFraming.maximumReplySize)),
                        FirstReplyDeadline(timeout: .nanoseconds(nanoseconds), error: .timedOut(socketPath: socketPath, after: timeout)),
                    ])
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
    }

    private static func frame(_ call: some Encodable) throws -> ByteBuffer {
        var buffer = ByteBuffer()
        try buffer.writeVarlinkMessage(call)
        return buffer
    }

    /// Envelope fields, read first to tell an error reply from a success.
    private struct ReplyHeader: Decodable {
        var error: String?
        var continues: Bool?
    }

    private static func decodeReply<Reply: Codable & Sendable>(
        _ message: ByteBuffer, as type: Reply.Type, socketPath: String
    ) throws -> (parameters: Reply, continues: Bool) {
        let bytes = message.readableBytesView
        let header = try VarlinkCoding.decode(ReplyHeader.self, from: bytes)
        if let name = header.error {
            let reply = try VarlinkCoding.decode(AnyVarlinkReply.self, from: bytes)
            throw ReachClientError.remoteError(socketPath: socketPath, name: name, parameters: reply.parameters ?? [:])
        }
        let envelope = try VarlinkCoding.decode(VarlinkReply<Reply>.self, from: bytes)
        guard let parameters = envelope.parameters else {
            throw ReachClientError.protocolError(socketPath: socketPath, message: "reply without parameters")
        }
        return (parameters, header.continues ?? false)
    }
}

/// Fails the connection with `error` unless a first message arrives within `timeout`.
private final class FirstReplyDeadline: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let timeout: TimeAmount
    private let error: ReachClientError
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount, error: ReachClientError) {
        self.timeout = timeout
        self.error = error
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let error = self.error
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            context.fireErrorCaught(error)
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelRead(data)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
    }
}
