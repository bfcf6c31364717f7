import ReachConnectivity
import NIOCore
import NIOEmbedded
import NIOHTTP1
import ReachabilityCore

extension ResponseReader {
    /// One probe exchange on an `EmbeddedChannel`: the request the handlers wrote, and the
    /// outcome once the server sent `answer` in `chunk`-byte reads and closed (nil: it never
    /// ended). The fuzz target and the reader's tests drive the handlers through it.
    package static func embeddedExchange(_ answer: [UInt8], chunk: Int) throws -> (request: String?, result: HTTPFetcher.Result?) {
        let channel = EmbeddedChannel()
        let promise = channel.eventLoop.makePromise(of: HTTPFetcher.Result.self)
        var result: HTTPFetcher.Result?
        promise.futureResult.assumeIsolated().whenSuccess { result = $0 }
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/generate_204")
        head.headers.add(name: "Host", value: "probe.test")
        try addHandlers(to: channel.pipeline.syncOperations, head: head, promise: promise, refusal: nil)
        try channel.connect(to: SocketAddress(ipAddress: "192.0.2.1", port: 80)).wait()
        let request = try channel.readOutbound(as: ByteBuffer.self).map { String(buffer: $0) }
        var offset = 0
        while offset < answer.count, channel.isActive {
            let piece = answer[offset..<min(offset + chunk, answer.count)]
            offset += piece.count
            _ = try? channel.writeInbound(ByteBuffer(bytes: piece))
        }
        _ = try? channel.finish(acceptAlreadyClosed: true)
        let ended = result
        if ended == nil { promise.succeed(HTTPFetcher.Result(outcome: .timedOut)) }  // no leaked promise
        return (request, ended)
    }
}
