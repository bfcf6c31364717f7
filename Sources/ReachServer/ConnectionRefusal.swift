import ReachMetrics
import ReachProtocol

/// Why the Varlink server refused a connection or closed one for what its client did:
/// the typed reason (the metric's label, the log rate limit's kind) and the log line's words.
enum ConnectionRefusal: Equatable, Sendable {
    /// Accepting a connection of `uid` would break a connection limit.
    case admission(ServerBudget.Limit, uid: UInt32)
    /// The connection's unfinished message would break a buffered-bytes limit.
    case buffering(ServerBudget.Limit)
    /// A message stayed half-sent for `deadline`.
    case partialMessage(deadline: Duration)
    /// The bytes cannot be cut into messages.
    case framing(VarlinkFramingError)
    /// A message is not a call reachd can read (the problem, one line).
    case malformed(String)
    /// A subscribed connection sent more calls than it may leave unanswered.
    case keptSendingWhileSubscribed

    /// What the refusal counts as.
    var reason: RefusalReason {
        switch self {
        case let .admission(limit, _), let .buffering(limit): limit.reason
        case .partialMessage: .partialMessageDeadline
        case let .framing(error): RefusalReason(error)
        case .malformed: .malformedMessage
        case .keptSendingWhileSubscribed: .subscriberKeptSending
        }
    }

    /// The log line's words (after the connection's number and uid, when it has them).
    var line: String {
        switch self {
        case let .admission(limit, uid): "refused a connection of uid \(uid): limit on \(limit.rawValue) reached"
        case let .buffering(limit): "its unfinished message would exceed the limit on \(limit.rawValue)"
        case let .partialMessage(deadline): "a message was left half-sent for \(deadline)"
        case let .framing(error): "\(error)"
        case let .malformed(problem): "malformed message: \(problem)"
        case .keptSendingWhileSubscribed: "a subscribed connection kept sending calls"
        }
    }
}

extension ServerBudget.Limit {
    /// The refusal this limit counts as.
    var reason: RefusalReason {
        switch self {
        case .connections: .connections
        case .connectionsPerUser: .connectionsPerUser
        case .bufferedBytes: .bufferedBytes
        case .bufferedBytesPerUser: .bufferedBytesPerUser
        }
    }
}
