// C2SP/x509-limbo's server-authentication cases through reachd's `TrustEvaluation` (pinning
// `none`, each case's trusted certificates as the system store). Built and run only by
// `scripts/x509-limbo LIMBO.JSON` (REACHD_LIMBO in Package.swift); limbo.json is fetched,
// never committed. Each disagreement must fall in one of the explained categories below: a
// new one makes the run exit 1. docs/testing.md has the last run's figures.
import Foundation
import ReachConfiguration
import ReachConnectivity
import X509

enum LimboServerCases {
    struct Limbo: Decodable {
        struct PeerName: Decodable {
            let value: String
        }

        struct Testcase: Decodable {
            let id: String
            let validation_kind: String
            let features: [String]?
            let trusted_certs: [String]
            let untrusted_intermediates: [String]
            let peer_certificate: String
            let validation_time: String?
            let expected_result: String
            let expected_peer_name: PeerName?
        }

        let testcases: [Testcase]
    }

    /// Why reachd disagrees with a case, by feature or by id.
    static func category(of testcase: Limbo.Testcase) -> String? {
        let features = Set(testcase.features ?? [])
        if features.contains("has-crl") { return "revocation (CRLs), which reachd does not check" }
        if features.contains("max-chain-depth") { return "a per-case maximum depth, which reachd does not take (its limit is 10)" }
        if features.contains("denial-of-service") { return "quadratic name-constraint work done, not refused (the constraints must sit in an anchor)" }
        if Self.libraryWildcards.contains(testcase.id) { return "wildcards over a public suffix of more than one label (reachd has no public suffix list)" }
        if testcase.id.hasPrefix("webpki::") || features.contains(where: { $0.hasPrefix("pedantic-") }) {
            return "CA/Browser Forum issuance rules (web PKI profile), beyond RFC 5280 path validation"
        }
        if Self.issuerEncodingRules.contains(testcase.id) { return "RFC 5280 rules on how a CA encodes certificates, which the library does not police" }
        if Self.nameConstraintSemantics.contains(testcase.id) { return "swift-certificates' name-constraint semantics" }
        if testcase.id == "rfc5280::validity::notafter-fractional" { return "validity compared to the instant, not the second (an ambiguous case)" }
        return nil
    }

    static let libraryWildcards: Set<String> = [
        "webpki::san::public-suffix-wildcard-san", "webpki::san::public-suffix-multi-label-wildcard-san",
        "webpki::san::public-suffix-private-namespace-wildcard-san", "webpki::san::wildcard-embedded-leftmost-san", "webpki::san::san-wildcard-only-tld",
    ]

    static let issuerEncodingRules: Set<String> = [
        "rfc5280::aki::leaf-missing-aki", "rfc5280::aki::intermediate-missing-aki", "rfc5280::aki::cross-signed-root-missing-aki",
        "rfc5280::ski::root-missing-ski", "rfc5280::ski::intermediate-missing-ski", "rfc5280::ca-empty-subject",
        "rfc5280::root-non-critical-basic-constraints", "rfc5280::leaf-ku-keycertsign", "rfc5280::san::noncritical-with-empty-subject",
        "rfc5280::nc::not-allowed-in-ee-noncritical", "rfc5280::nc::not-allowed-in-ee-critical", "rfc5280::nc::permitted-dns-match-noncritical",
        "rfc5280::nc::invalid-dnsname-leading-period", "rfc5280::pc::ica-noncritical-pc",
    ]

    static let nameConstraintSemantics: Set<String> = [
        // directoryName constraints are not supported; self-issued CAs are not exempted; an
        // otherName constraint refuses even without such names; a wildcard SAN is not held
        // to an excluded name it covers.
        "rfc5280::nc::permitted-dn-match", "rfc5280::nc::permitted-self-issued", "rfc5280::nc::nc-forbids-othername-noop",
        "rfc5280::nc::nc-forbids-dnsname-wildcard-san", "cve::cve-2025-61727",
    ]


    /// Runs every SERVER case of the file at `path`; false when a disagreement is unexplained.
    static func run(_ path: String) throws -> Bool {
        let limbo = try JSONDecoder().decode(Limbo.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        let dates = ISO8601DateFormatter()
        dates.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let plainDates = ISO8601DateFormatter()
        var agreed = 0, total = 0
        var explained: [String: [String]] = [:]
        var unexplained: [String] = []
        for testcase in limbo.testcases where testcase.validation_kind == "SERVER" {
            total += 1
            let verdict: TrustVerdict
            do {
                let chain = try ([testcase.peer_certificate] + testcase.untrusted_intermediates).map { try Certificate(pemEncoded: $0) }
                let anchors = try testcase.trusted_certs.map { try Certificate(pemEncoded: $0) }
                let now = testcase.validation_time.flatMap { dates.date(from: $0) ?? plainDates.date(from: $0) } ?? Date()
                verdict = TrustEvaluation.verdict(chain: chain, host: testcase.expected_peer_name?.value ?? "", policy: .systemDefault,
                                                  anchors: TrustAnchors(anchors), now: now)
            } catch {
                verdict = .refused(reason: "cannot be parsed: \(error)")
            }
            if (verdict == .trusted) == (testcase.expected_result == "SUCCESS") {
                agreed += 1
            } else if let category = category(of: testcase) {
                explained[category, default: []].append(testcase.id)
            } else {
                unexplained.append("\(testcase.id): expected \(testcase.expected_result), got \(verdict)")
            }
        }
        print("x509-limbo server cases: \(agreed) of \(total) agree")
        for (category, ids) in explained.sorted(by: { $0.value.count > $1.value.count }) {
            print("  \(ids.count) \(category): \(ids.joined(separator: ", "))")
        }
        for line in unexplained { print("UNEXPLAINED \(line)") }
        return total > 0 && unexplained.isEmpty
    }
}

guard CommandLine.arguments.count == 2 else {
    print("usage: x509-limbo LIMBO.JSON")
    exit(64)
}
do {
    exit(try LimboServerCases.run(CommandLine.arguments[1]) ? 0 : 1)
} catch {
    print("x509-limbo: \(error)")
    exit(1)
}
