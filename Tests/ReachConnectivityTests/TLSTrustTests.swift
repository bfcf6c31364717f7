import Crypto
import Foundation
import NIOCore
import NIOEmbedded
import NIOSSL
@testable import ReachConfiguration
@testable import ReachConnectivity
import X509
import TestSupport
import XCTest


/// The NIOSSL glue, without a network: a client and a server `EmbeddedChannel` handing each
/// other their bytes (as swift-nio-ssl's own tests do), the server holding a self-signed
/// certificate made here. The certificates are judged through the offload the prober passes
/// (its resolver's threads), played here by the test.
extension TrustEvaluationTests {
    func testHandshakeIsDecidedByTheEvaluator() throws {
        let key = P256.Signing.PrivateKey()
        // Valid around the real clock: the handler evaluates at Date().
        let server = try TrustFixtures.make("self.example", key: key, dns: ["self.example"], ips: [[127, 0, 0, 1]],
                                           from: Date() - 3600, until: Date() + 3600)
        let other = try TrustFixtures.make("other.example", dns: ["other.example"])

        let pinned = try TLSTrust(evaluator: TrustEvaluator(policy: TrustPolicy(pinning: .publicKey, publicKeyPins: [server.pin])))
        let trusted = try handshake(trust: pinned, host: "self.example", server: server)
        XCTAssertEqual(trusted.verdict, .trusted)
        XCTAssertNil(trusted.clientError)
        XCTAssertEqual(trusted.delivered, "GET / HTTP/1.1\r\n")

        // An IP literal: no SNI (NIOSSL refuses one), the iPAddress SAN matches.
        let byAddress = try handshake(trust: pinned, host: "127.0.0.1", server: server)
        XCTAssertEqual(byAddress.verdict, .trusted)
        XCTAssertEqual(byAddress.delivered, "GET / HTTP/1.1\r\n")

        let misnamed = try handshake(trust: pinned, host: "probe.example", server: server)
        XCTAssertEqual(misnamed.verdict, .refused(reason: "name probe.example does not match the certificate (DNS: self.example; IP: 127.0.0.1)"))
        XCTAssertNil(misnamed.delivered)

        let wrongPin = try TLSTrust(evaluator: TrustEvaluator(policy: TrustPolicy(pinning: .publicKey, publicKeyPins: [other.pin])))
        let refused = try handshake(trust: wrongPin, host: "self.example", server: server)
        XCTAssertEqual(refused.verdict, .refused(reason: "public key not pinned"))
        XCTAssertNil(refused.delivered)
        // What the prober sees is NIOSSL's error, which does not say why: hence the recorder.
        guard let error = refused.clientError as? NIOSSLError, case .handshakeFailed = error else {
            return XCTFail("expected NIOSSLError.handshakeFailed, got \(String(describing: refused.clientError))")
        }
        XCTAssertEqual([trusted, byAddress, misnamed, refused].map(\.evaluations), [1, 1, 1, 1], "each handshake judged once, through the offload")
    }

    func testHandshakeWaitsForTheOffloadedVerdict() throws {
        let server = try TrustFixtures.make("self.example", dns: ["self.example"], from: Date() - 3600, until: Date() + 3600)
        let pinned = try TLSTrust(evaluator: TrustEvaluator(policy: TrustPolicy(pinning: .publicKey, publicKeyPins: [server.pin])))

        let later = try handshake(trust: pinned, host: "self.example", server: server, answer: .later)
        XCTAssertNil(later.verdictBeforeAnswer, "nothing judged on the loop")
        XCTAssertEqual(later.verdict, .trusted)
        XCTAssertNil(later.clientError)
        XCTAssertEqual(later.delivered, "GET / HTTP/1.1\r\n")

        let stopping = try handshake(trust: pinned, host: "self.example", server: server, answer: .failed)
        XCTAssertEqual(stopping.verdict, .refused(reason: "the certificates were not evaluated (reachd is stopping)"))
        XCTAssertNil(stopping.delivered)
    }

