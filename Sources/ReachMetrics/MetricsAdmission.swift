/// Who holds how many connections to the metrics endpoint, and whether one more is
/// allowed. Pure bookkeeping, owned by the event loop; `MetricsEndpoint` asks before a
/// connection gets a handler.
///
/// Like the Varlink socket's `ServerBudget`, with a cap per peer below the total: one
/// client holding connections open cannot take every slot from a scraper.
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

    package let limits: Limits
    private(set) var connections = 0
    private var byPeer: [Peer: Int] = [:]

    init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Admits one more connection of `peer`, or names the limit it would break.
    package mutating func admit(_ peer: Peer) -> Refusal? {
        if connections >= limits.connections { return .connections }
        if byPeer[peer, default: 0] >= limits.connectionsPerPeer { return .connectionsPerPeer }
        connections += 1
        byPeer[peer, default: 0] += 1
        return nil
    }

    /// A connection of `peer` closed.
    package mutating func release(_ peer: Peer) {
        guard let held = byPeer[peer] else { return }
        connections -= 1
        byPeer[peer] = held > 1 ? held - 1 : nil
    }

    /// Connections `peer` holds now.
    package func connections(of peer: Peer) -> Int { byPeer[peer, default: 0] }
}
