import ReachProtocol

/// Why reachd refused a client or cut one off. `label` names the series of
/// `reachd_connections_refused_total{reason}` and keys the per-kind log rate limit; the
/// log line's wording lives with whoever logs it, so rewording a line renames no series.
package enum RefusalReason: Hashable, Sendable, CaseIterable {
    /// The Varlink socket's connections, all users together.
    case connections
    /// The Varlink socket's connections of one uid.
    case connectionsPerUser
    /// Bytes of unfinished requests, all connections together.
    case bufferedBytes
    /// Bytes of unfinished requests of one uid.
    case bufferedBytesPerUser
    /// A message left half-sent past `ServerLimits.partialMessageDeadline`.
    case partialMessageDeadline
    /// A message longer than `VarlinkFraming.defaultMaximumMessageSize`.
    case messageTooLarge
    /// A NUL with no message before it.
    case emptyMessage
    /// A message that is not a Varlink call (bad JSON, too deep, wrong shape).
    case malformedMessage
    /// A subscribed connection sent more than a message's worth of calls it may not make.
    case subscriberKeptSending
    /// The metrics endpoint's connections, all peers together: a new one refused, or a slow
    /// one evicted to make room for it.
    case metricsConnections
    /// The metrics endpoint's connections of one peer: refused, or a slow one evicted.
    case metricsConnectionsPerPeer
    /// A metrics client sent no request head in time.
    case metricsRequestDeadline
    /// A metrics connection stayed open too long.
    case metricsConnectionDeadline
    /// A metrics client sent too many bytes.
    case metricsRequestSize

    /// The metric's label value. Dashboards and alerts select on these: never reword one.
    package var label: String {
        switch self {
        case .connections: "connections"
        case .connectionsPerUser: "connections per user"
        case .bufferedBytes: "buffered request bytes"
        case .bufferedBytesPerUser: "buffered request bytes per user"
        case .partialMessageDeadline: "partial message deadline"
        case .messageTooLarge: "message larger than \(VarlinkFraming.defaultMaximumMessageSize) bytes"
        case .emptyMessage: "empty message"
        case .malformedMessage: "malformed message"
        case .subscriberKeptSending: "a subscribed connection kept sending calls"
        case .metricsConnections: "metrics connections"
        case .metricsConnectionsPerPeer: "metrics connections per peer"
        case .metricsRequestDeadline: "metrics request deadline"
        case .metricsConnectionDeadline: "metrics connection deadline"
        case .metricsRequestSize: "metrics request size"
        }
    }

    /// The reason a framing error gives.
    package init(_ error: VarlinkFramingError) {
        switch error {
        case .messageTooLarge: self = .messageTooLarge
        case .emptyMessage: self = .emptyMessage
        }
    }

    /// The reason the metrics endpoint's admission gives.
    package init(_ refusal: MetricsAdmission.Refusal) {
        switch refusal {
        case .connections: self = .metricsConnections
        case .connectionsPerPeer: self = .metricsConnectionsPerPeer
        }
    }
}
