import Crypto
import FoundationEssentials
import ReachabilityCore
import ReachConnectivity
import SwiftASN1
import X509


/// A certificate made for the trust tests, with the key that can sign under its name.
package struct MadeCertificate {
    package let certificate: Certificate
    package let key: P256.Signing.PrivateKey

    /// The DER, as a server sends it.
    package var der: [UInt8] {
        var serializer = DER.Serializer()
        try! serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    /// `sha256/BASE64` of its SubjectPublicKeyInfo, as configured.
    package var pin: String { "sha256/" + Data(TrustEvaluation.publicKeyPin(of: certificate)!).base64EncodedString() }
}

/// The certificates of the trust tests, all P-256, made fresh for every test run: a root and
/// an intermediate, leaves good and bad, a self-signed one, another CA.
package struct TrustFixtures {
    /// The moment every evaluation is made at.
    package static let now = Date(timeIntervalSince1970: 1_750_000_000)
    package static let day: TimeInterval = 86_400

    package let root, intermediate, leaf, wildcard, ipLeaf, selfSigned, expiredSelfSigned: MadeCertificate
    package let expired, notYetValid, wrongName, unknownRoot, unknownLeaf, victimOfLeaf: MadeCertificate
    package let signsWithoutKeyCertSign, leafOfSignsWithoutKeyCertSign, expiredIntermediate, leafOfExpiredIntermediate: MadeCertificate
    package let clientOnly, forged, crossSigned, pathLengthRoot, middle, leafOfMiddle, criticalUnknown: MadeCertificate
    package let longRoot: MadeCertificate
    /// A CA limited to probe.example's names except bad.probe.example, and leaves inside,
    /// outside and excluded.
    package let constrainedCA, insideConstraint, outsideConstraint, excludedByConstraint: MadeCertificate
    /// Wildcards over a single label (`*.example`) and inside a label (`w*.probe.example`);
    /// a leaf naming probe.example only in its common name.
    package let publicSuffixWildcard, partialWildcard, commonNameOnly: MadeCertificate
    /// A leaf and eleven CAs above it, root excluded: twelve with the root, over the depth limit.
    package let longChain: [Certificate]

    package init() throws {
        let ca = BasicConstraints.isCertificateAuthority(maxPathLength: nil)
        let probe = ["probe.example"]
        /// A CA certificate: basicConstraints CA, keyCertSign, no EKU, valid ten years.
        func ca_(_ name: String, by issuer: MadeCertificate? = nil, key: P256.Signing.PrivateKey = .init(),
                 constraints: BasicConstraints = .isCertificateAuthority(maxPathLength: nil),
                 until: Date = TrustFixtures.now + 3650 * TrustFixtures.day) throws -> MadeCertificate {
            try TrustFixtures.make(name, by: issuer, key: key, constraints: constraints, keyUsage: KeyUsage(keyCertSign: true, cRLSign: true),
                                   usages: nil, until: until)
        }
        root = try ca_("Test Root CA")
        intermediate = try ca_("Test Intermediate CA", by: root)
        leaf = try Self.make("probe.example", by: intermediate, dns: ["probe.example", "www.probe.example"])
        wildcard = try Self.make("wildcard", by: intermediate, dns: ["*.probe.example"])
        ipLeaf = try Self.make("ip", by: intermediate, dns: ["192.0.2.9"], ips: [[192, 0, 2, 7], IPAddress("2001:db8::7")!.bytes])
        selfSigned = try Self.make("self.example", dns: ["self.example"])
        expiredSelfSigned = try Self.make("old.example", dns: ["old.example"], from: Self.now - 700 * Self.day, until: Self.now - Self.day)
        expired = try Self.make("probe.example", by: intermediate, dns: probe, from: Self.now - 700 * Self.day, until: Self.now - Self.day)
        notYetValid = try Self.make("probe.example", by: intermediate, dns: probe, from: Self.now + Self.day, until: Self.now + 400 * Self.day)
        wrongName = try Self.make("other.example", by: intermediate, dns: ["other.example"])
        unknownRoot = try ca_("Unknown Root CA")
        unknownLeaf = try Self.make("probe.example", by: unknownRoot, dns: probe)
        victimOfLeaf = try Self.make("probe.example", by: leaf, dns: probe)
        signsWithoutKeyCertSign = try Self.make("No Signing CA", by: root, constraints: ca, keyUsage: KeyUsage(digitalSignature: true), usages: nil)
        leafOfSignsWithoutKeyCertSign = try Self.make("probe.example", by: signsWithoutKeyCertSign, dns: probe)
        expiredIntermediate = try ca_("Expired Intermediate CA", by: root, until: Self.now - Self.day)
        leafOfExpiredIntermediate = try Self.make("probe.example", by: expiredIntermediate, dns: probe)
        clientOnly = try Self.make("probe.example", by: intermediate, usages: [.clientAuth], dns: probe)
        // Claims the intermediate as issuer, signed by someone else's key.
        forged = try Self.make("probe.example", by: MadeCertificate(certificate: intermediate.certificate, key: .init()), dns: probe)
        // The intermediate's name and key, cross-signed by the unknown root.
        crossSigned = try ca_("Test Intermediate CA", by: unknownRoot, key: intermediate.key)
        pathLengthRoot = try ca_("Path Length Root CA", constraints: .isCertificateAuthority(maxPathLength: 0))
        middle = try ca_("Middle CA", by: pathLengthRoot)
        leafOfMiddle = try Self.make("probe.example", by: middle, dns: probe)
        criticalUnknown = try Self.make("probe.example", by: intermediate, dns: probe,
                                        extra: [Certificate.Extension(oid: [1, 3, 6, 1, 4, 1, 99999, 1], critical: true, value: [0x05, 0x00])])
        let constraints = NameConstraints(permittedDNSDomains: ["probe.example"], excludedDNSDomains: ["bad.probe.example"])
        constrainedCA = try Self.make("Constrained CA", by: root, constraints: ca, keyUsage: KeyUsage(keyCertSign: true), usages: nil,
                                      extra: [try Critical(constraints).makeCertificateExtension()])
        insideConstraint = try Self.make("inside", by: constrainedCA, dns: ["www.probe.example"])
        outsideConstraint = try Self.make("outside", by: constrainedCA, dns: ["www.probe.example", "other.example"])
        excludedByConstraint = try Self.make("excluded", by: constrainedCA, dns: ["bad.probe.example"])
        publicSuffixWildcard = try Self.make("suffix wildcard", by: intermediate, dns: ["*.example"])
        partialWildcard = try Self.make("partial wildcard", by: intermediate, dns: ["w*.probe.example"])
        commonNameOnly = try Self.make("probe.example", by: intermediate)
        longRoot = try ca_("Long Root CA")
        var above = longRoot
        var cas: [Certificate] = []
        for index in 1...11 {
            above = try ca_("Long CA \(index)", by: above)
            cas.insert(above.certificate, at: 0)
        }
        longChain = [try Self.make("probe.example", by: above, dns: probe).certificate] + cas
    }

    /// A certificate for `commonName`, issued by `issuer` (self-signed without one). Leaves by
    /// default: not a CA, serverAuth, valid from a month before `now` for a year.
    package static func make(
        _ commonName: String, by issuer: MadeCertificate? = nil, key: P256.Signing.PrivateKey = .init(),
        constraints: BasicConstraints? = .notCertificateAuthority, keyUsage: KeyUsage? = nil,
        usages: [ExtendedKeyUsage.Usage]? = [.serverAuth], dns: [String] = [], ips: [[UInt8]] = [],
        from: Date = now - 30 * day, until: Date = now + 365 * day, extra: [Certificate.Extension] = []
    ) throws -> MadeCertificate {
        let subject = try DistinguishedName { CommonName(commonName) }
        var extensions: [Certificate.Extension] = []
        if let constraints { extensions.append(try Critical(constraints).makeCertificateExtension()) }
        if let keyUsage { extensions.append(try Critical(keyUsage).makeCertificateExtension()) }
        if let usages { extensions.append(try ExtendedKeyUsage(usages).makeCertificateExtension()) }
        let names = dns.map { GeneralName.dnsName($0) } + ips.map { GeneralName.ipAddress(ASN1OctetString(contentBytes: $0[...])) }
        if !names.isEmpty { extensions.append(try SubjectAlternativeNames(names).makeCertificateExtension()) }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: from, notValidAfter: until,
            issuer: issuer?.certificate.subject ?? subject, subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: try Certificate.Extensions(extensions + extra),
            issuerPrivateKey: .init(issuer?.key ?? key)
        )
        return MadeCertificate(certificate: certificate, key: key)
    }
}
