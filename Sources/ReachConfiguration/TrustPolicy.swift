import FoundationEssentials

/// How an HTTPS endpoint (a probe, an RFC 8908 API) must prove who it is, modelled on
/// AFNetworking's AFSecurityPolicy. This file holds the policy as configured and the rules
/// it must satisfy at load; `TrustEvaluation` (TrustEvaluation.swift) judges a server by it.
///
/// - `none`: the system trust store (`/etc/ssl/certs`), chain and name.
/// - `certificate`: the server's chain must contain one of the pinned certificates,
///   evaluated with the pins as the only anchors.
/// - `publicKey`: one of the chain's public keys (SHA-256 of its SubjectPublicKeyInfo) must
///   equal a pin.
package struct TrustPolicy: Sendable, Equatable {
    /// What is pinned.
    package enum Pinning: String, Sendable, Equatable, CaseIterable {
        /// Nothing: the system trust store decides.
        case none
        /// Certificates (PEM or DER files).
        case certificate
        /// Public keys (`sha256/BASE64` of the SubjectPublicKeyInfo).
        case publicKey
    }

    /// Why a policy is refused at load, one line each.
    package enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// AFSecurityPolicy's rule: without pins, a self-signed certificate cannot be told
        /// from an attacker's when the domain name is validated.
        case domainValidationWithoutPins
        /// Pinning is on, but nothing is pinned.
        case noPins(Pinning)
        /// A public-key pin that is not `sha256/` followed by 32 bytes of base64.
        case malformedPin(String)
        /// Pins given for the other kind of pinning (they would be ignored).
        case pinsOfTheWrongKind(Pinning)

        /// One line for the configuration error.
        package var description: String {
            switch self {
            case .domainValidationWithoutPins:
                return "to validate a domain name for self-signed certificates you must pin (allow-invalid-certificates with validates-domain-name needs pinning = \"certificate\" or \"publicKey\")"
            case let .noPins(pinning):
                return "pinning = \"\(pinning.rawValue)\" but nothing is pinned"
            case let .malformedPin(pin):
                return "not a public-key pin (sha256/ and 44 characters of base64): \(pin)"
            case let .pinsOfTheWrongKind(pinning):
                return pinning == .publicKey ? "pinned-certificates given with pinning = \"publicKey\"" : "public-key pins given with pinning = \"\(pinning.rawValue)\""
            }
        }
    }

    /// What is pinned.
    package var pinning: Pinning
    /// Files of pinned certificates (PEM or DER), for `certificate`.
    package var pinnedCertificates: [String]
    /// SPKI SHA-256 digests, for `publicKey`.
    package var publicKeyPins: [[UInt8]]
    /// The server's name must match the certificate (AFSecurityPolicy's validatesDomainName).
    package var validatesDomainName: Bool
    /// Accept expired or untrusted chains (AFSecurityPolicy's allowInvalidCertificates).
    package var allowInvalidCertificates: Bool

    /// The default: the system trust store, chain and name (AFSecurityPolicy's defaultPolicy).
    package static let systemDefault = TrustPolicy(checked: .none)

    private init(checked pinning: Pinning) {
        self.pinning = pinning
        pinnedCertificates = []
        publicKeyPins = []
        validatesDomainName = true
        allowInvalidCertificates = false
    }

    /// A policy from its configured parts; refused when AFSecurityPolicy's rules say so.
    package init(
        pinning: Pinning = .none, pinnedCertificates: [String] = [], publicKeyPins: [String] = [],
        validatesDomainName: Bool = true, allowInvalidCertificates: Bool = false
    ) throws(Problem) {
        var digests: [[UInt8]] = []
        for pin in publicKeyPins {
            guard pin.hasPrefix("sha256/"), let data = Data(base64Encoded: String(pin.dropFirst("sha256/".count))), data.count == 32 else {
                throw .malformedPin(pin)
            }
            digests.append(Array(data))
        }
        switch pinning {
        case .none:
            if !pinnedCertificates.isEmpty || !digests.isEmpty { throw .pinsOfTheWrongKind(.none) }
            if allowInvalidCertificates && validatesDomainName { throw .domainValidationWithoutPins }
        case .certificate:
            if !digests.isEmpty { throw .pinsOfTheWrongKind(.certificate) }
            if pinnedCertificates.isEmpty { throw .noPins(.certificate) }
        case .publicKey:
            if !pinnedCertificates.isEmpty { throw .pinsOfTheWrongKind(.publicKey) }
            if digests.isEmpty { throw .noPins(.publicKey) }
        }
        self.pinning = pinning
        self.pinnedCertificates = pinnedCertificates
        self.publicKeyPins = digests
        self.validatesDomainName = validatesDomainName
        self.allowInvalidCertificates = allowInvalidCertificates
    }
}
