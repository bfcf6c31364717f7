import Synchronization
import X509

/// Certificates a server sent, as the `Verifier` looks issuers up in them, on a budget: each
/// candidate handed out costs the search a signature check, and certificates that all share
/// one name and sign each other would make it try every order of them. Once the budget is
/// spent no more candidates are handed out, so the search ends.
struct SentCertificates: CustomCertificateStore {
    private var bySubject: [DistinguishedName: [Certificate]]
    private let budget: SignatureBudget

    /// `certificates`, drawing on `budget`.
    init(_ certificates: some Sequence<Certificate>, budget: SignatureBudget) {
        bySubject = Dictionary(grouping: certificates, by: \.subject)
        self.budget = budget
    }

    /// The certificates named `subject`, if the budget still pays for all of them.
    subscript(subject: DistinguishedName) -> [Certificate]? {
        get async { bySubject[subject].flatMap(budget.spend) }
    }

    /// Whether `certificate` was sent, byte for byte.
    func contains(_ certificate: Certificate) async -> Bool {
        bySubject[certificate.subject]?.contains(certificate) ?? false
    }

    /// Adds certificates (the `Verifier` never does).
    mutating func append(contentsOf certificates: some Sequence<Certificate>) {
        for certificate in certificates { bySubject[certificate.subject, default: []].append(certificate) }
    }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.budget === rhs.budget && lhs.bySubject == rhs.bySubject }

    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(budget)) }
}

/// How many signature checks one evaluation may still make on sent certificates.
final class SignatureBudget: Sendable {
    private let remaining: Mutex<Int?>

    /// A budget of `limit` checks.
    init(_ limit: Int) { remaining = Mutex(limit) }

    /// Whether a lookup was refused for want of budget.
    var isSpent: Bool { remaining.withLock { $0 == nil } }

    /// `candidates` if the budget pays for them all; nil, and the budget spent, if not.
    func spend(_ candidates: [Certificate]) -> [Certificate]? {
        remaining.withLock { remaining in
            guard let left = remaining, left >= candidates.count else {
                remaining = nil
                return nil
            }
            remaining = left - candidates.count
            return candidates
        }
    }
}
