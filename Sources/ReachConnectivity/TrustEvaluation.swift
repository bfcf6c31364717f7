import Crypto
import FoundationEssentials
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

/// Certificates a path may end at (the system store's, or the pinned ones), held as the
/// `Verifier` looks them up.
package struct TrustAnchors: Sendable {
    /// The anchors, each once.
    package let certificates: [Certificate]
    let store: CertificateStore

    /// No anchors at all (public-key pinning needs none).
    package static let none = TrustAnchors([])

    /// Anchors from certificates; duplicates count once.
    package init(_ certificates: [Certificate]) {
        var seen = Set<Certificate>()
        self.certificates = certificates.filter { seen.insert($0).inserted }
        store = CertificateStore(self.certificates)
    }

    /// How many distinct anchors there are.
    package var count: Int { certificates.count }
}

/// The one place that decides whether an HTTPS server is trusted (AFSecurityPolicy's
/// `evaluateServerTrust:forDomain:`). swift-certificates' `Verifier` builds the path and
/// checks it (`ServerChainRules`); reachd chooses the anchors by pinning mode:
///
/// - `none`: the system store. `allowInvalidCertificates` skips the path (AFN: `allowInvalid || valid`).
/// - `certificate`: the pinned certificates, and nothing else (a sent certificate equal to a
///   pin ends the path). `allowInvalidCertificates` drops dates and CA rules, not signatures:
///   a pinned CA certificate anyone can append to a forged chain would otherwise prove nothing.
/// - `publicKey`: the sent certificates whose SPKI SHA-256 is pinned. The pin is the trust:
///   unlike AFN no system trust is asked for, and a pinned key counts only if it signed its
///   way down to the leaf.
package enum TrustEvaluation {
    /// The longest path accepted, leaf and anchor included.
    package static let maximumDepth = 10
    /// Signature checks one evaluation may make on the sent certificates: a hostile server's
    /// certificates cannot make the path search take long.
    package static let signatureBudget = 64

    /// The verdict on `chain` (leaf first, as the server sent it) for `host` at `now`.
    /// `anchors` are the system store's for `none`, the pinned certificates for `certificate`
    /// and unused for `publicKey`.
    package static func verdict(chain: [Certificate], host: String, policy: TrustPolicy, anchors: TrustAnchors, now: Date) -> TrustVerdict {
        guard let leaf = chain.first else { return .refused(reason: "the server sent no certificate") }
        let budget = SignatureBudget(signatureBudget)
        let sent = chain.dropFirst()
        let roots: CertificateStore
        let unanchored: String
        switch policy.pinning {
        case .none where policy.allowInvalidCertificates:
            // AFN: allowInvalidCertificates || the chain is valid. The leaf stands for itself.
            if !policy.validatesDomainName { return .trusted }
            roots = CertificateStore([leaf])
            unanchored = "the certificate cannot be evaluated"
        case .none:
            roots = anchors.store
            unanchored = "chain does not lead to a trusted root"
        case .certificate:
            roots = anchors.store
            unanchored = "no pinned certificate in the chain"
        case .publicKey:
            let pins = Set(policy.publicKeyPins)
            // The sent certificates, roots included, are the server's: on the same budget.
            roots = CertificateStore(custom: SentCertificates(chain.filter { publicKeyPin(of: $0).map(pins.contains) ?? false }, budget: budget))
            unanchored = "public key not pinned"
        }
        let rules = ServerChainRules(checksValidity: !policy.allowInvalidCertificates, now: now, host: policy.validatesDomainName ? host : nil)
        let intermediates = CertificateStore(custom: SentCertificates(sent, budget: budget))
        let result = CallingThreadExecutor.run {
            var verifier = Verifier(rootCertificates: roots) { rules }
            return await verifier.validate(leaf: leaf, intermediates: intermediates)
        }
        switch result {
        case .validCertificate?:
            return .trusted
        case let .couldNotValidate(failures)?:
            // The first broken rule explains more than "no anchor".
            if let failure = failures.first { return .refused(reason: failure.policyFailureReason.description) }
            if budget.isSpent { return .refused(reason: "the chain is too tangled to evaluate (over \(signatureBudget) signature checks)") }
            return .refused(reason: whyNoPath(leaf: leaf, sent: Array(sent), anchors: anchors, handled: rules.verifyingCriticalExtensions) ?? unanchored)
        case nil:
            return .refused(reason: "the certificate evaluation did not finish")
        }
    }

    /// Why the `Verifier` found no path at all, when the leaf says: an extension it must not
    /// ignore, or an issuer whose key did not sign it. Nil: no issuer was found.
    private static func whyNoPath(leaf: Certificate, sent: [Certificate], anchors: TrustAnchors, handled: [ASN1ObjectIdentifier]) -> String? {
        if let unknown = leaf.extensions.first(where: { $0.critical && !handled.contains($0.oid) }) {
            return "unsupported critical extension \(unknown.oid) (\(shown(leaf.subject)))"
        }
        let issuers = (anchors.certificates + sent).filter { $0.subject == leaf.issuer && $0 != leaf }
        if let issuer = issuers.first, !issuers.contains(where: { $0.publicKey.isValidSignature(leaf.signature, for: leaf) }) {
            return "the signature on \(shown(leaf.subject)) does not verify with the key of \(shown(issuer.subject))"
        }
        return nil
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
    /// The most characters of a library's reason shown.
    static let shownReasonLimit = 300
    /// The most subjectAltNames a reason lists; a certificate may carry thousands.
    static let listedNameLimit = 4

    /// A certificate's text (subject, a SAN, a parse error) as a reason shows it: cut at
    /// `limit` scalars. The server chose it: wherever the reason is written (the log) it
    /// goes under `UntrustedText`'s rule, which escapes it once, there.
    static func shown(_ value: Any, limit: Int = shownNameLimit) -> String {
        let text = String(describing: value)
        let scalars = text.unicodeScalars
        guard scalars.count > limit else { return text }
        return String(String.UnicodeScalarView(scalars.prefix(limit - 1))) + "…"
    }

    /// `names` as a reason lists them: the first `listedNameLimit`, then how many more.
    static func listed(_ names: [String]) -> String {
        let shownNames = names.prefix(listedNameLimit).map { shown($0) }.joined(separator: ", ")
        return names.count > listedNameLimit ? shownNames + " … and \(names.count - listedNameLimit) more" : shownNames
    }
}
