import Crypto
import Foundation
@testable import ReachConfiguration
@testable import ReachConnectivity
import SwiftASN1
import TestSupport
import X509
import XCTest


/// The HTTPS trust verdict (swift-certificates' `Verifier` under reachd's anchors, pins and
/// rules): every pinning mode with and without invalid certificates and domain validation,
/// on chains made here; the certificate files; the system store.
final class TrustEvaluationTests: XCTestCase {
    private enum Expected {
        case trusted
        /// Refused, the reason containing this.
        case refused(String)
    }

    private struct Row {
        let name: String
        let chain: [MadeCertificate]
        var host = "probe.example"
        let policy: TrustPolicy
        var anchors: [MadeCertificate] = []
        let expected: Expected
    }

    private func none(validatesDomainName: Bool = true, allowInvalid: Bool = false) throws -> TrustPolicy {
        try TrustPolicy(validatesDomainName: validatesDomainName, allowInvalidCertificates: allowInvalid)
    }

    private func certificate(validatesDomainName: Bool = true, allowInvalid: Bool = false) throws -> TrustPolicy {
        try TrustPolicy(pinning: .certificate, pinnedCertificates: ["pinned.pem"],
                        validatesDomainName: validatesDomainName, allowInvalidCertificates: allowInvalid)
    }

    private func publicKey(_ pinned: MadeCertificate..., validatesDomainName: Bool = true, allowInvalid: Bool = false) throws -> TrustPolicy {
        try TrustPolicy(pinning: .publicKey, publicKeyPins: pinned.map(\.pin),
                        validatesDomainName: validatesDomainName, allowInvalidCertificates: allowInvalid)
    }

