import FoundationEssentials
import NIOCore
import NIOSSL
import ReachabilityCore
import SwiftASN1
import Synchronization
import X509

/// TLS for the HTTPS probes under one trust policy: one `NIOSSLContext`, made here once,
/// and a client handler per connection whose verification is `TrustEvaluator`'s verdict.
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
    package func makeHandler(host: String) throws -> (handler: NIOSSLClientHandler, verdict: TrustVerdictRecorder) {
        let recorder = TrustVerdictRecorder()
        let evaluator = self.evaluator
        var bare = Substring(host)
        if bare.hasPrefix("["), bare.hasSuffix("]") { bare = bare.dropFirst().dropLast() }
        let serverName = IPAddress(bare) == nil ? String(host.hasSuffix(".") ? host.dropLast() : host[...]) : nil
        let handler = try NIOSSLClientHandler(context: context, serverHostname: serverName, customVerificationCallback: { presented, promise in
            let verdict: TrustVerdict
            do {
                let chain = try presented.map { try Certificate(derEncoded: $0.toDERBytes()) }
                verdict = evaluator.evaluate(chain: chain, host: host, now: Date())
            } catch {
                verdict = .refused(reason: "the server's certificate cannot be parsed: \(TrustEvaluation.shown(error))")
            }
            recorder.record(verdict)
            promise.succeed(verdict == .trusted ? .certificateVerified : .failed)
        })
        return (handler, recorder)
    }
}

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
    package func makeHandler(serverHostname: String) throws -> (handler: any ChannelHandler, refusal: @Sendable () -> String?) {
        let (handler, recorder) = try makeHandler(host: serverHostname)
        return (handler, {
            if case let .refused(reason)? = recorder.verdict { return reason }
            return nil
        })
    }
}
