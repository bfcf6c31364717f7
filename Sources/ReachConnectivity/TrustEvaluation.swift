import Crypto
import FoundationEssentials
import ReachabilityCore
import ReachConfiguration
import SwiftASN1
import X509

/// What the trust evaluation decided about one server.
package enum TrustVerdict: Sendable, Equatable, CustomStringConvertible {
    /// The server proved who it is under the policy.
    case trusted
    /// It did not; `reason` is one line for the log ("certificate expired on …").
    case refused(reason: String)

    /// "trusted", or the reason.
    package var description: String {
        switch self {
        case .trusted: return "trusted"
        case let .refused(reason): return reason
        }
    }
}

/// Certificates a path may end at, indexed by subject so that finding an issuer is one lookup.
package struct TrustAnchors: Sendable {
    private let bySubject: [DistinguishedName: [Certificate]]
    private let all: Set<Certificate>

    /// No anchors at all (public-key pinning needs none).
    package static let none = TrustAnchors([])

    /// Anchors from certificates; duplicates count once.
    package init(_ certificates: [Certificate]) {
        all = Set(certificates)
        bySubject = Dictionary(grouping: all, by: \.subject)
    }

    /// How many distinct anchors there are.
    package var count: Int { all.count }

    /// Whether `certificate` is an anchor, byte for byte (`Certificate`'s `==` compares the DER).
    package func contains(_ certificate: Certificate) -> Bool { all.contains(certificate) }

    /// The anchors whose subject is `name`.
    package func named(_ name: DistinguishedName) -> [Certificate] { bySubject[name] ?? [] }
}

