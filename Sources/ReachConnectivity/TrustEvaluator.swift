import FoundationEssentials
import LinuxSystem
import ReachConfiguration
import SwiftASN1
import Synchronization
import SystemPackage
import X509

/// A `TrustPolicy` resolved: its pinned certificates read and parsed, the system anchors at
/// hand. Built once per configuration (a reload builds a new one); `evaluate` is what each
/// handshake calls.
package final class TrustEvaluator: Sendable {
    /// The policy as configured.
    package let policy: TrustPolicy
    /// The pinned certificates (`certificate` pinning), every one found in the files.
    package let pinnedCertificates: [Certificate]
    private let pinnedAnchors: TrustAnchors
    private let systemTrustStore: SystemTrustStore

    /// Reads the policy's pinned certificate files (PEM with one or more certificates, or
    /// DER). The system store is read on first use, and once per `SystemTrustStore`.
    package init(policy: TrustPolicy, systemTrustStore: SystemTrustStore = .shared) throws(TrustLoadError) {
        var pinned: [Certificate] = []
        for path in policy.pinnedCertificates {
            pinned += try CertificateFile.certificates(at: path)
        }
        self.policy = policy
        self.pinnedCertificates = pinned
        self.pinnedAnchors = TrustAnchors(pinned)
        self.systemTrustStore = systemTrustStore
    }

    /// The verdict on `chain` (leaf first, as sent) for `host` at `now`.
    package func evaluate(chain: [Certificate], host: String, now: Date) -> TrustVerdict {
        let anchors: TrustAnchors
        switch policy.pinning {
        case .none where policy.allowInvalidCertificates: anchors = .none  // the store is not consulted
        case .none:
            switch systemTrustStore.anchors() {
            case let .success(store): anchors = store
            case let .failure(error): return .refused(reason: "no system trust store: \(error)")
            }
        case .certificate: anchors = pinnedAnchors
        case .publicKey: anchors = .none
        }
        return TrustEvaluation.verdict(chain: chain, host: host, policy: policy, anchors: anchors, now: now)
    }
}

/// A certificate file that could not be used, naming the file.
package struct TrustLoadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file.
    package var path: String
    /// Why, in a few words.
    package var reason: String

    /// "PATH: REASON", for the configuration error.
    package var description: String { "\(path): \(reason)" }
}

/// The system's CA bundle, read and parsed once (about 150 certificates) and kept. Not
/// swift-certificates' `CertificateStore.systemTrustRoots`, which loads on a DispatchQueue
/// and so starts libdispatch's worker pool, whose monitor wakes an idle daemon.
package final class SystemTrustStore: Sendable {
    /// Debian's and Ubuntu's bundle, which `update-ca-certificates` writes.
    package static let defaultPath = "/etc/ssl/certs/ca-certificates.crt"
    /// The store at `defaultPath`, shared by every evaluator so reloads do not reread it.
    package static let shared = SystemTrustStore(path: defaultPath)

    /// The bundle's path.
    package let path: String
    private let loaded = Mutex<Result<TrustAnchors, TrustLoadError>?>(nil)

    /// A store read from `path` on first use.
    package init(path: String) { self.path = path }

    /// The anchors, read on the first call; later calls, failed or not, return the same.
    package func anchors() -> Result<TrustAnchors, TrustLoadError> {
        loaded.withLock { loaded in
            if let loaded { return loaded }
            // Lenient per certificate: one the parser cannot read should not cost the others.
            let result = Result { () throws(TrustLoadError) in
                let certificates = try CertificateFile.certificates(at: path, skippingUnreadable: true)
                return TrustAnchors(certificates)
            }
            loaded = result
            return result
        }
    }
}

/// Reading certificates from a file: PEM (any number of CERTIFICATE blocks) or one DER.
enum CertificateFile {
    /// Files larger than this are not certificates we would want (the system bundle is ~200 KiB).
    static let sizeLimit = 4 << 20

    package static func certificates(at path: String, skippingUnreadable: Bool = false) throws(TrustLoadError) -> [Certificate] {
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.contents(of: path, limit: sizeLimit)
        } catch {
            // `contents` opens without blocking and refuses what is not a regular file.
            let reason = switch error {
            case .isDirectory: "a directory, not a certificate file"
            case .invalidArgument: "not a regular file (a FIFO, device or socket)"
            case .fileTooLarge: "larger than \(sizeLimit >> 20) MiB"
            case .tooManySymbolicLinkLevels: "a loop of symbolic links"
            default: "cannot read: \(error)"
            }
            throw TrustLoadError(path: path, reason: reason)
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.contains("-----BEGIN ") else {
            do {
                return [try Certificate(derEncoded: bytes)]
            } catch {
                throw TrustLoadError(path: path, reason: "not a certificate (neither PEM nor DER): \(error)")
            }
        }
        let documents: [PEMDocument]
        do {
            documents = try PEMDocument.parseMultiple(pemString: text)
        } catch {
            throw TrustLoadError(path: path, reason: "malformed PEM: \(error)")
        }
        var certificates: [Certificate] = []
        for (index, document) in documents.enumerated() where document.discriminator == Certificate.defaultPEMDiscriminator {
            do {
                certificates.append(try Certificate(derEncoded: document.derBytes))
            } catch where skippingUnreadable {
                continue
            } catch {
                throw TrustLoadError(path: path, reason: "PEM block \(index + 1) is not a certificate: \(error)")
            }
        }
        guard !certificates.isEmpty else { throw TrustLoadError(path: path, reason: "no certificate in the PEM") }
        return certificates
    }
}
