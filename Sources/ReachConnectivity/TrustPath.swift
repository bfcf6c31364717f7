import FoundationEssentials
import SwiftASN1
import X509

/// How a path search ended.
enum PathOutcome: Equatable {
    /// It reached an anchor.
    case anchored
    /// Nothing led to an anchor.
    case unanchored
    /// A certificate on every way there broke a rule; the first such rule.
    case invalid(String)
}

/// Depth-first search from the leaf for an issuer path to an anchor, backtracking over
/// candidates (cross-signed and out-of-order chains). A link needs subject == issuer and a
/// verifying signature; with `enforcesValidity`, also dates at `now`, CA issuers (key usage,
/// path length), serverAuth on the leaf and no unknown critical extension.
struct PathSearch {
    let intermediates: [Certificate]
    let anchors: TrustAnchors
    let isAnchor: (Certificate) -> Bool
    let enforcesValidity: Bool
    package let now: Date
    private var budget = TrustEvaluation.signatureBudget

    init(sent chain: [Certificate], anchors: TrustAnchors, isAnchor: @escaping (Certificate) -> Bool, enforcesValidity: Bool, now: Date) {
        intermediates = Array(chain.dropFirst())
        self.anchors = anchors
        self.isAnchor = isAnchor
        self.enforcesValidity = enforcesValidity
        self.now = now
    }

    mutating func verify(leaf: Certificate) -> PathOutcome {
        if enforcesValidity {
            let anchor = isAnchor(leaf)
            if let problem = CertificateRules.validity(leaf, at: now) ?? CertificateRules.serverUsage(leaf)
                ?? (anchor ? nil : CertificateRules.unsupportedCriticalExtension(leaf)) {
                return .invalid(problem)
            }
        }
        return extend([leaf])
    }

    private mutating func extend(_ path: [Certificate]) -> PathOutcome {
        let current = path[path.count - 1]
        if isAnchor(current) { return .anchored }
        if path.count >= TrustEvaluation.maximumDepth {
            return .invalid("no trusted path within \(TrustEvaluation.maximumDepth) certificates")
        }
        // Anchors first: a path ending in the store is the common case.
        let candidates = anchors.named(current.issuer) + intermediates.filter { $0.subject == current.issuer }
        var outcome = PathOutcome.unanchored
        for candidate in candidates where !path.contains(candidate) {
            guard budget > 0 else { return .invalid("the chain is too tangled to evaluate (over \(TrustEvaluation.signatureBudget) signature checks)") }
            budget -= 1
            let next: PathOutcome
            if !candidate.publicKey.isValidSignature(current.signature, for: current) {
                next = .invalid("the signature on \(TrustEvaluation.shown(current.subject)) does not verify with the key of \(TrustEvaluation.shown(candidate.subject))")
            } else if enforcesValidity, let problem = CertificateRules.validity(candidate, at: now)
                ?? CertificateRules.issuer(candidate, certificatesBelow: path.count)
                ?? (isAnchor(candidate) ? nil : CertificateRules.unsupportedCriticalExtension(candidate)) {
                next = .invalid(problem)
            } else {
                next = extend(path + [candidate])
            }
            if next == .anchored { return .anchored }
            // The first broken rule explains more than "no anchor".
            if outcome == .unanchored { outcome = next }
        }
        return outcome
    }
}

/// One certificate's rules, each nil when met or the reason when broken.
enum CertificateRules {
    /// Extensions whose meaning this evaluation applies; any other critical one refuses (RFC 5280 4.2).
    private static let understood: Set<ASN1ObjectIdentifier> = [
        .X509ExtensionID.basicConstraints, .X509ExtensionID.keyUsage,
        .X509ExtensionID.extendedKeyUsage, .X509ExtensionID.subjectAlternativeName,
    ]

    static func validity(_ certificate: Certificate, at now: Date) -> String? {
        if now > certificate.notValidAfter {
            return "certificate expired on \(certificate.notValidAfter.formatted(.iso8601)) (\(TrustEvaluation.shown(certificate.subject)))"
        }
        if now < certificate.notValidBefore {
            return "certificate not valid before \(certificate.notValidBefore.formatted(.iso8601)) (\(TrustEvaluation.shown(certificate.subject)))"
        }
        return nil
    }

    /// EKU, when present on the leaf, must include serverAuth.
    static func serverUsage(_ leaf: Certificate) -> String? {
        do {
            guard let usages = try leaf.extensions.extendedKeyUsage else { return nil }
            return usages.contains(.serverAuth) ? nil : "certificate is not for TLS servers (extended key usage without serverAuth) (\(TrustEvaluation.shown(leaf.subject)))"
        } catch {
            return "extended key usage of \(TrustEvaluation.shown(leaf.subject)) cannot be read: \(TrustEvaluation.shown(error))"
        }
    }

    /// An issuer must be a CA allowed to sign certificates, with `certificatesBelow`
    /// (leaf included) within its path length: `maxPathLength` counts intermediates only.
    static func issuer(_ issuer: Certificate, certificatesBelow: Int) -> String? {
        do {
            guard case let .isCertificateAuthority(maxPathLength) = try issuer.extensions.basicConstraints else {
                return "\(TrustEvaluation.shown(issuer.subject)) is not a CA (basicConstraints) but issued a certificate"
            }
            if let keyUsage = try issuer.extensions.keyUsage, !keyUsage.keyCertSign {
                return "\(TrustEvaluation.shown(issuer.subject)) may not sign certificates (key usage without keyCertSign)"
            }
            if let maxPathLength, certificatesBelow - 1 > maxPathLength {
                return "\(TrustEvaluation.shown(issuer.subject)) allows \(maxPathLength) intermediate certificates below it, the chain has \(certificatesBelow - 1)"
            }
            return nil
        } catch {
            return "extensions of \(TrustEvaluation.shown(issuer.subject)) cannot be read: \(TrustEvaluation.shown(error))"
        }
    }

    static func unsupportedCriticalExtension(_ certificate: Certificate) -> String? {
        guard let unknown = certificate.extensions.first(where: { $0.critical && !understood.contains($0.oid) }) else { return nil }
        if unknown.oid == .X509ExtensionID.nameConstraints {
            return "name constraints are not supported (\(TrustEvaluation.shown(certificate.subject)))"
        }
        return "unsupported critical extension \(unknown.oid) (\(TrustEvaluation.shown(certificate.subject)))"
    }
}
