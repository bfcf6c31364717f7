/// Who holds which connections to the metrics endpoint, and whether one more is allowed.
/// Pure bookkeeping, owned by the event loop; `MetricsEndpoint` asks before a connection
/// gets a handler and carries out what it decides.
///
/// Like the Varlink socket's `ServerBudget`, with a cap per peer below the total: one
/// client holding connections open cannot take every slot from a scraper. A peer is only
/// an address on TCP, and 127.0.0.1 is every local program's, so slow connections may
/// share the scraper's peer: at a cap, a connection still sending its request head gives
/// its slot to the new one, and only connections being answered make a cap refuse.
package struct MetricsAdmission: Equatable {
    /// What the endpoint allows.
    package struct Limits: Equatable {
        /// Connections open at once, all peers together.
        var connections = 32
        /// Connections open at once from one peer: a uid on a Unix socket, an address on TCP.
        var connectionsPerPeer = 4
        /// How long a connection may take to send its request head (a scraper sends it at once).
        var headDeadline: Duration = .seconds(3)
        /// How long a connection may stay open, whatever the client does.
        var connectionDeadline: Duration = .seconds(10)
        /// Bytes a connection may send in all: a request head (no request here has a body).
        var requestBytes = 8 << 10
    }

    /// Who is at the other end: what the per-peer cap counts.
    package enum Peer: Hashable, CustomStringConvertible {
        /// A Unix-socket client, by its uid (`SO_PEERCRED`).
        case user(UInt32)
        /// A TCP client, by its address (the port is the client's to choose).
        case address(String)
        /// A peer the kernel did not name; counted as one peer.
        case unknown

        package var description: String {
            switch self {
            case let .user(uid): "uid \(uid)"
            case let .address(address): address
            case .unknown: "an unknown peer"
            }
        }
    }

    /// Which limit a connection ran into.
    package enum Refusal: String, Error, Equatable {
        case connections = "metrics connections"
        case connectionsPerPeer = "metrics connections per peer"
    }

    /// One connection in the books, numbered from 1 in accept order: a lower number is older.
    package struct Connection: Hashable, Comparable, Sendable, CustomStringConvertible {
        /// Its number.
        package let id: Int

        /// Whether `lhs` was accepted before `rhs`.
        package static func < (lhs: Self, rhs: Self) -> Bool { lhs.id < rhs.id }

        /// Its number, as the log shows it.
        package var description: String { "\(id)" }
    }

    /// A connection that must close at once to make room for a new one.
    package struct Eviction: Equatable {
        /// The connection to close; the books no longer count it.
        package let connection: Connection
        /// Whose it is.
        package let peer: Peer
        /// The cap the new connection would have broken.
        package let limit: Refusal
    }

    /// What to do with a new connection.
    package enum Decision: Equatable {
        /// Serve it as `Connection`.
        case admit(Connection)
        /// Close `Eviction.connection` (still sending its request head), then serve the new one.
        case admitEvicting(Connection, Eviction)
        /// Close it: every connection counted against `Refusal` is being answered.
        case refuse(Refusal)
    }

    /// An open connection's peer, and whether its request has arrived whole (then it is
    /// being answered and never evicted).
    private struct Entry: Equatable {
        var peer: Peer
        var requestComplete = false
    }

    package let limits: Limits
    private var open: [Connection: Entry] = [:]
    private var lastID = 0

    init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Decides about a new connection of `peer`. At the per-peer cap (whatever the total),
    /// that peer's oldest connection still sending its request head is evicted; at the total
    /// cap alone, the oldest such connection of anyone: it has had longest to send a head a
    /// scraper sends at once. With none to evict, the cap refuses.
    package mutating func admit(_ peer: Peer) -> Decision {
        var eviction: Eviction?
        if connections(of: peer) >= limits.connectionsPerPeer {
            guard let oldest = oldestIncomplete(of: peer) else { return .refuse(.connectionsPerPeer) }
            eviction = Eviction(connection: oldest.connection, peer: oldest.peer, limit: .connectionsPerPeer)
        } else if connections >= limits.connections {
            guard let oldest = oldestIncomplete(of: nil) else { return .refuse(.connections) }
            eviction = Eviction(connection: oldest.connection, peer: oldest.peer, limit: .connections)
        }
        if let eviction { open[eviction.connection] = nil }
        lastID += 1
        let connection = Connection(id: lastID)
        open[connection] = Entry(peer: peer)
        return eviction.map { .admitEvicting(connection, $0) } ?? .admit(connection)
    }

    /// `connection`'s request has arrived whole: it is being answered, and keeps its slot.
    package mutating func requestComplete(_ connection: Connection) {
        open[connection]?.requestComplete = true
    }

    /// `connection` closed; an evicted or unknown one is no longer in the books.
    package mutating func release(_ connection: Connection) {
        open[connection] = nil
    }

    /// Connections open now, all peers together.
    package var connections: Int { open.count }

    /// Connections `peer` holds now.
    package func connections(of peer: Peer) -> Int { open.values.count { $0.peer == peer } }

    /// The oldest connection of `peer` (of anyone if nil) still sending its request head.
    /// A scan: the books hold at most `limits.connections` entries.
    private func oldestIncomplete(of peer: Peer?) -> (connection: Connection, peer: Peer)? {
        open.filter { !$0.value.requestComplete && (peer == nil || $0.value.peer == peer) }
            .min { $0.key < $1.key }
            .map { ($0.key, $0.value.peer) }
    }
}
