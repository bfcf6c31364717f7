@testable import ReachConfiguration
import XCTest


/// The trust policy's load-time rules, AFSecurityPolicy's among them.
final class TrustPolicyTests: XCTestCase {
    private let pin = "sha256/" + String(repeating: "A", count: 43) + "="  // 32 zero bytes

    func testRules() {
        let cases: [(String, () throws(TrustPolicy.Problem) -> TrustPolicy, TrustPolicy.Problem?)] = [
            ("system trust store", { () throws(TrustPolicy.Problem) in try TrustPolicy() }, nil),
            ("AFN: invalid certificates and domain validation need a pin",
             { () throws(TrustPolicy.Problem) in try TrustPolicy(allowInvalidCertificates: true) }, .domainValidationWithoutPins),
            ("invalid certificates without domain validation",
             { () throws(TrustPolicy.Problem) in try TrustPolicy(validatesDomainName: false, allowInvalidCertificates: true) }, nil),
            ("invalid certificates with a pinned key",
             { [pin] () throws(TrustPolicy.Problem) in try TrustPolicy(pinning: .publicKey, publicKeyPins: [pin], allowInvalidCertificates: true) }, nil),
            ("certificate pinning with a file",
             { () throws(TrustPolicy.Problem) in try TrustPolicy(pinning: .certificate, pinnedCertificates: ["/etc/reachd/probe.pem"]) }, nil),
            ("certificate pinning without a file",
             { () throws(TrustPolicy.Problem) in try TrustPolicy(pinning: .certificate) }, .noPins(.certificate)),
            ("public-key pinning without a pin",
             { () throws(TrustPolicy.Problem) in try TrustPolicy(pinning: .publicKey) }, .noPins(.publicKey)),
            ("a pin of the wrong length",
             { () throws(TrustPolicy.Problem) in try TrustPolicy(pinning: .publicKey, publicKeyPins: ["sha256/AAAA"]) }, .malformedPin("sha256/AAAA")),
            ("a pin without its algorithm",
             { [pin] () throws(TrustPolicy.Problem) in try TrustPolicy(pinning: .publicKey, publicKeyPins: [String(pin.dropFirst(7))]) },
             .malformedPin(String(pin.dropFirst(7)))),
            ("pins with pinning none",
             { [pin] () throws(TrustPolicy.Problem) in try TrustPolicy(publicKeyPins: [pin]) }, .pinsOfTheWrongKind(.none)),
            ("certificate files with public-key pinning",
             { [pin] () throws(TrustPolicy.Problem) in try TrustPolicy(pinning: .publicKey, pinnedCertificates: ["/x.pem"], publicKeyPins: [pin]) },
             .pinsOfTheWrongKind(.publicKey)),
        ]
        for (name, make, expected) in cases {
            do {
                let policy = try make()
                XCTAssertNil(expected, "\(name): accepted \(policy)")
            } catch {
                XCTAssertEqual(error, expected, name)
            }
        }
        XCTAssertTrue(TrustPolicy.Problem.domainValidationWithoutPins.description.hasPrefix("to validate a domain name for self-signed certificates you must pin"))
        XCTAssertEqual(try? TrustPolicy(pinning: .publicKey, publicKeyPins: [pin]).publicKeyPins, [Array(repeating: 0, count: 32)])
    }
}
