import Glibc
import LinuxSystem
import NIOCore
import NIOHTTP1
import NIOPosix
import ReachabilityCore
import ReachConfiguration
import SystemPackage

/// What the metrics endpoint answers to a request line. Pure.
enum MetricsRequest: Equatable {
    /// `GET /metrics`, or `HEAD` (headers only).
    case metrics(headOnly: Bool)
    /// Another path: 404.
    case notFound
    /// Another method: 405, `Allow: GET, HEAD`.
    case methodNotAllowed

    init(method: HTTPMethod, uri: String) {
        let path = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? uri
        switch (method, path) {
        case (.GET, "/metrics"): self = .metrics(headOnly: false)
        case (.HEAD, "/metrics"): self = .metrics(headOnly: true)
        case (.GET, _), (.HEAD, _): self = .notFound
        default: self = .methodNotAllowed
        }
    }
}

/// What the metrics endpoint needs from the owner of the published state, on its loop.
/// Its type crosses to the loop's closures (`SendableMetatype`); the instance stays boxed there.
package protocol MetricsSource: AnyObject, SendableMetatype {
    /// The exposition of what is published now.
    func metricsText() -> String
    /// Logs `what` (rate-limited per reason) and counts that a metrics client was refused or cut off.
    func refuseMetricsClient(_ what: String, reason: RefusalReason)
}

/// The optional HTTP endpoint (`[metrics] listen`): `GET /metrics` only, on the event loop
/// that owns the state, one request per connection. Bounded like the Varlink socket
/// (`MetricsAdmission` decides): connections in all and per peer (uid or address) are
/// capped; at a cap a new connection evicts the oldest still sending its request head, or
/// is closed at once if every one is being answered. The request head must arrive within
/// `headDeadline`, the connection ends after `connectionDeadline`, and a client may send
/// `requestBytes`.
package enum MetricsEndpoint {
    /// Binds `address` and serves; the channel is the listening socket (close it to stop).
    package static func start<Source: MetricsSource>(
        _ address: MetricsListenAddress, eventLoop: any EventLoop, core: NIOLoopBoundBox<Source>,
        limits: MetricsAdmission.Limits = MetricsAdmission.Limits()
    ) throws -> any Channel {
        let books = NIOLoopBoundBox.makeBoxSendingValue(MetricsConnections(limits: limits), eventLoop: eventLoop)
        let bootstrap = ServerBootstrap(group: eventLoop)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // One accept per turn of the loop, so a connection is read before more than one newer
            // one is admitted: a burst of slow ones cannot make it the oldest and evict it unread.
            .serverChannelOption(.maxMessagesPerRead, value: 1)
            .childChannelInitializer { channel in
                peer(of: channel).flatMapThrowing { peer in
                    let connection: MetricsAdmission.Connection
                    switch books.value.admission.admit(peer) {
                    case let .refuse(refusal):
                        channel.close(promise: nil)
                        core.value.refuseMetricsClient("refused a metrics connection of \(peer): limit on \(refusal.rawValue) reached", reason: RefusalReason(refusal))
                        return
                    case let .admit(admitted):
                        connection = admitted
                    case let .admitEvicting(admitted, eviction):
                        connection = admitted
                        // Counted under the cap that forced it: the label names the limit, as every other one does.
                        books.value.channels.removeValue(forKey: eviction.connection)?.close(promise: nil)
                        core.value.refuseMetricsClient(
                            "closed a metrics connection of \(eviction.peer) still sending its request head, to admit one of \(peer): limit on \(eviction.limit.rawValue) reached",
                            reason: RefusalReason(eviction.limit)
                        )
                    }
                    books.value.channels[connection] = channel
                    channel.closeFuture.whenComplete { _ in
                        books.value.admission.release(connection)
                        books.value.channels[connection] = nil
                    }
                    let refuse: (String, RefusalReason) -> Void = { what, reason in
                        core.value.refuseMetricsClient("closed a metrics connection of \(peer): \(what)", reason: reason)
                    }
                    let requestArrived = { books.value.admission.requestComplete(connection) }
                    try channel.pipeline.syncOperations.addHandler(MetricsRequestGuard(limits: limits, refuse: refuse, requestArrived: requestArrived))
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(MetricsHTTPHandler { core.value.metricsText() })
                }
            }
            .childChannelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 1024, maximum: 16384))
        switch address {
        case let .tcp(ip, port):
            return try bootstrap.bind(host: ip.description, port: port).wait()
        case let .unix(path):
            let channel = try bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).wait()
            // Anyone may read the metrics, as anyone may call GetMetrics.
            try FileSystem.setPermissions(path, [.ownerReadWrite, .groupReadWrite, .otherReadWrite])
            return channel
        }
    }

    /// Who is connecting: the uid on a Unix socket (`SO_PEERCRED`), else the address.
    private static func peer(of channel: any Channel) -> EventLoopFuture<MetricsAdmission.Peer> {
        if let remote = channel.remoteAddress, remote.protocol != .unix {
            return channel.eventLoop.makeSucceededFuture(remote.ipAddress.map { .address($0) } ?? .unknown)
        }
        guard let provider = channel as? any SocketOptionProvider else { return channel.eventLoop.makeSucceededFuture(.unknown) }
        let credentials: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: .socket, name: NIOBSDSocket.Option(rawValue: PeerCredentials.socketOption)
        )
        return credentials.map { .user($0.uid) }.recover { _ in .unknown }
    }
}

