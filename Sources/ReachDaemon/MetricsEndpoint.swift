import Glibc
import LinuxSystem
import NIOCore
import NIOHTTP1
import NIOPosix
import ReachabilityCore
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

/// The optional HTTP endpoint (`[metrics] listen`): `GET /metrics` only, on the event loop
/// that owns the state, one request per connection. Bounded like the Varlink socket: at
/// most `maximumConnections` at once (more are closed at once), and each closed after
/// `connectionDeadline` whatever the client does.
enum MetricsEndpoint {
    /// Connections served at once.
    static let maximumConnections = 8
    /// How long one connection may stay open.
    static let connectionDeadline = TimeAmount.seconds(10)

    /// Binds `address` and serves; the channel is the listening socket (close it to stop).
    static func start(
        _ address: MetricsListenAddress, eventLoop: any EventLoop, core: NIOLoopBoundBox<ServerCore>
    ) throws -> any Channel {
        let bootstrap = ServerBootstrap(group: eventLoop)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    guard core.value.metricsConnections < maximumConnections else {
                        channel.close(promise: nil)
                        core.value.refuse(nil, "refused a metrics connection: \(maximumConnections) are open", kind: "metrics connections")
                        return
                    }
                    core.value.metricsConnections += 1
                    let deadline = channel.eventLoop.scheduleTask(in: connectionDeadline) { channel.close(promise: nil) }
                    channel.closeFuture.whenComplete { _ in
                        core.value.metricsConnections -= 1
                        deadline.cancel()
                    }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(MetricsHTTPHandler { core.value.metricsText() })
                }
            }
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
}

/// Answers one request and closes the connection.
private final class MetricsHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let render: () -> String
    private var request: MetricsRequest?

    init(render: @escaping () -> String) {
        self.render = render
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
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
enum MetricsTextfile {
    /// The file name the collector reads (it reads `*.prom`; the temporary file is not one).
    static let name = "reachd.prom"

    /// Writes `text` to `directory/reachd.prom` atomically.
    static func write(_ text: String, to directory: String) throws(Errno) {
        try FileSystem.replace(directory + "/" + name, contents: Array(text.utf8))
    }
}
