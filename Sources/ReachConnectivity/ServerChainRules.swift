import FoundationEssentials
import ReachabilityCore
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// What a path the `Verifier` found (its signatures already checked) must also meet for an
/// HTTPS server, each broken rule one line for the log: RFC 5280 and the name are the
/// library's (`RFC5280Policy`, `ServerIdentityPolicy`); reachd adds what they leave out
/// (serverAuth, keyCertSign), a depth limit, and says which certificate broke what.
struct ServerChainRules: VerifierPolicy {
    /// The extensions these rules, with `RFC5280Policy`'s, give a meaning to; a certificate
    /// with any other critical extension is refused (RFC 5280 4.2).
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [
        .X509ExtensionID.basicConstraints, .X509ExtensionID.nameConstraints, .X509ExtensionID.keyUsage,
        .X509ExtensionID.extendedKeyUsage, .X509ExtensionID.subjectAlternativeName,
    ]

    /// RFC 5280's rules at `now`, or nil when invalid certificates are allowed (then only
    /// the signatures, the depth and the name count).
    private var rfc5280: RFC5280Policy?
    private let now: Date
    private var serverName: ServerName?

    /// The rules for a path judged at `now`, with or without certificate validity, naming
    /// `host` or not.
    init(checksValidity: Bool, now: Date, host: String?) {
        rfc5280 = checksValidity ? RFC5280Policy(fixedExpiryValidationTime: now) : nil
        self.now = now
        serverName = host.map(ServerName.init)
    }

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) -> PolicyEvaluationResult {
        if chain.count > TrustEvaluation.maximumDepth {
            return .failsToMeetPolicy(reason: "no trusted path within \(TrustEvaluation.maximumDepth) certificates")
        }
        if rfc5280 != nil, let problem = validityProblem(chain) {
            return .failsToMeetPolicy(reason: problem)
        }
        if var name = serverName, let mismatch = name.mismatch(chain) {
            return .failsToMeetPolicy(reason: mismatch)
        }
        return .meetsPolicy
    }

    private mutating func validityProblem(_ chain: UnverifiedCertificateChain) -> String? {
        // Dates first, with the date: the library's reason would not say when.
        for certificate in chain {
            if now > certificate.notValidAfter {
                return "certificate expired on \(certificate.notValidAfter.formatted(.iso8601)) (\(TrustEvaluation.shown(certificate.subject)))"
            }
            if now < certificate.notValidBefore {
                return "certificate not valid before \(certificate.notValidBefore.formatted(.iso8601)) (\(TrustEvaluation.shown(certificate.subject)))"
            }
        }
        // A path of one is an anchor presented as the server's certificate: the pin or store
        // vouches for that very certificate, which need not be a CA (as BoringSSL has it).
        if chain.count > 1, case let .failsToMeetPolicy(reason)? = rfc5280?.chainMeetsPolicyRequirements(chain: chain) {
            return Self.explained(reason, chain: chain)
        }
        // RFC 5280 4.2.1.3, which the library leaves out on purpose; BoringSSL and reachd keep it.
        for issuer in chain.dropFirst() {
            if let keyUsage = try? issuer.extensions.keyUsage, !keyUsage.keyCertSign {
                return "\(TrustEvaluation.shown(issuer.subject)) may not sign certificates (key usage without keyCertSign)"
            }
        }
        // Which services the leaf is for: no library policy reads the extended key usage.
        do {
            if let usages = try chain.leaf.extensions.extendedKeyUsage, !usages.contains(.serverAuth) {
                return "certificate is not for TLS servers (extended key usage without serverAuth) (\(TrustEvaluation.shown(chain.leaf.subject)))"
            }
        } catch {
            return "extended key usage of \(TrustEvaluation.shown(chain.leaf.subject)) cannot be read: \(TrustEvaluation.shown(error))"
        }
        return nil
    }

    /// The library's reason with each certificate named by its subject (the reason writes out
    /// whole certificates) and without its policy's prefix, on one line.
    static func explained(_ reason: PolicyFailureReason, chain: UnverifiedCertificateChain) -> String {
        var text = reason.description
        for certificate in chain {
            text = text.replacing(String(describing: certificate), with: TrustEvaluation.shown(certificate.subject))
        }
        if text.hasPrefix("RFC5280Policy: ") { text.removeFirst("RFC5280Policy: ".count) }
        return TrustEvaluation.shown(text.replacing("\n", with: " "), limit: TrustEvaluation.shownReasonLimit)
    }
}

