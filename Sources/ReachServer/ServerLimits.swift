/// How much of reachd any local user may take. The socket is mode 0666: every local user is
/// a client, so each limit is a security property, not a nicety. Modelled on systemd's
/// sd-varlink (4,096 connections, 1,024 per uid, bounded buffers).
package struct ServerLimits: Sendable, Equatable {
    /// Open connections, all users together.
    package var connections = 4096
    /// Open connections of one uid (from `SO_PEERCRED`).
    package var connectionsPerUser = 1024
    /// Bytes of requests received but not yet complete (a message without its NUL), all
    /// connections together: what a crowd of slow or hostile writers can make reachd hold.
    package var bufferedBytes = 32 << 20
    /// The same, for the connections of one uid.
    package var bufferedBytesPerUser = 4 << 20
    /// How long a message may stay half-sent before the connection is closed.
    package var partialMessageDeadline: Duration = .seconds(10)
    /// How deep a request's JSON may nest. reachd's deepest request nests 3 levels; the
    /// cap keeps decoding cost linear and tiny whatever a client sends.
    package var nestingDepth = 32

    /// The built-in limits.
    /// Target streams (`SubscribeTarget`) in all, and per uid: each costs a FIB lookup per
    /// address with every evaluation.
    package var targetStreams = 1024
    /// Target streams per uid.
    package var targetStreamsPerUser = 64
    /// Target checks and streams waiting for a name or a lookup, per uid: a client cannot
    /// fill the resolver's threads or the engine's mailbox for everyone.
    package var targetsInFlightPerUser = 16
    /// Target checks and streams started per second per uid (the burst allowed is as
    /// large): each costs resolution and FIB lookups, so one user cannot make reachd busy
    /// for everyone.
    package var targetChecksPerSecondPerUser = 1000
    /// `CheckConnectivity` calls per minute per uid (each probes the operator's server).
    package var connectivityChecksPerMinutePerUser = 6

    package init() {}
}

/// Who holds how many connections and buffered bytes, and whether one more is allowed.
/// Pure bookkeeping, owned by the event loop; the server asks before it admits a
/// connection or keeps a client's partial message.
struct ServerBudget: Equatable {
    /// Which limit a client ran into.
    enum Limit: String, Error, Equatable, Sendable {
        case connections = "connections"
        case connectionsPerUser = "connections per user"
        case bufferedBytes = "buffered request bytes"
        case bufferedBytesPerUser = "buffered request bytes per user"
    }

    package let limits: ServerLimits
    private(set) var connections = 0
    private(set) var buffered = 0
    private var connectionsByUser: [UInt32: Int] = [:]
    private var bufferedByUser: [UInt32: Int] = [:]

    init(limits: ServerLimits) {
        self.limits = limits
    }

    /// Admits one more connection of `uid`, or names the limit it would break.
    package mutating func admit(uid: UInt32) -> Limit? {
        if connections >= limits.connections { return .connections }
        if connectionsByUser[uid, default: 0] >= limits.connectionsPerUser { return .connectionsPerUser }
        connections += 1
        connectionsByUser[uid, default: 0] += 1
        return nil
    }

    /// A connection of `uid` closed (with `bufferedBytes` still held, now freed).
    package mutating func release(uid: UInt32, bufferedBytes: Int) {
        _ = rebuffer(uid: uid, from: bufferedBytes, to: 0)
        connections -= 1
        connectionsByUser[uid, default: 1] -= 1
        if connectionsByUser[uid] == 0 { connectionsByUser[uid] = nil }
    }

    /// A connection of `uid` now holds `new` partial bytes instead of `old`. Growth past a
    /// limit is refused (the books keep `old`): the caller closes that connection.
    mutating func rebuffer(uid: UInt32, from old: Int, to new: Int) -> Limit? {
        let growth = new - old
        if growth > 0 {
            if buffered + growth > limits.bufferedBytes { return .bufferedBytes }
            if bufferedByUser[uid, default: 0] + growth > limits.bufferedBytesPerUser { return .bufferedBytesPerUser }
        }
        buffered += growth
        bufferedByUser[uid, default: 0] += growth
        if bufferedByUser[uid] == 0 { bufferedByUser[uid] = nil }
        return nil
    }

    /// Connections `uid` holds now.
    package func connections(of uid: UInt32) -> Int { connectionsByUser[uid, default: 0] }
}
