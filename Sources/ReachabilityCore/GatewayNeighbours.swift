/// A neighbour entry's state as the kernel keeps it (`NUD_*`); `ip neigh` prints the raw
/// values in capitals.
public enum NeighbourState: String, Sendable, Hashable, Codable, CaseIterable {
    /// No state bit set (`NUD_NONE`).
    case none
    /// Resolution is under way: solicitations sent, no answer yet (`NUD_INCOMPLETE`).
    case incomplete
    /// Confirmed reachable recently (`NUD_REACHABLE`).
    case reachable
    /// Known, but not confirmed lately; confirmed again when traffic needs it (`NUD_STALE`).
    case stale
    /// Waiting a moment for upper-layer confirmation before probing (`NUD_DELAY`).
    case delay
    /// Being probed again (`NUD_PROBE`).
    case probe
    /// Resolution failed: the neighbour does not answer (`NUD_FAILED`).
    case failed
    /// The device needs no neighbour resolution (`NUD_NOARP`; point-to-point links).
    case noARP = "noarp"
    /// Configured statically (`NUD_PERMANENT`).
    case permanent

    /// Maps the kernel's `ndm_state` bits; the kernel sets one at a time.
    package init(kernelValue: UInt16) {
        switch kernelValue {
        case _ where kernelValue & 0x80 != 0: self = .permanent
        case _ where kernelValue & 0x40 != 0: self = .noARP
        case _ where kernelValue & 0x20 != 0: self = .failed
        case _ where kernelValue & 0x10 != 0: self = .probe
        case _ where kernelValue & 0x08 != 0: self = .delay
        case _ where kernelValue & 0x04 != 0: self = .stale
        case _ where kernelValue & 0x02 != 0: self = .reachable
        case _ where kernelValue & 0x01 != 0: self = .incomplete
        default: self = .none
        }
    }
}

/// A gateway as its neighbour entry is keyed: the interface it is reached on and its address.
package struct GatewayKey: Sendable, Hashable {
    /// The output interface of the route through the gateway.
    package var interfaceIndex: Int32
    /// The gateway's address.
    package var address: IPAddress

    /// Creates a key.
    package init(interfaceIndex: Int32, address: IPAddress) {
        self.interfaceIndex = interfaceIndex
        self.address = address
    }
}

/// What reachd knows about one watched gateway's neighbour entry.
package struct GatewayNeighbour: Sendable, Hashable {
    /// The state as judged (`GatewayNeighbours.next`): an INCOMPLETE retry after FAILED stays FAILED.
    package var state: NeighbourState
    /// Since when (seconds since the epoch) the entry has been failed, or not failed.
    package var since: Int

    /// Creates an entry.
    package init(state: NeighbourState, since: Int) {
        self.state = state
        self.since = since
    }
}

/// One gateway of an interface as `ListInterfaces` reports it. Field names are the wire
/// names of `io.reachd.Reachability.GatewayNeighbour`.
public struct GatewayNeighbourDescription: Sendable, Hashable, Codable {
    /// The gateway's address.
    public var address: String
    /// Its neighbour entry's state: FAILED as soon as the kernel says so; among the others,
    /// the last one reachd read (it is not woken for every REACHABLE/STALE/DELAY/PROBE turn).
    public var state: NeighbourState
    /// Since when (seconds since the epoch) it has been failed, or not failed.
    public var since: Int

    /// Creates a description.
    public init(address: String, state: NeighbourState, since: Int) {
        self.address = address
        self.state = state
        self.since = since
    }
}

/// Which gateways' neighbour entries matter, and what a failed one means. Pure.
///
/// IPv4 keeps sending through the route its lookup chose, so a route through a gateway
/// whose entry the kernel marked FAILED is broken. IPv6 already prefers routers whose
/// neighbours are reachable, so the lookup moves by itself; either way, only the gateway of
/// the route actually chosen is judged. INCOMPLETE alone is a first resolution, not a failure;
/// PERMANENT and NOARP entries never fail, and a point-to-point link has no neighbour.
package enum GatewayNeighbours {
    /// The gateways whose neighbour entries are followed: those of the unicast default
    /// routes and of each family's lookup, leaving out point-to-point links.
    package static func watched(in snapshot: NetworkSnapshot) -> Set<GatewayKey> {
        var keys = Set<GatewayKey>()
        func add(_ interfaceIndex: Int32, _ gateway: IPAddress?) {
            guard let gateway, let link = snapshot.links[interfaceIndex], !InterfaceRoles.isPointToPoint(link) else { return }
            keys.insert(GatewayKey(interfaceIndex: interfaceIndex, address: gateway))
        }
        for route in snapshot.defaultRoutes where route.type == .unicast {
            for hop in route.nextHops { add(hop.interfaceIndex, hop.gateway) }
        }
        for case let .route(result) in snapshot.lookups.values where result.type == .unicast {
            add(result.outputInterface, result.gateway)
        }
        return keys
    }

    /// The most gateways no route uses that stay followed (`followed`).
    package static let retainedLimit = 8

    /// The gateways whose entries are followed: the `wanted` ones, and those followed before
    /// while no more than `limit` of them are left over. A default route that flaps takes its
    /// gateway out of `wanted` and back at every flap; keeping it followed spares a filter
    /// refit and a neighbour read each time, and its entry stays current for its return.
    package static func followed(wanted: Set<GatewayKey>, before: Set<GatewayKey>, limit: Int = retainedLimit) -> Set<GatewayKey> {
        let leftOver = before.subtracting(wanted)
        return leftOver.count <= limit ? wanted.union(leftOver) : wanted
    }

    /// The state to keep after the kernel reported `reported` (nil: the entry is gone) for an
    /// entry judged `previous`: a retry (INCOMPLETE) of a failed entry is still failed. A
    /// removed entry is nothing known: deleting one (`ip neigh flush`) reports it FAILED, then gone.
    package static func next(previous: NeighbourState?, reported: NeighbourState?) -> NeighbourState? {
        if previous == .failed && reported == .incomplete { return .failed }
        return reported
    }

    /// Whether the entry says the gateway answers (or needs no answer: PERMANENT, NOARP), so
    /// that only its failure or removal is news; not for FAILED, INCOMPLETE, NONE or no entry.
    package static func answers(_ state: NeighbourState?) -> Bool {
        switch state {
        case .reachable?, .stale?, .delay?, .probe?, .permanent?, .noARP?: true
        case .none?, .incomplete?, .failed?, nil: false
        }
    }

    /// Whether traffic through `hop` goes to a gateway the kernel could not resolve.
    package static func isUnreachable(_ hop: NextHop, in snapshot: NetworkSnapshot) -> Bool {
        guard let gateway = hop.gateway else { return false }
        return snapshot.gatewayNeighbours[GatewayKey(interfaceIndex: hop.interfaceIndex, address: gateway)]?.state == .failed
    }

    /// The failed gateways the lookups chose, IPv4 first (what a broken path names).
    package static func failedGateways(in snapshot: NetworkSnapshot) -> [IPAddress] {
        AddressFamily.allCases.compactMap { family -> IPAddress? in
            guard case let .route(result)? = snapshot.lookups[family],
                  isUnreachable(NextHop(interfaceIndex: result.outputInterface, gateway: result.gateway), in: snapshot) else { return nil }
            return result.gateway
        }
    }
}
