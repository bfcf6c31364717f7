import FoundationEssentials
import NIOCore
import NIOSSL
import ReachabilityCore
import SwiftASN1
import Synchronization
import X509

/// TLS for the HTTPS probes under one trust policy: one `NIOSSLContext`, made here once,
/// and a client handler per connection whose verification is `TrustEvaluator`'s verdict
/// (swift-certificates' `Verifier` under the policy's anchors and pins).
package final class TLSTrust: Sendable {
    /// The resolved policy every handshake is judged by.
    package let evaluator: TrustEvaluator
    private let context: NIOSSLContext

    /// The context for `evaluator`'s policy: TLS 1.2 or later, BoringSSL's own verification
    /// replaced by the evaluator.
    package init(evaluator: TrustEvaluator) throws {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        // Still "verify the peer" (so the custom callback runs), but NIOSSL's own hostname
        // check after the handshake would overrule validatesDomainName: the evaluator checks names.
        configuration.certificateVerification = .noHostnameVerification
        // BoringSSL never consults roots once a custom callback decides: don't load the store twice.
        configuration.trustRoots = .certificates([])
        self.evaluator = evaluator
        self.context = try NIOSSLContext(configuration: configuration)
    }

    /// A handler for one connection to `host` (a name, or an IPv4/IPv6 literal, bracketed or
    /// not), and where its verdict will be: NIOSSL's handshake error does not carry the reason.
    /// SNI carries `host` unless it is an IP literal (RFC 6066: names only, no final dot).
    /// The certificates are judged by `offload`, off the event loop (reading the system store
    /// the first time, checking signatures), and the handshake goes on when it answers.
    package func makeHandler(host: String, offload: @escaping TrustOffload) throws -> (handler: NIOSSLClientHandler, verdict: TrustVerdictRecorder) {
        let recorder = TrustVerdictRecorder()
        let evaluator = self.evaluator
        var bare = Substring(host)
        if bare.hasPrefix("["), bare.hasSuffix("]") { bare = bare.dropFirst().dropLast() }
        let serverName = IPAddress(bare) == nil ? String(host.hasSuffix(".") ? host.dropLast() : host[...]) : nil
        let handler = try NIOSSLClientHandler(context: context, serverHostname: serverName, customVerificationCallback: { presented, promise in
            let judged: EventLoopFuture<TrustVerdict>
            do {
                let chain = try presented.map { try Certificate(derEncoded: $0.toDERBytes()) }
                judged = offload { evaluator.evaluate(chain: chain, host: host, now: Date()) }
            } catch {
                judged = promise.futureResult.eventLoop.makeSucceededFuture(
                    .refused(reason: "the server's certificate cannot be parsed: \(TrustEvaluation.shown(error))"))
            }
            judged.whenComplete { result in
                let verdict = (try? result.get()) ?? .refused(reason: "the certificates were not evaluated (reachd is stopping)")
                recorder.record(verdict)
                promise.succeed(verdict == .trusted ? .certificateVerified : .failed)
            }
        })
        return (handler, recorder)
    }
}

/// Runs one certificate evaluation off the event loop and answers on it (HTTPFetcher passes
/// its resolver's worker threads; tests may run it in place).
package typealias TrustOffload = (_ evaluation: @escaping @Sendable () -> TrustVerdict) -> EventLoopFuture<TrustVerdict>

/// The verdict of one handshake's certificate check, readable from any thread once the
/// handshake has finished (nil if the server never got as far as sending certificates).
package final class TrustVerdictRecorder: Sendable {
    private let recorded = Mutex<TrustVerdict?>(nil)

    /// An empty recorder.
    package init() {}

    /// The verdict, once the certificates were judged.
    package var verdict: TrustVerdict? { recorded.withLock { $0 } }

    /// Keeps `verdict` (the handler's callback calls this).
    func record(_ verdict: TrustVerdict) { recorded.withLock { $0 = verdict } }
}

extension TLSTrust: TLSHandshaking {
    /// The prober's view: the handler, and the refusal's reason once the handshake failed.
    package func makeHandler(serverHostname: String, offload: @escaping TrustOffload) throws -> (handler: any ChannelHandler, refusal: @Sendable () -> String?) {
        let (handler, recorder) = try makeHandler(host: serverHostname, offload: offload)
        return (handler, {
            if case let .refused(reason)? = recorder.verdict { return reason }
            return nil
        })
    }
}
