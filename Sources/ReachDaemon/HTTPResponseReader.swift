import NIOCore
import NIOHTTP1
import ReachabilityCore

/// Sends the request once connected and reads the answer: status, headers and up to
/// `HTTPFetcher.bodyLimit` bytes of body; redirects are reported, never followed.
final class ResponseReader: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let head: HTTPRequestHead
    private let promise: EventLoopPromise<HTTPFetcher.Result>
    private let refusal: (@Sendable () -> String?)?
    private var response: ProbeResponse?
    private var body: [UInt8] = []

    init(head: HTTPRequestHead, promise: EventLoopPromise<HTTPFetcher.Result>, refusal: (@Sendable () -> String?)?) {
        self.head = head
        self.promise = promise
        self.refusal = refusal
    }

    func channelActive(context: ChannelHandlerContext) {
        // With TLS in front, these wait in its buffer until the handshake is done.
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let .head(head):
            var headers: [String: String] = [:]
            for (name, value) in head.headers { headers[name.lowercased()] = value }
            response = ProbeResponse(status: Int(head.status.code), location: headers["location"], headers: headers)
        case var .body(buffer):
            let room = HTTPFetcher.bodyLimit - body.count
            body += buffer.readBytes(length: min(room, buffer.readableBytes)) ?? []
            if body.count >= HTTPFetcher.bodyLimit { finish(context: context) }
        case .end:
            finish(context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let reason = refusal?() {
            promise.succeed(HTTPFetcher.Result(outcome: .untrusted(reason)))
        } else {
            promise.succeed(HTTPFetcher.Result(outcome: .failed(HTTPFetcher.describe(error))))
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let reason = refusal?() {
            promise.succeed(HTTPFetcher.Result(outcome: .untrusted(reason)))
        } else if response != nil {
            finish(context: context)
        } else {
            promise.succeed(HTTPFetcher.Result(outcome: .failed("connection closed without an answer")))
        }
        context.fireChannelInactive()
    }

    private func finish(context: ChannelHandlerContext) {
        guard var response else { return }
        response.bodyLength = body.count
        response.bodyPrefix = String(decoding: body.prefix(256), as: UTF8.self)
        promise.succeed(HTTPFetcher.Result(outcome: .response(response), body: body))
        context.close(promise: nil)
    }
}
