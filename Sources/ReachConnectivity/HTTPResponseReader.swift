import NIOCore
import NIOHTTP1
import ReachabilityCore

/// Sends the request once connected and reads the answer: status, headers and up to
/// `HTTPFetcher.bodyLimit` bytes of body; redirects are reported, never followed.
///
/// What it keeps from a server it does not trust is bounded: at most `maximumHeaders`
/// headers, each value at most `maximumHeaderValueLength` bytes (a longer one, `Location`
/// included, is dropped, never cut), and at most `maximumInformationalHeads` 1xx heads
/// before the real one: a server sending `100 Continue` forever gets a `.failed` outcome
/// after a few, instead of the whole probe timeout of parsing.
package final class ResponseReader: ChannelInboundHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPClientResponsePart
    package typealias OutboundOut = HTTPClientRequestPart

    /// The most 1xx heads (other than 101) read before the answer's; one more fails the exchange.
    static let maximumInformationalHeads = 4
    /// The most header fields kept from one answer; later ones are ignored.
    package static let maximumHeaders = 64
    /// The longest header value kept, in bytes: `WebURI.maximumLength`, so that every
    /// `Location` kept can still pass `WebURI`.
    package static let maximumHeaderValueLength = WebURI.maximumLength

    private let head: HTTPRequestHead
    private let promise: EventLoopPromise<HTTPFetcher.Result>
    private let refusal: (@Sendable () -> String?)?
    private var response: ProbeResponse?
    private var body: [UInt8] = []
    private var informationalHeads = 0

    init(head: HTTPRequestHead, promise: EventLoopPromise<HTTPFetcher.Result>, refusal: (@Sendable () -> String?)?) {
        self.head = head
        self.promise = promise
        self.refusal = refusal
    }

    /// Adds what one exchange needs behind the TLS handler, if any: NIO's request encoder and
    /// response decoder (forwarding 1xx heads, so that this reader can count them) and a
    /// reader completing `promise`.
    package static func addHandlers(
        to pipeline: ChannelPipeline.SynchronousOperations, head: HTTPRequestHead,
        promise: EventLoopPromise<HTTPFetcher.Result>, refusal: (@Sendable () -> String?)?
    ) throws {
        let decoder = HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .forward)
        try pipeline.addHandler(HTTPRequestEncoder())
        try pipeline.addHandler(ByteToMessageHandler(decoder))
        try pipeline.addHandler(NIOHTTPRequestHeadersValidator())
        try pipeline.addHandler(ResponseReader(head: head, promise: promise, refusal: refusal))
    }

    package func channelActive(context: ChannelHandlerContext) {
        // With TLS in front, these wait in its buffer until the handshake is done.
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let .head(head):
            let status = Int(head.status.code)
            if (100..<200).contains(status) && status != 101 {
                informationalHeads += 1
                if informationalHeads > Self.maximumInformationalHeads {
                    fail(context: context, reason: "more than \(Self.maximumInformationalHeads) informational (1xx) answers")
                }
                return
            }
            guard response == nil else { return }  // a second head after the answer's: not HTTP/1.1
            let headers = Self.keptHeaders(head.headers)
            response = ProbeResponse(status: status, location: headers["location"], headers: headers)
        case var .body(buffer):
            let room = HTTPFetcher.bodyLimit - body.count
            body += buffer.readBytes(length: min(room, buffer.readableBytes)) ?? []
            if body.count >= HTTPFetcher.bodyLimit { finish(context: context) }
        case .end:
            finish(context: context)
        }
    }

    /// The headers kept: names lowercased, the first `maximumHeaders` fields, values no
    /// longer than `maximumHeaderValueLength`; a repeated name keeps its last value.
    static func keptHeaders(_ fields: HTTPHeaders) -> [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in fields.prefix(maximumHeaders) where value.utf8.count <= maximumHeaderValueLength {
            headers[name.lowercased()] = value
        }
        return headers
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let reason = refusal?() {
            promise.succeed(HTTPFetcher.Result(outcome: .untrusted(reason)))
        } else {
            promise.succeed(HTTPFetcher.Result(outcome: .failed(HTTPFetcher.describe(error))))
        }
        context.close(promise: nil)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        if let reason = refusal?() {
            promise.succeed(HTTPFetcher.Result(outcome: .untrusted(reason)))
        } else if response != nil {
            finish(context: context)
        } else {
            promise.succeed(HTTPFetcher.Result(outcome: .failed("connection closed without an answer")))
        }
        context.fireChannelInactive()
    }

    private func fail(context: ChannelHandlerContext, reason: String) {
        promise.succeed(HTTPFetcher.Result(outcome: .failed(reason)))
        context.close(promise: nil)
    }

    private func finish(context: ChannelHandlerContext) {
        guard var response else { return }
        response.bodyLength = body.count
        response.bodyPrefix = String(decoding: body.prefix(256), as: UTF8.self)
        promise.succeed(HTTPFetcher.Result(outcome: .response(response), body: body))
        context.close(promise: nil)
    }
}