    /// How the test's offload answers: at once, after the handshake stalled waiting, or with a failure.
    private enum Answer {
        case inPlace, later, failed
    }

    private struct Handshake {
        var verdict: TrustVerdict?
        /// The verdict once the handshake stalled, before a `later` offload answered.
        var verdictBeforeAnswer: TrustVerdict?
        /// How many evaluations were handed to the offload.
        var evaluations = 0
        var clientError: (any Error)?
        /// What the server read after the handshake, if it finished.
        var delivered: String?
    }

    private func handshake(trust: TLSTrust, host: String, server made: MadeCertificate, answer: Answer = .inPlace) throws -> Handshake {
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: made.der, format: .der))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(made.key.pemRepresentation.utf8), format: .pem))
        )
        let server = EmbeddedChannel(handler: NIOSSLServerHandler(context: try NIOSSLContext(configuration: configuration)))
        let loop = EmbeddedEventLoop()
        var result = Handshake()
        var waiting: [(promise: EventLoopPromise<TrustVerdict>, evaluation: @Sendable () -> TrustVerdict)] = []
        let (handler, recorder) = try trust.makeHandler(host: host, offload: { evaluation in
            result.evaluations += 1
            let promise = loop.makePromise(of: TrustVerdict.self)
            switch answer {
            case .inPlace: promise.succeed(evaluation())
            case .later: waiting.append((promise, evaluation))
            case .failed: promise.fail(ChannelError.ioOnClosedChannel)
            }
            return promise.futureResult
        })
        let client = EmbeddedChannel(handler: handler, loop: loop)
        defer { close(client, server) }
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: 443)
        try server.connect(to: address).wait()
        try client.connect(to: address).wait()  // channelActive: the ClientHello
        result.clientError = shuttle(client, server)
        if answer == .later {
            result.verdictBeforeAnswer = recorder.verdict
            XCTAssertEqual(waiting.count, 1, "the handshake waits for one evaluation")
            for (promise, evaluation) in waiting { promise.succeed(evaluation()) }
            result.clientError = shuttle(client, server)
        }
        if result.clientError == nil {
            try client.writeOutbound(ByteBuffer(string: "GET / HTTP/1.1\r\n"))
            result.clientError = shuttle(client, server)
            result.delivered = try server.readInbound(as: ByteBuffer.self).map { String(buffer: $0) }
        }
        result.verdict = recorder.verdict
        return result
    }

    /// Closes both ends: NIOSSL's close waits for the peer's close_notify, or for its shutdown
    /// timeout, which an embedded loop reaches only when told the time has passed.
    private func close(_ client: EmbeddedChannel, _ server: EmbeddedChannel) {
        client.close(promise: nil)
        server.close(promise: nil)
        _ = shuttle(client, server)
        client.embeddedEventLoop.advanceTime(by: .hours(1))
        server.embeddedEventLoop.advanceTime(by: .hours(1))
        _ = try? client.finish(acceptAlreadyClosed: true)
        _ = try? server.finish(acceptAlreadyClosed: true)
    }

    /// Moves bytes both ways until neither side has more; the client's first error, if any.
    private func shuttle(_ client: EmbeddedChannel, _ server: EmbeddedChannel) -> (any Error)? {
        var clientError: (any Error)?
        var moved = true
        while moved {
            moved = false
            client.embeddedEventLoop.run()
            server.embeddedEventLoop.run()
            while let bytes = try? client.readOutbound(as: ByteBuffer.self) {
                moved = true
                _ = try? server.writeInbound(bytes)
            }
            while let bytes = try? server.readOutbound(as: ByteBuffer.self) {
                moved = true
                do { try client.writeInbound(bytes) } catch { clientError = clientError ?? error }
            }
        }
        do { try client.throwIfErrorCaught() } catch { clientError = clientError ?? error }
        return clientError
    }
}