/// The endpoint's books and the channel of each connection in them (to close an evicted
/// one). On the event loop only.
private struct MetricsConnections {
    var admission: MetricsAdmission
    var channels: [MetricsAdmission.Connection: any Channel] = [:]

    init(limits: MetricsAdmission.Limits) {
        admission = MetricsAdmission(limits: limits)
    }
}

/// Holds a metrics connection to its limits, in front of the HTTP decoder: the request
/// head within `headDeadline` (a slow writer cannot hold a slot), the whole connection
/// within `connectionDeadline`, and at most `requestBytes` received. Says when the request
/// has arrived whole (the response starts), so the connection is no longer evictable.
private final class MetricsRequestGuard: ChannelDuplexHandler {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer
    package typealias OutboundIn = ByteBuffer
    package typealias OutboundOut = ByteBuffer

    private let limits: MetricsAdmission.Limits
    private let refuse: (String, RefusalReason) -> Void
    private let requestArrived: () -> Void
    private var received = 0
    private var headDeadline: Scheduled<Void>?
    private var connectionDeadline: Scheduled<Void>?

    init(limits: MetricsAdmission.Limits, refuse: @escaping (String, RefusalReason) -> Void, requestArrived: @escaping () -> Void) {
        self.limits = limits
        self.refuse = refuse
        self.requestArrived = requestArrived
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        let loop = context.eventLoop.assumeIsolated()
        headDeadline = loop.scheduleTask(in: TimeAmount(limits.headDeadline)) { [self] in
            refuse("no request within \(limits.headDeadline)", .metricsRequestDeadline)
            context.close(promise: nil)
        }
        connectionDeadline = loop.scheduleTask(in: TimeAmount(limits.connectionDeadline)) { [self] in
            refuse("still open after \(limits.connectionDeadline)", .metricsConnectionDeadline)
            context.close(promise: nil)
        }
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received += unwrapInboundIn(data).readableBytes
        guard received <= limits.requestBytes else {
            refuse("more than \(limits.requestBytes) bytes of request", .metricsRequestSize)
            context.close(promise: nil)
            return
        }
        context.fireChannelRead(data)
    }

    /// The response starts: the request head has arrived whole.
    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if let deadline = headDeadline {
            deadline.cancel()
            headDeadline = nil
            requestArrived()
        }
        context.write(data, promise: promise)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        headDeadline?.cancel()
        connectionDeadline?.cancel()
        (headDeadline, connectionDeadline) = (nil, nil)
        context.fireChannelInactive()
    }
}

/// Answers one request and closes the connection.
private final class MetricsHTTPHandler: ChannelInboundHandler {
    package typealias InboundIn = HTTPServerRequestPart
    package typealias OutboundOut = HTTPServerResponsePart

    private let render: () -> String
    private var request: MetricsRequest?

    init(render: @escaping () -> String) {
        self.render = render
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let .head(head):
            request = MetricsRequest(method: head.method, uri: head.uri)
        case .body:
            break  // no request here has a body; what comes is dropped
        case .end:
            guard let request else { return }
            self.request = nil
            respond(to: request, context: context)
        }
    }

    private func respond(to request: MetricsRequest, context: ChannelHandlerContext) {
        var headers = HTTPHeaders([("Connection", "close")])
        let status: HTTPResponseStatus
        var body = context.channel.allocator.buffer(capacity: 0)
        var sendBody = true
        switch request {
        case let .metrics(headOnly):
            status = .ok
            headers.add(name: "Content-Type", value: "text/plain; version=0.0.4; charset=utf-8")
            body.writeString(render())
            sendBody = !headOnly
        case .notFound:
            status = .notFound
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
            body.writeString("reachd serves /metrics only\n")
        case .methodNotAllowed:
            status = .methodNotAllowed
            headers.add(name: "Allow", value: "GET, HEAD")
        }
        headers.add(name: "Content-Length", value: "\(body.readableBytes)")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        if sendBody, body.readableBytes > 0 { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}

/// node_exporter's textfile collector: `reachd.prom` in a directory, replaced whole.
package enum MetricsTextfile {
    /// The file name the collector reads (it reads `*.prom`; the temporary file is not one).
    package static let name = "reachd.prom"

    /// Writes `text` to `directory/reachd.prom` atomically.
    package static func write(_ text: String, to directory: String) throws(Errno) {
        try FileSystem.replace(directory + "/" + name, contents: Array(text.utf8))
    }
}
