/// What a `ReachabilityManager` tells its block: the status, the one before, and why.
///
/// AFNetworking's block receives a bare status; this carries the reason too (which fields
/// of reachd's answer changed, why the host or target is not reachable, or that reachd
/// itself is out of reach).
public struct ReachabilityChange: Sendable, Hashable, CustomStringConvertible {
    /// Why the manager calls its block.
    public enum Cause: Sendable, Hashable {
        /// reachd's first answer after `startMonitoring()`.
        case firstAnswer
        /// The network changed these parts of the answer (`status` for the status or its
        /// reason, `reachability`, `primaryInterface`, `flags`).
        case networkChanged([PathChange])
        /// reachd restarted, and its new run answers differently in these parts.
        case daemonRestarted([PathChange])
        /// reachd answers again after it was unavailable.
        case daemonAvailable
        /// reachd cannot be reached; the status is `unknown` until it answers again.
        case daemonUnavailable(ReachClientError)
    }

    /// The status now.
    public var status: ReachabilityStatus
    /// The status before this change (`unknown` for the first answer).
    public var previousStatus: ReachabilityStatus
    /// Why the block is called.
    public var cause: Cause
    /// Why the host or target is not reachable (`noCarrier`, `nameNotFound`, …); nil when it is.
    public var unsatisfiedReason: UnsatisfiedReason?
    /// The interface traffic leaves by, when reachable.
    public var primaryInterface: String?
    /// The SCNetworkReachability flags of the answer.
    public var flags: ReachabilityFlags

    /// Creates a change.
    public init(
        status: ReachabilityStatus, previousStatus: ReachabilityStatus, cause: Cause,
        unsatisfiedReason: UnsatisfiedReason? = nil, primaryInterface: String? = nil, flags: ReachabilityFlags = []
    ) {
        self.status = status
        self.previousStatus = previousStatus
        self.cause = cause
        self.unsatisfiedReason = unsatisfiedReason
        self.primaryInterface = primaryInterface
        self.flags = flags
    }

    /// One line, e.g. `reachableViaWired via eth0 (network changed: status, reachability, primaryInterface)`.
    public var description: String {
        var text = status.rawValue
        if let primaryInterface { text += " via \(primaryInterface)" }
        if let unsatisfiedReason { text += ": \(unsatisfiedReason.rawValue)" }
        switch cause {
        case .firstAnswer: text += " (first answer)"
        case let .networkChanged(changes): text += " (network changed: \(changes.map(\.rawValue).joined(separator: ", ")))"
        case let .daemonRestarted(changes): text += " (reachd restarted; changed: \(changes.map(\.rawValue).joined(separator: ", ")))"
        case .daemonAvailable: text += " (reachd answers again)"
        case let .daemonUnavailable(error): text += " (\(error))"
        }
        return text
    }
}

/// The parts of an answer a manager reports: the same for the system path and a target.
struct ReachabilityAnswer: Sendable, Hashable {
    var status: ReachabilityStatus
    var unsatisfiedReason: UnsatisfiedReason?
    var primaryInterface: String?
    var flags: ReachabilityFlags

    init(status: ReachabilityStatus, unsatisfiedReason: UnsatisfiedReason? = nil, primaryInterface: String? = nil, flags: ReachabilityFlags = []) {
        self.status = status
        self.unsatisfiedReason = unsatisfiedReason
        self.primaryInterface = primaryInterface
        self.flags = flags
    }

    /// The system path's.
    init(_ path: Path) {
        self.init(status: path.reachability, unsatisfiedReason: path.unsatisfiedReason, primaryInterface: path.primaryInterface, flags: path.flags)
    }

    /// A target's.
    init(_ path: TargetPath) {
        self.init(status: path.reachability, unsatisfiedReason: path.unsatisfiedReason, primaryInterface: path.primaryInterface, flags: path.flags)
    }

    /// What differs from `old`, in `PathChange`'s order.
    func changes(since old: ReachabilityAnswer) -> [PathChange] {
        var changes: [PathChange] = []
        if unsatisfiedReason != old.unsatisfiedReason || (status == .notReachable) != (old.status == .notReachable) {
            changes.append(.status)
        }
        if status != old.status { changes.append(.reachability) }
        if primaryInterface != old.primaryInterface { changes.append(.primaryInterface) }
        if flags != old.flags { changes.append(.flags) }
        return changes
    }
}

/// When a manager calls its block and with what: pure, fed with reachd's answers and
/// outages in order. The block hears the first answer, every answer that differs from the
/// last one told, and reachd becoming unavailable; never the same answer twice.
struct ReachabilityTracker: Sendable, Hashable {
    /// The last answer told; nil before the first and while reachd is unavailable.
    private(set) var answer: ReachabilityAnswer?
    /// The status now: `unknown` before the first answer and while reachd is unavailable.
    private(set) var status = ReachabilityStatus.unknown
    /// The last change told.
    private(set) var lastChange: ReachabilityChange?

    /// An answer arrived; returns what to tell, or nil when nothing the manager reports changed.
    mutating func received(_ next: ReachabilityAnswer, kind: AnswerKind) -> ReachabilityChange? {
        let cause: ReachabilityChange.Cause
        switch (kind, answer) {
        case (.first, _):
            cause = .firstAnswer
        case (_, nil):
            cause = .daemonAvailable
        case let (_, previous?):
            let changes = next.changes(since: previous)
            guard !changes.isEmpty else { return nil }
            cause = kind == .restarted ? .daemonRestarted(changes) : .networkChanged(changes)
        }
        return tell(ReachabilityChange(
            status: next.status, previousStatus: status, cause: cause, unsatisfiedReason: next.unsatisfiedReason,
            primaryInterface: next.primaryInterface, flags: next.flags
        ), answer: next)
    }

    /// reachd cannot be reached: the status becomes `unknown`.
    mutating func unavailable(_ error: ReachClientError) -> ReachabilityChange? {
        tell(ReachabilityChange(status: .unknown, previousStatus: status, cause: .daemonUnavailable(error)), answer: nil)
    }

    private mutating func tell(_ change: ReachabilityChange, answer: ReachabilityAnswer?) -> ReachabilityChange {
        self.answer = answer
        status = change.status
        lastChange = change
        return change
    }
}