    func testVerdicts() throws {
        let f = try TrustFixtures()
        let system = [f.root, f.pathLengthRoot, f.longRoot]
        let rows: [Row] = [
            // pinning none: the system store (here: the test roots), chain and name.
            Row(name: "valid chain", chain: [f.leaf, f.intermediate], policy: try none(), anchors: system, expected: .trusted),
            Row(name: "second name, any case, final dot", chain: [f.leaf, f.intermediate], host: "WWW.Probe.Example.", policy: try none(), anchors: system, expected: .trusted),
            Row(name: "intermediate not sent", chain: [f.leaf], policy: try none(), anchors: system, expected: .refused("chain does not lead to a trusted root")),
            Row(name: "out of order, with extra certificates", chain: [f.leaf, f.unknownRoot, f.root, f.wrongName, f.intermediate], policy: try none(), anchors: system, expected: .trusted),
            Row(name: "root sent too", chain: [f.leaf, f.intermediate, f.root], policy: try none(), anchors: system, expected: .trusted),
            Row(name: "self-signed", chain: [f.selfSigned], host: "self.example", policy: try none(), anchors: system, expected: .refused("chain does not lead to a trusted root")),
            Row(name: "self-signed, invalid allowed, no name check", chain: [f.selfSigned], host: "anything.example",
                policy: try none(validatesDomainName: false, allowInvalid: true), anchors: system, expected: .trusted),
            Row(name: "expired, invalid allowed, no name check", chain: [f.expired], policy: try none(validatesDomainName: false, allowInvalid: true), anchors: system, expected: .trusted),
            Row(name: "expired leaf", chain: [f.expired, f.intermediate], policy: try none(), anchors: system,
                expected: .refused("certificate expired on \((TrustFixtures.now - TrustFixtures.day).formatted(.iso8601)) (CN=probe.example)")),
            Row(name: "leaf not yet valid", chain: [f.notYetValid, f.intermediate], policy: try none(), anchors: system, expected: .refused("certificate not valid before")),
            Row(name: "expired intermediate", chain: [f.leafOfExpiredIntermediate, f.expiredIntermediate], policy: try none(), anchors: system,
                expected: .refused("(CN=Expired Intermediate CA)")),
            Row(name: "name mismatch", chain: [f.wrongName, f.intermediate], policy: try none(), anchors: system,
                expected: .refused("name probe.example does not match the certificate (DNS: other.example)")),
            Row(name: "name mismatch, names not validated", chain: [f.wrongName, f.intermediate], policy: try none(validatesDomainName: false), anchors: system, expected: .trusted),
            Row(name: "unknown CA", chain: [f.unknownLeaf, f.unknownRoot], policy: try none(), anchors: system, expected: .refused("chain does not lead to a trusted root")),
            Row(name: "issued by a leaf", chain: [f.victimOfLeaf, f.leaf, f.intermediate], policy: try none(), anchors: system,
                expected: .refused("Certificate CN=probe.example is not marked as a CA")),
            Row(name: "issuer without keyCertSign", chain: [f.leafOfSignsWithoutKeyCertSign, f.signsWithoutKeyCertSign], policy: try none(), anchors: system,
                expected: .refused("CN=No Signing CA may not sign certificates")),
            Row(name: "client certificate", chain: [f.clientOnly, f.intermediate], policy: try none(), anchors: system, expected: .refused("not for TLS servers")),
            Row(name: "forged signature", chain: [f.forged, f.intermediate], policy: try none(), anchors: system, expected: .refused("does not verify with the key of CN=Test Intermediate CA")),
            Row(name: "cross-signed copy first, good one second", chain: [f.leaf, f.crossSigned, f.intermediate], policy: try none(), anchors: system, expected: .trusted),
            Row(name: "cross-signed copy only", chain: [f.leaf, f.crossSigned], policy: try none(), anchors: system, expected: .refused("chain does not lead to a trusted root")),
            Row(name: "cross-signed copy to the other root", chain: [f.leaf, f.intermediate, f.crossSigned], policy: try none(), anchors: [f.unknownRoot], expected: .trusted),
            Row(name: "path length exceeded", chain: [f.leafOfMiddle, f.middle], policy: try none(), anchors: system, expected: .refused("CA CN=Path Length Root CA has maximum path length 0, but chain has 1 subCAs")),
            Row(name: "unknown critical extension", chain: [f.criticalUnknown, f.intermediate], policy: try none(), anchors: system,
                expected: .refused("unsupported critical extension 1.3.6.1.4.1.99999.1")),
            Row(name: "no certificate", chain: [], policy: try none(), anchors: system, expected: .refused("the server sent no certificate")),
            Row(name: "name-constrained CA, leaf inside", chain: [f.insideConstraint, f.constrainedCA], host: "www.probe.example", policy: try none(), anchors: system,
                expected: .trusted),
            Row(name: "name-constrained CA, a name outside", chain: [f.outsideConstraint, f.constrainedCA], host: "www.probe.example", policy: try none(),
                anchors: system, expected: .refused("Unable to validate permitted subtree for [DNSName(\"probe.example\")]")),
            Row(name: "name-constrained CA, an excluded name", chain: [f.excludedByConstraint, f.constrainedCA], host: "bad.probe.example", policy: try none(),
                anchors: system, expected: .refused("bad.probe.example")),
            Row(name: "name-constrained CA pinned, a name outside", chain: [f.outsideConstraint, f.constrainedCA], host: "www.probe.example",
                policy: try certificate(), anchors: [f.constrainedCA], expected: .refused("permitted subtree")),

            // Names: a wildcard is one whole leftmost label; IP literals match iPAddress only.
            Row(name: "wildcard, one label", chain: [f.wildcard, f.intermediate], host: "a.probe.example", policy: try none(), anchors: system, expected: .trusted),
            Row(name: "wildcard, any case", chain: [f.wildcard, f.intermediate], host: "A.PROBE.example", policy: try none(), anchors: system, expected: .trusted),
            Row(name: "wildcard, two labels", chain: [f.wildcard, f.intermediate], host: "a.b.probe.example", policy: try none(), anchors: system,
                expected: .refused("name a.b.probe.example does not match the certificate (DNS: *.probe.example)")),
            Row(name: "wildcard, no label", chain: [f.wildcard, f.intermediate], host: "probe.example", policy: try none(), anchors: system, expected: .refused("does not match")),
            Row(name: "wildcard, not across a dot", chain: [f.wildcard, f.intermediate], host: "a.probe.example.evil", policy: try none(), anchors: system,
                expected: .refused("does not match")),
            Row(name: "a wildcard in the name asked for", chain: [f.wildcard, f.intermediate], host: "*.probe.example", policy: try none(), anchors: system,
                expected: .refused("does not match")),
            // swift-certificates (RFC 6125 6.4.3) matches a wildcard over one label and one inside
            // a label; reachd refuses both, as browsers do.
            Row(name: "wildcard over a single label", chain: [f.publicSuffixWildcard, f.intermediate], host: "probe.example", policy: try none(),
                anchors: system, expected: .refused("does not match the certificate (DNS: *.example)")),
            Row(name: "wildcard over a single label, two labels", chain: [f.publicSuffixWildcard, f.intermediate], host: "www.probe.example", policy: try none(),
                anchors: system, expected: .refused("does not match")),
            Row(name: "wildcard inside a label", chain: [f.partialWildcard, f.intermediate], host: "www.probe.example", policy: try none(), anchors: system,
                expected: .refused("does not match the certificate (DNS: w*.probe.example)")),
            Row(name: "wildcard inside a label, other prefix", chain: [f.partialWildcard, f.intermediate], host: "api.probe.example", policy: try none(),
                anchors: system, expected: .refused("does not match the certificate (DNS: w*.probe.example)")),
            Row(name: "name only in the common name", chain: [f.commonNameOnly, f.intermediate], policy: try none(), anchors: system,
                expected: .refused("name probe.example does not match the certificate (it has no subjectAltName)")),
            Row(name: "IPv4 SAN", chain: [f.ipLeaf, f.intermediate], host: "192.0.2.7", policy: try none(), anchors: system, expected: .trusted),
            Row(name: "IPv6 SAN, bracketed", chain: [f.ipLeaf, f.intermediate], host: "[2001:DB8:0::7]", policy: try none(), anchors: system, expected: .trusted),
            Row(name: "other address", chain: [f.ipLeaf, f.intermediate], host: "192.0.2.8", policy: try none(), anchors: system,
                expected: .refused("name 192.0.2.8 does not match the certificate (DNS: 192.0.2.9; IP: 192.0.2.7, 2001:db8::7)")),
            Row(name: "address only in a DNS SAN", chain: [f.ipLeaf, f.intermediate], host: "192.0.2.9", policy: try none(), anchors: system, expected: .refused("does not match")),

            // pinning certificate: the pins are the only anchors.
            Row(name: "pinned self-signed", chain: [f.selfSigned], host: "self.example", policy: try certificate(), anchors: [f.selfSigned], expected: .trusted),
            Row(name: "pinned self-signed, other name", chain: [f.selfSigned], host: "probe.example", policy: try certificate(), anchors: [f.selfSigned],
                expected: .refused("name probe.example does not match the certificate (DNS: self.example)")),
            Row(name: "pinned self-signed, other name, names not validated", chain: [f.selfSigned], policy: try certificate(validatesDomainName: false),
                anchors: [f.selfSigned], expected: .trusted),
            Row(name: "another certificate pinned", chain: [f.selfSigned], host: "self.example", policy: try certificate(), anchors: [f.wrongName],
                expected: .refused("no pinned certificate in the chain")),
            Row(name: "system-trusted chain, pin elsewhere", chain: [f.leaf, f.intermediate], policy: try certificate(), anchors: [f.unknownRoot],
                expected: .refused("no pinned certificate in the chain")),
            Row(name: "pinned intermediate", chain: [f.leaf, f.intermediate], policy: try certificate(), anchors: [f.intermediate], expected: .trusted),
            Row(name: "pinned intermediate, not sent", chain: [f.leaf], policy: try certificate(), anchors: [f.intermediate], expected: .trusted),
            Row(name: "pinned root", chain: [f.leaf, f.intermediate], policy: try certificate(), anchors: [f.root], expected: .trusted),
            Row(name: "pinned leaf", chain: [f.leaf], policy: try certificate(), anchors: [f.leaf], expected: .trusted),
            Row(name: "pinned expired self-signed", chain: [f.expiredSelfSigned], host: "old.example", policy: try certificate(), anchors: [f.expiredSelfSigned],
                expected: .refused("certificate expired on")),
            Row(name: "pinned expired self-signed, invalid allowed", chain: [f.expiredSelfSigned], host: "old.example", policy: try certificate(allowInvalid: true),
                anchors: [f.expiredSelfSigned], expected: .trusted),
            Row(name: "pinned intermediate, expired leaf, invalid allowed", chain: [f.expired, f.intermediate], policy: try certificate(allowInvalid: true),
                anchors: [f.intermediate], expected: .trusted),
            Row(name: "pinned intermediate appended to a forged leaf, invalid allowed", chain: [f.forged, f.intermediate], policy: try certificate(allowInvalid: true),
                anchors: [f.intermediate], expected: .refused("does not verify")),
            Row(name: "pinned intermediate, wrong name, invalid allowed", chain: [f.wrongName, f.intermediate], policy: try certificate(allowInvalid: true),
                anchors: [f.intermediate], expected: .refused("does not match")),

            // pinning publicKey: a pinned key the leaf signs its way down from; no system trust.
            Row(name: "pinned key, self-signed", chain: [f.selfSigned], host: "self.example", policy: try publicKey(f.selfSigned), expected: .trusted),
            Row(name: "wrong key pinned", chain: [f.selfSigned], host: "self.example", policy: try publicKey(f.wrongName), expected: .refused("public key not pinned")),
            Row(name: "system-trusted chain, key not pinned", chain: [f.leaf, f.intermediate], policy: try publicKey(f.unknownRoot), anchors: system,
                expected: .refused("public key not pinned")),
            Row(name: "pinned intermediate key", chain: [f.leaf, f.intermediate], policy: try publicKey(f.intermediate), expected: .trusted),
            Row(name: "pinned intermediate key, by its cross-signed twin", chain: [f.leaf, f.crossSigned], policy: try publicKey(f.intermediate), expected: .trusted),
            Row(name: "pinned intermediate key, intermediate not sent", chain: [f.leaf], policy: try publicKey(f.intermediate), expected: .refused("public key not pinned")),
            Row(name: "pinned root key, root not sent", chain: [f.leaf, f.intermediate], policy: try publicKey(f.root), expected: .refused("public key not pinned")),
            Row(name: "pinned root key, root sent", chain: [f.leaf, f.intermediate, f.root], policy: try publicKey(f.root), expected: .trusted),
            Row(name: "pinned intermediate key appended to a forged leaf", chain: [f.forged, f.intermediate], policy: try publicKey(f.intermediate),
                expected: .refused("does not verify")),
            Row(name: "same, invalid allowed", chain: [f.forged, f.intermediate], policy: try publicKey(f.intermediate, allowInvalid: true),
                expected: .refused("does not verify")),
            Row(name: "pinned key, expired", chain: [f.expiredSelfSigned], host: "old.example", policy: try publicKey(f.expiredSelfSigned),
                expected: .refused("certificate expired on")),
            Row(name: "pinned key, expired, invalid allowed", chain: [f.expiredSelfSigned], host: "old.example", policy: try publicKey(f.expiredSelfSigned, allowInvalid: true),
                expected: .trusted),
            Row(name: "pinned key, other name", chain: [f.selfSigned], policy: try publicKey(f.selfSigned), expected: .refused("name probe.example does not match")),
            Row(name: "pinned key, other name, invalid allowed", chain: [f.selfSigned], policy: try publicKey(f.selfSigned, allowInvalid: true),
                expected: .refused("name probe.example does not match")),
            Row(name: "pinned key, other name, names not validated", chain: [f.selfSigned], policy: try publicKey(f.selfSigned, validatesDomainName: false), expected: .trusted),
            Row(name: "pinned key, client certificate", chain: [f.clientOnly, f.intermediate], policy: try publicKey(f.intermediate), expected: .refused("not for TLS servers")),
            Row(name: "pinned key, out of order, with extra certificates", chain: [f.leaf, f.unknownRoot, f.wrongName, f.intermediate],
                policy: try publicKey(f.intermediate), expected: .trusted),
            Row(name: "pinned key of a sent certificate that signed nothing", chain: [f.unknownLeaf, f.intermediate], policy: try publicKey(f.intermediate),
                expected: .refused("public key not pinned")),
        ]
        for row in rows {
            let verdict = TrustEvaluation.verdict(
                chain: row.chain.map(\.certificate), host: row.host, policy: row.policy,
                anchors: TrustAnchors(row.anchors.map(\.certificate)), now: TrustFixtures.now
            )
            switch (row.expected, verdict) {
            case (.trusted, .trusted):
                break
            case let (.refused(fragment), .refused(reason)):
                XCTAssertTrue(reason.contains(fragment), "\(row.name): reason \"\(reason)\" lacks \"\(fragment)\"")
                XCTAssertFalse(reason.contains("\n"), "\(row.name): one line")
            default:
                XCTFail("\(row.name): expected \(row.expected), got \(verdict)")
            }
        }
    }