/// The one place that decides whether an HTTPS server is trusted (AFSecurityPolicy's
/// `evaluateServerTrust:forDomain:`, on swift-certificates' synchronous primitives).
///
/// Not swift-certificates' `Verifier`: it is `async`, and reachd uses no Swift concurrency
/// (libdispatch's worker-pool monitor would then wake an idle daemon every second).
///
/// - `none`: a path from the leaf to a system anchor, and the name. `allowInvalidCertificates`
///   skips the path (AFN: `allowInvalid || valid`).
/// - `certificate`: a path to a pinned certificate (the pins are the only anchors; a sent
///   certificate equal to a pin ends the path). `allowInvalidCertificates` drops dates and CA
///   rules, not signatures: a pinned CA certificate anyone can append to a forged chain
///   would otherwise prove nothing (AFN instead always re-evaluates against the pins).
/// - `publicKey`: a path from the leaf, through the sent certificates, to one whose SPKI
///   SHA-256 is pinned. The pin is the trust: unlike AFN no system trust is asked for, and
///   unlike AFN a pinned key counts only if it signed its way down to the leaf.
package enum TrustEvaluation {
    /// The longest path looked for, leaf and anchor included.
    package static let maximumDepth = 10
    /// Signature checks one evaluation may make: a hostile server's certificates cannot
    /// make the path search take long on the event loop.
    package static let signatureBudget = 64

    /// The verdict on `chain` (leaf first, as the server sent it) for `host` at `now`.
    /// `anchors` are the system store's for `none`, the pinned certificates for `certificate`
    /// and unused for `publicKey`.
    package static func verdict(chain: [Certificate], host: String, policy: TrustPolicy, anchors: TrustAnchors, now: Date) -> TrustVerdict {
        guard let leaf = chain.first else { return .refused(reason: "the server sent no certificate") }
        let enforcesValidity = !policy.allowInvalidCertificates
        let search: PathSearch?
        let unanchored: String
        switch policy.pinning {
        case .none:
            // AFN: allowInvalidCertificates || the chain is valid.
            search = enforcesValidity ? PathSearch(sent: chain, anchors: anchors, isAnchor: anchors.contains, enforcesValidity: true, now: now) : nil
            unanchored = "chain does not lead to a trusted root"
        case .certificate:
            search = PathSearch(sent: chain, anchors: anchors, isAnchor: anchors.contains, enforcesValidity: enforcesValidity, now: now)
            unanchored = "no pinned certificate in the chain"
        case .publicKey:
            let pins = Set(policy.publicKeyPins)
            search = PathSearch(sent: chain, anchors: .none, isAnchor: { publicKeyPin(of: $0).map { pins.contains($0) } ?? false },
                                enforcesValidity: enforcesValidity, now: now)
            unanchored = "public key not pinned"
        }
        if var search {
            switch search.verify(leaf: leaf) {
            case .anchored: break
            case .unanchored: return .refused(reason: unanchored)
            case let .invalid(reason): return .refused(reason: reason)
            }
        }
        if policy.validatesDomainName, let mismatch = nameMismatch(leaf: leaf, host: host) {
            return .refused(reason: mismatch)
        }
        return .trusted
    }

    /// SHA-256 of the certificate's SubjectPublicKeyInfo as the certificate carries it (what
    /// `openssl x509 -pubkey | openssl pkey -pubin -outform der | sha256sum` pins).
    ///
    /// Read from the signed bytes rather than re-serialized from `publicKey`, so that a key
    /// encoded in a form X509 would write differently still hashes to the pin. Nil when the
    /// TBSCertificate cannot be read (a parsed certificate always can).
    package static func publicKeyPin(of certificate: Certificate) -> [UInt8]? {
        guard let spki = try? subjectPublicKeyInfo(of: certificate) else { return nil }
        return Array(SHA256.hash(data: spki))
    }

    /// The DER of the SubjectPublicKeyInfo: the seventh field of TBSCertificate, counting the
    /// optional `[0] version` (RFC 5280 4.1).
    private static func subjectPublicKeyInfo(of certificate: Certificate) throws -> ArraySlice<UInt8> {
        let tbs = try DER.parse(certificate.tbsCertificateBytes)
        guard case let .constructed(fields) = tbs.content else { throw ASN1Error.unexpectedFieldType(tbs.identifier) }
        var iterator = fields.makeIterator()
        var field = iterator.next()
        if field?.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) { field = iterator.next() }
        // serialNumber, signature, issuer, validity, subject, then the SPKI.
        for _ in 0..<5 { field = iterator.next() }
        guard let spki = field, spki.identifier == .sequence else { throw ASN1Error.invalidASN1Object(reason: "no SubjectPublicKeyInfo") }
        return spki.encodedBytes
    }

    /// The most characters of one certificate-provided name (a subject, a SAN) a reason shows.
    static let shownNameLimit = 128
    /// The most subjectAltNames a reason lists; a certificate may carry thousands.
    static let listedNameLimit = 4

    /// A certificate's text (subject, a SAN, a parse error) as a reason shows it: cut at
    /// `shownNameLimit` scalars. The server chose it: wherever the reason is written (the
    /// log) it goes under `UntrustedText`'s rule, which escapes it once, there.
    static func shown(_ value: Any) -> String {
        let text = String(describing: value)
        let scalars = text.unicodeScalars
        guard scalars.count > shownNameLimit else { return text }
        return String(String.UnicodeScalarView(scalars.prefix(shownNameLimit - 1))) + "…"
    }

    /// `names` as a reason lists them: the first `listedNameLimit`, then how many more.
    static func listed(_ names: [String]) -> String {
        let shownNames = names.prefix(listedNameLimit).map { shown($0) }.joined(separator: ", ")
        return names.count > listedNameLimit ? shownNames + " … and \(names.count - listedNameLimit) more" : shownNames
    }

    /// Nil when `host` matches the leaf's subjectAltName; otherwise why not, in one line.
    ///
    /// Hosts that are IP literals match iPAddress entries only; names match dNSName entries,
    /// case-insensitively, a `*` only as the whole leftmost label standing for exactly one
    /// label. No common-name fallback (RFC 6125, and what browsers do).
    static func nameMismatch(leaf: Certificate, host: String) -> String? {
        let names: SubjectAlternativeNames
        do {
            guard let found = try leaf.extensions.subjectAlternativeNames else {
                return "name \(shown(host)) does not match the certificate (it has no subjectAltName)"
            }
            names = found
        } catch {
            return "the certificate's subjectAltName cannot be read: \(shown(error))"
        }
        var literal = Substring(host)
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = literal.dropFirst().dropLast() }
        var dnsNames: [String] = [], addresses: [String] = []
        for name in names {
            switch name {
            case let .dnsName(pattern): dnsNames.append(pattern)
            case let .ipAddress(octets): addresses.append(IPAddress(bytes: Array(octets.bytes)).map(String.init(describing:)) ?? "?")
            default: break
            }
        }
        let matches: Bool
        if let address = IPAddress(literal) {
            matches = names.contains { if case let .ipAddress(octets) = $0 { return Array(octets.bytes) == address.bytes } else { return false } }
        } else {
            matches = dnsNames.contains { dnsName($0, matches: host) }
        }
        if matches { return nil }
        var listed: [String] = []
        if !dnsNames.isEmpty { listed.append("DNS: " + Self.listed(dnsNames)) }
        if !addresses.isEmpty { listed.append("IP: " + Self.listed(addresses)) }
        return "name \(shown(host)) does not match the certificate (\(listed.isEmpty ? "no DNS or IP names" : listed.joined(separator: "; ")))"
    }

    /// RFC 6125 6.4: exact (ASCII case-insensitive, a final dot ignored), or `*.rest` for one
    /// label followed by `rest`, where `rest` has at least two labels (no `*.com`).
    static func dnsName(_ pattern: String, matches host: String) -> Bool {
        func normal(_ name: String) -> Substring {
            let lower = Substring(name.lowercased())
            return lower.hasSuffix(".") ? lower.dropLast() : lower
        }
        let pattern = normal(pattern), host = normal(host)
        guard !host.isEmpty, !host.contains("*") else { return false }
        guard pattern.hasPrefix("*.") else { return pattern == host }
        let rest = pattern.dropFirst(2)
        guard rest.contains("."), !rest.contains("*"), let dot = host.firstIndex(of: ".") else { return false }
        return dot != host.startIndex && host[host.index(after: dot)...] == rest
    }
}