/// The name the server must have: swift-certificates' RFC 6125 matching (`ServerIdentityPolicy`)
/// on the subjectAltName only, and the names the certificate has when it does not match.
struct ServerName {
    private let host: String
    private var identity: ServerIdentityPolicy

    /// A host name, or an IPv4/IPv6 literal (bracketed or not) matched against iPAddress entries.
    init(_ host: String) {
        self.host = host
        var literal = Substring(host)
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = literal.dropFirst().dropLast() }
        identity = IPAddress(literal) == nil
            ? ServerIdentityPolicy(serverHostname: host, serverIP: nil)
            : ServerIdentityPolicy(serverHostname: nil, serverIP: String(literal))
    }

    /// Nil when the leaf of `chain` is for `host`; otherwise why not, in one line.
    mutating func mismatch(_ chain: UnverifiedCertificateChain) -> String? {
        let names: SubjectAlternativeNames
        do {
            // No common-name fallback (RFC 6125 6.4.4, and what browsers do), which the library still has.
            guard let found = try chain.leaf.extensions.subjectAlternativeNames else {
                return "name \(TrustEvaluation.shown(host)) does not match the certificate (it has no subjectAltName)"
            }
            names = found
        } catch {
            return "the certificate's subjectAltName cannot be read: \(TrustEvaluation.shown(error))"
        }
        if case .meetsPolicy = identity.chainMeetsPolicyRequirements(chain: chain), acceptsWildcards(in: names) { return nil }
        var dnsNames: [String] = [], addresses: [String] = []
        for name in names {
            switch name {
            case let .dnsName(pattern): dnsNames.append(pattern)
            case let .ipAddress(octets): addresses.append(IPAddress(bytes: Array(octets.bytes)).map(String.init(describing:)) ?? "?")
            default: break
            }
        }
        var listed: [String] = []
        if !dnsNames.isEmpty { listed.append("DNS: " + TrustEvaluation.listed(dnsNames)) }
        if !addresses.isEmpty { listed.append("IP: " + TrustEvaluation.listed(addresses)) }
        return "name \(TrustEvaluation.shown(host)) does not match the certificate (\(listed.isEmpty ? "no DNS or IP names" : listed.joined(separator: "; ")))"
    }

    /// Whether a name the library matched also passes the stricter wildcard rule browsers
    /// keep: a wildcard is a whole leftmost label over at least two more (`*.example.com`),
    /// never inside a label (`w*.example.com`) nor over one label (`*.com`). IP literals and
    /// names without a wildcard are the library's alone.
    private func acceptsWildcards(in names: SubjectAlternativeNames) -> Bool {
        guard IPAddress(host.trimmingPrefix("[").prefix { $0 != "]" }) == nil else { return true }
        // Compared as DNS compares: without case, a final dot naming the root.
        func labels(_ name: String) -> [Substring] {
            let lowered = name.lowercased()
            return (lowered.hasSuffix(".") ? lowered.dropLast() : Substring(lowered)).split(separator: ".", omittingEmptySubsequences: false)
        }
        let asked = labels(host)
        return names.contains { name in
            guard case let .dnsName(pattern) = name else { return false }
            let offered = labels(pattern)
            guard offered.contains(where: { $0.contains("*") }) else { return offered == asked }
            return offered.first == "*" && offered.dropFirst().allSatisfy { !$0.contains("*") } && offered.count >= 3
                && offered.count == asked.count && offered.dropFirst().elementsEqual(asked.dropFirst()) && asked.first?.isEmpty == false
        }
    }
}