    func testDepthAndBudgetLimits() throws {
        let f = try TrustFixtures()
        let tooLong = TrustEvaluation.verdict(chain: f.longChain, host: "probe.example", policy: try none(),
                                              anchors: TrustAnchors([f.longRoot.certificate]), now: TrustFixtures.now)
        XCTAssertEqual(tooLong, .refused(reason: "no trusted path within 10 certificates"))
        // The same ten certificates shorter: leaf, eight CAs, root, is within the limit.
        let withinLimit = try (1...8).reduce([f.longRoot]) { chain, index in chain + [try TrustFixtures.make("CA \(index)", by: chain.last!, constraints: .isCertificateAuthority(maxPathLength: nil), usages: nil)] }
        let leaf = try TrustFixtures.make("probe.example", by: withinLimit.last!, dns: ["probe.example"])
        XCTAssertEqual(TrustEvaluation.verdict(chain: [leaf.certificate] + withinLimit.dropFirst().reversed().map(\.certificate), host: "probe.example",
                                               policy: try none(), anchors: TrustAnchors([f.longRoot.certificate]), now: TrustFixtures.now), .trusted)
        // Thirty CAs of one name and key, each with its own subjectAltName (so no two are the
        // same CA to the search) and each signing the others: every order of them is a path
        // of valid signatures. The budget ends the search.
        let key = P256.Signing.PrivateKey()
        let seed = try TrustFixtures.make("Tangle CA", key: key, constraints: .isCertificateAuthority(maxPathLength: nil), usages: nil)
        let tangle = try (0..<30).map {
            try TrustFixtures.make("Tangle CA", by: seed, key: key, constraints: .isCertificateAuthority(maxPathLength: nil), usages: nil, dns: ["ca\($0).test"])
        }
        let tangled = try TrustFixtures.make("probe.example", by: seed, dns: ["probe.example"])
        let started = ContinuousClock.now
        let verdict = TrustEvaluation.verdict(chain: [tangled.certificate] + tangle.map(\.certificate), host: "probe.example",
                                              policy: try none(), anchors: TrustAnchors([f.root.certificate]), now: TrustFixtures.now)
        XCTAssertEqual(verdict, .refused(reason: "the chain is too tangled to evaluate (over 64 signature checks)"))
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(2))
        // The same under public-key pinning (of a key the tangle does not hold).
        let pinned = TrustEvaluation.verdict(chain: [tangled.certificate] + tangle.map(\.certificate), host: "probe.example",
                                             policy: try publicKey(f.root), anchors: .none, now: TrustFixtures.now)
        XCTAssertEqual(pinned, .refused(reason: "the chain is too tangled to evaluate (over 64 signature checks)"))
    }

    func testPublicKeyPinIsTheSPKIDigest() throws {
        let key = P256.Signing.PrivateKey()
        let made = try TrustFixtures.make("self.example", key: key, dns: ["self.example"])
        // swift-crypto's derRepresentation of a public key is its SubjectPublicKeyInfo.
        XCTAssertEqual(TrustEvaluation.publicKeyPin(of: made.certificate), Array(SHA256.hash(data: key.publicKey.derRepresentation)))
        var serializer = DER.Serializer()
        try serializer.serialize(made.certificate.publicKey)
        XCTAssertEqual(TrustEvaluation.publicKeyPin(of: made.certificate), Array(SHA256.hash(data: serializer.serializedBytes)))
    }

    func testPinnedCertificateFiles() throws {
        let f = try TrustFixtures()
        let directory = try temporaryDirectory("reachd-trust")
        let bundle = directory + "/bundle.pem", der = directory + "/leaf.der"
        let pem = "issuer and root\n" + [f.intermediate, f.root].map { try! $0.certificate.serializeAsPEM().pemString }.joined(separator: "\n") + "\n"
        try Data(pem.utf8).write(to: URL(fileURLWithPath: bundle))
        try Data(f.selfSigned.der).write(to: URL(fileURLWithPath: der))

        let evaluator = try TrustEvaluator(policy: TrustPolicy(pinning: .certificate, pinnedCertificates: [bundle, der]))
        XCTAssertEqual(evaluator.pinnedCertificates, [f.intermediate.certificate, f.root.certificate, f.selfSigned.certificate])
        XCTAssertEqual(evaluator.evaluate(chain: [f.leaf.certificate], host: "probe.example", now: TrustFixtures.now), .trusted)
        XCTAssertEqual(evaluator.evaluate(chain: [f.selfSigned.certificate], host: "self.example", now: TrustFixtures.now), .trusted)
        XCTAssertEqual(evaluator.evaluate(chain: [f.unknownLeaf.certificate], host: "probe.example", now: TrustFixtures.now),
                       .refused(reason: "no pinned certificate in the chain"))

        let files: [(name: String, contents: String?, reason: String)] = [
            ("missing.pem", nil, "cannot read"),
            ("text.pem", "not a certificate at all\n", "not a certificate (neither PEM nor DER)"),
            ("key.pem", f.selfSigned.key.pemRepresentation, "no certificate in the PEM"),
            ("broken.pem", "-----BEGIN CERTIFICATE-----\nMAMCAQE=\n-----END CERTIFICATE-----\n", "PEM block 1 is not a certificate"),
        ]
        for file in files {
            let path = directory + "/" + file.name
            if let contents = file.contents { try Data(contents.utf8).write(to: URL(fileURLWithPath: path)) }
            let policy = try TrustPolicy(pinning: .certificate, pinnedCertificates: [bundle, path])
            do throws(TrustLoadError) {
                _ = try TrustEvaluator(policy: policy)
                XCTFail("\(file.name): accepted")
            } catch {
                XCTAssertEqual(error.path, path, file.name)
                XCTAssertTrue(error.description.hasPrefix(path + ": "), "\(file.name): \(error)")
                XCTAssertTrue(error.reason.contains(file.reason), "\(file.name): \(error.reason)")
            }
        }
    }

    func testSystemTrustStoreIsReadOnce() throws {
        let f = try TrustFixtures()
        let directory = try temporaryDirectory("reachd-trust")
        let path = directory + "/ca-certificates.crt"
        try Data(f.root.certificate.serializeAsPEM().pemString.utf8).write(to: URL(fileURLWithPath: path))
        let store = SystemTrustStore(path: path)
        let chain = [f.leaf.certificate, f.intermediate.certificate]
        XCTAssertEqual(try TrustEvaluator(policy: TrustPolicy(), systemTrustStore: store).evaluate(chain: chain, host: "probe.example", now: TrustFixtures.now), .trusted)
        try FileManager.default.removeItem(atPath: path)
        // A new evaluator (a reload) on the same store does not read the file again.
        XCTAssertEqual(try TrustEvaluator(policy: TrustPolicy(), systemTrustStore: store).evaluate(chain: chain, host: "probe.example", now: TrustFixtures.now), .trusted)

        let missing = try TrustEvaluator(policy: TrustPolicy(), systemTrustStore: SystemTrustStore(path: path))
        guard case let .refused(reason) = missing.evaluate(chain: chain, host: "probe.example", now: TrustFixtures.now) else { return XCTFail("trusted without a store") }
        XCTAssertTrue(reason.hasPrefix("no system trust store: \(path): cannot read"), reason)
        // Allowing invalid certificates never needs the store.
        let lenient = try TrustEvaluator(policy: TrustPolicy(validatesDomainName: false, allowInvalidCertificates: true), systemTrustStore: SystemTrustStore(path: path))
        XCTAssertEqual(lenient.evaluate(chain: [f.selfSigned.certificate], host: "x", now: TrustFixtures.now), .trusted)

        // The machine's own bundle parses whole.
        if FileManager.default.fileExists(atPath: SystemTrustStore.defaultPath) {
            let anchors = try SystemTrustStore(path: SystemTrustStore.defaultPath).anchors().get()
            XCTAssertGreaterThan(anchors.count, 100)
        }
    }
}
