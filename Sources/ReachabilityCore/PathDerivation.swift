/// The derivation of reachability: snapshot in, `Path` out. Pure, total and the one
/// place that decides what "reachable" means.
///
/// Per family, the kernel's FIB lookup names the route internet traffic would take
/// (policy rules, VPN tables and blackhole/unreachable/prohibit routes included). That
/// route only counts when its output interface can carry traffic now:
///
/// 1. the interface exists, is not ignored (by policy, or as a host-internal bridge:
///    `InterfaceRoles`) and is allowed by the filter,
/// 2. it is administratively up (`interfaceDown`),
/// 3. it has carrier and the route is not `linkdown` (`noCarrier`) — a route through an
///    unplugged cable is not reachability, whatever GLib says. A dormant interface needs
///    carrier too; its DORMANT operstate and a `linkdown` flag on its routes (it is not
///    oper-up yet) are check 5's business. An overlay needs its underlay's carrier too,
///    which the kernel does not pass up to it,
/// 4. it has a usable source address of that family: not link-local, not tentative,
///    not DAD-failed (`noAddress`),
/// 5. it is not dormant; a dormant interface waits for 802.1X or a dial-up and makes the
///    path `requiresConnection`,
/// 6. its gateway's neighbour entry is not FAILED (`gatewayUnreachable`, `GatewayNeighbours`).
///
/// When the lookup's interface is ignored or filtered out, the tracked default routes
/// through allowed interfaces are tried instead, lowest metric first. When the lookup
/// finds nothing, the tracked default routes still explain why (a `linkdown` route
/// hidden by `ignore_routes_with_linkdown`, say).
package enum PathDerivation {
    /// Derives the path for `snapshot` under `policy`, restricted to interfaces `filter`
    /// allows; `connectivity` (the probes' and captive-portal facts) gives a satisfied
    /// path its connectivity and `interventionRequired`.
    package static func derive(
        _ snapshot: NetworkSnapshot, policy: InterfacePolicy = InterfacePolicy(), filter: PathFilter = .none,
        connectivity: ConnectivityTable = [:]
    ) -> Path {
        let context = Context(snapshot: snapshot, policy: policy, filter: filter)
        let outcomes = AddressFamily.allCases.map { context.evaluate(family: $0) }

        let usable = outcomes.compactMap(\.usable)
        let ready = usable.filter { !$0.requiresConnection }
        // IPv4 through a CLAT leaves by the IPv6 uplink: that one is the primary interface.
        let ipv4ViaCLAT = ready.first { $0.family == .ipv4 }.map { InterfaceRoles.isCLAT($0.interfaceIndex, in: snapshot) } ?? false
        let primaryRoute = (ipv4ViaCLAT ? ready.first { $0.family == .ipv6 } : nil) ?? ready.first ?? usable.first
        let primaryLink = primaryRoute.flatMap { snapshot.links[$0.interfaceIndex] }
        let primaryType = primaryLink.map(policy.type(of:))

        let status: PathStatus
        let reason: UnsatisfiedReason?
        if !ready.isEmpty {
            status = .satisfied
            reason = nil
        } else if !usable.isEmpty {
            status = .requiresConnection
            reason = .connectionRequired
        } else {
            status = .unsatisfied
            reason = context.hasCandidateInterface ? Self.mostSpecificReason(outcomes.compactMap(\.failure)) : .noInterface
        }

        var flags: ReachabilityFlags = []
        if let route = primaryRoute, let link = primaryLink {
            flags.insert(.reachable)
            if route.requiresConnection { flags.insert(.connectionRequired) }
            if route.gateway == nil && !InterfaceRoles.isPointToPoint(link) { flags.insert(.isDirect) }
            if primaryType == .cellular { flags.insert(.isWWAN) }
            if Self.isTransient(link) { flags.insert(.transientConnection) }
        }
        // Probes speak for a path that is there; without one, the kernel alone answers.
        let facts = status == .satisfied ? primaryLink.flatMap { connectivity[$0.index] } : nil
        if facts?.requiresIntervention == true { flags.insert(.interventionRequired) }
        let expense = primaryLink.flatMap { link in
            policy.expense(of: link, in: snapshot, networkManager: connectivity[link.index]?.networkManager,
                           dhcpMetered: connectivity[link.index]?.dhcpMetered ?? false)
        }

        let supportsIPv4 = ready.contains { $0.family == .ipv4 }
        let supportsIPv6 = ready.contains { $0.family == .ipv6 }
        let nat64Prefixes = ready.first { $0.family == .ipv6 }.flatMap { snapshot.nat64Prefixes[$0.interfaceIndex] }
        return Path(
            status: status,
            unsatisfiedReason: reason,
            reachability: status == .satisfied ? Self.reachability(for: primaryType) : .notReachable,
            flags: flags,
            primaryInterface: primaryLink?.name,
            primaryInterfaceType: primaryType,
            availableInterfaces: context.availableInterfaces(primary: primaryLink),
            // The routes the path runs over: the ready ones when satisfied; a dormant route's
            // gateway is no gateway of a path that runs over another family's interface.
            gateways: reason == .gatewayUnreachable
                ? GatewayNeighbours.failedGateways(in: snapshot).map(\.description)
                : (ready.isEmpty ? usable : ready).flatMap { context.gateways(of: $0) },
            supportsIPv4: supportsIPv4,
            supportsIPv6: supportsIPv6,
            supportsDNS: snapshot.hasNameserver && status == .satisfied,
            isExpensive: expense != nil,
            expensiveReason: expense,
            isConstrained: primaryLink.map(policy.isConstrained) ?? false,
            connectivity: status == .satisfied ? facts?.combined ?? .unknown : context.offlineConnectivity,
            captivePortal: facts?.captivePortal,
            connectivityCause: facts?.cause,
            connectivityCauseSince: facts?.causeSince,
            connectivityCauseDestinations: facts?.causeDestinations,
            nat64Prefixes: nat64Prefixes,
            // Native IPv4 wins: a dual-stack network's prefix changes nothing for IPv4.
            ipv4ViaNAT64: supportsIPv4 ? nil : nat64Prefixes?.first,
            ipv4ProvidedBy: ipv4ViaCLAT ? .clat : nil,
            linkQuality: status == .satisfied ? facts?.linkQuality?.linkQuality ?? .unknown : .unknown
        )
    }

    /// Whether `derive(snapshot, policy: policy)` would be satisfied, without deriving the
    /// rest of the path: the engine asks at every change (whether to read the TCP sockets).
    package static func isSatisfied(_ snapshot: NetworkSnapshot, policy: InterfacePolicy = InterfacePolicy()) -> Bool {
        let context = Context(snapshot: snapshot, policy: policy, filter: .none)
        return AddressFamily.allCases.contains { context.evaluate(family: $0).usable.map { !$0.requiresConnection } ?? false }
    }

    /// AFNetworking's status for a reachable path over an interface of this type.
    package static func reachability(for type: InterfaceType?) -> ReachabilityStatus {
        switch type {
        case .wifi: return .reachableViaWiFi
        case .cellular: return .reachableViaWWAN
        case .wiredEthernet: return .reachableViaWired
        case .loopback, .other: return .reachableViaOther
        case nil: return .notReachable
        }
    }

    /// PPP and other dial-up style point-to-point links are transient (SC's transientConnection).
    static func isTransient(_ link: Link) -> Bool {
        link.hardwareType == ARPHardwareType.ppp || link.kind == "ppp"
    }

    /// When no family works, the reason that got furthest along the checks explains the
    /// most: "no carrier" says more than "no route" on the other family. Ties favour IPv4.
    static func mostSpecificReason(_ reasons: [UnsatisfiedReason]) -> UnsatisfiedReason {
        reasons.max { rank($0) < rank($1) } ?? .noRoute
    }

    private static func rank(_ reason: UnsatisfiedReason) -> Int {
        switch reason {
        case .noInterface, .nameNotFound, .noDNSServer, .resolutionFailed, .resolutionTimedOut: return 0
        case .noRoute: return 1
        case .interfaceIgnored, .interfaceTypeProhibited: return 2
        case .unreachableRoute, .blackholeRoute, .prohibitedRoute: return 3
        case .interfaceDown: return 4
        case .noCarrier: return 5
        case .noAddress: return 6
        case .gatewayUnreachable: return 7
        case .connectionRequired: return 8
        }
    }
}

/// A route that can carry traffic for one family.
struct UsableRoute: Equatable {
    var family: AddressFamily
    var interfaceIndex: Int32
    var gateway: IPAddress?
    var requiresConnection: Bool
    /// The table of the route it came from, when known.
    var table: UInt32? = nil
}

/// What one family's evaluation came to.
enum FamilyOutcome {
    case usable(UsableRoute)
    case unusable(UnsatisfiedReason)

    var usable: UsableRoute? { if case let .usable(route) = self { return route } else { return nil } }
    var failure: UnsatisfiedReason? { if case let .unusable(reason) = self { return reason } else { return nil } }
}

/// The inputs of one derivation, with the checks that need more than one of them (shared
/// with `TargetDerivation`, so a target's route counts under the same rules).
struct Context {
    let snapshot: NetworkSnapshot
    let policy: InterfacePolicy
    let filter: PathFilter
    /// `InterfaceRoles.hostInternalBridges(in: snapshot)`, found once per derivation.
    let hostInternalBridges: Set<Int32>

    init(snapshot: NetworkSnapshot, policy: InterfacePolicy, filter: PathFilter) {
        self.snapshot = snapshot
        self.policy = policy
        self.filter = filter
        self.hostInternalBridges = InterfaceRoles.hostInternalBridges(in: snapshot)
    }

    /// Whether the path leaves the interface out (an ignore glob, an override, a host-internal bridge).
    func isIgnored(_ link: Link) -> Bool {
        policy.isIgnored(link, hostInternalBridges: hostInternalBridges)
    }

    /// Whether the interface may carry the path at all (exists, not ignored, allowed).
    func isCandidate(_ link: Link) -> Bool {
        !isIgnored(link) && filter.allows(policy.type(of: link)) && !link.flags.contains(.loopback)
    }

    var hasCandidateInterface: Bool { snapshot.links.values.contains(where: isCandidate) }

    func evaluate(family: AddressFamily) -> FamilyOutcome {
        let unicastDefaults = snapshot.defaultRoutes
            .filter { $0.family == family && $0.type == .unicast }
            .sorted { $0.metric < $1.metric }

        switch snapshot.lookups[family] {
        case let .route(result)?:
            guard result.type == .unicast || result.type == .local else {
                return .unusable(Self.reason(forRouteType: result.type) ?? .noRoute)
            }
            let hop = NextHop(interfaceIndex: result.outputInterface, gateway: result.gateway, isLinkDown: result.isLinkDown)
            guard let link = snapshot.links[hop.interfaceIndex] else { return .unusable(.noRoute) }
            if isCandidate(link) {
                return check(hop, family: family, preferredSource: result.preferredSource, table: result.table)
            }
            // The kernel's choice is off limits: try the tracked defaults that are not.
            let excluded: UnsatisfiedReason = isIgnored(link) ? .interfaceIgnored : .interfaceTypeProhibited
            return firstUsable(unicastDefaults, family: family, otherwise: excluded)
        case let .failure(failure)?:
            let reason = Self.reason(for: failure)
            guard reason == .noRoute else { return .unusable(reason) }
            // Nothing usable can come of these routes (the kernel found none), but they can
            // say why: a linkdown route, say, that the kernel was told to ignore.
            if case let .unusable(refined) = firstUsable(unicastDefaults, family: family, otherwise: .noRoute) {
                return .unusable(refined)
            }
            return .unusable(.noRoute)
        case nil:
            return .unusable(.noRoute)
        }
    }

    /// The first default route whose next hop passes every check; otherwise the most
    /// specific reason any of them failed with (or `otherwise` when none applied).
    private func firstUsable(_ routes: [DefaultRoute], family: AddressFamily, otherwise: UnsatisfiedReason) -> FamilyOutcome {
        var reasons: [UnsatisfiedReason] = []
        for route in routes {
            for hop in route.nextHops {
                guard let link = snapshot.links[hop.interfaceIndex], isCandidate(link) else { continue }
                switch check(hop, family: family, preferredSource: nil, table: route.table) {
                case let .usable(usable): return .usable(usable)
                case let .unusable(reason): reasons.append(reason)
                }
            }
        }
        return .unusable(reasons.isEmpty ? otherwise : PathDerivation.mostSpecificReason(reasons))
    }

    /// Checks 2–5 of the derivation on one next hop (of a route in `table`, when known);
    /// `usableSource`, when given, is check 4 judged by the caller's own rule (a target's).
    func check(_ hop: NextHop, family: AddressFamily, preferredSource: IPAddress?, table: UInt32? = nil, usableSource: Bool? = nil) -> FamilyOutcome {
        guard let link = snapshot.links[hop.interfaceIndex] else { return .unusable(.noRoute) }
        guard link.isUp else { return .unusable(.interfaceDown) }
        let dormant = link.operState == .dormant
        guard link.carrier && (dormant || (!hop.isLinkDown && !Self.lacksCarrier(link.operState))),
              !InterfaceRoles.underlayIsDown(link, in: snapshot) else {
            return .unusable(.noCarrier)
        }
        guard usableSource ?? hasUsableSource(on: link.index, family: family, preferredSource: preferredSource) else {
            return .unusable(.noAddress)
        }
        if GatewayNeighbours.isUnreachable(hop, in: snapshot) { return .unusable(.gatewayUnreachable) }
        return .usable(UsableRoute(family: family, interfaceIndex: link.index, gateway: hop.gateway, requiresConnection: dormant, table: table))
    }

    private static func lacksCarrier(_ state: OperationalState) -> Bool {
        state == .down || state == .lowerLayerDown || state == .notPresent
    }

    /// What a refused FIB lookup means.
    static func reason(for failure: RouteLookupFailure) -> UnsatisfiedReason {
        switch failure {
        case .noRoute, .lookupFailed: return .noRoute
        case .unreachableRoute: return .unreachableRoute
        case .blackholeRoute: return .blackholeRoute
        case .prohibitedRoute: return .prohibitedRoute
        }
    }

    static func reason(forRouteType type: RouteType) -> UnsatisfiedReason? {
        switch type {
        case .unreachable: return .unreachableRoute
        case .blackhole: return .blackholeRoute
        case .prohibit: return .prohibitedRoute
        default: return nil
        }
    }

    /// The output interface has a usable address of the family, or the kernel's preferred
    /// source (Linux is weak-host: the source may live on another interface) is usable.
    private func hasUsableSource(on interfaceIndex: Int32, family: AddressFamily, preferredSource: IPAddress?) -> Bool {
        snapshot.addresses.contains { address in
            guard address.family == family, address.isUsableForInternet else { return false }
            return address.interfaceIndex == interfaceIndex || address.address == preferredSource
        }
    }

    /// Gateways of a usable route: every next hop of a matching multipath default, else the
    /// lookup's. Among defaults through the same hop, the one in the lookup's table (the
    /// kernel's choice, and the one known while routes are still read at start) wins.
    func gateways(of route: UsableRoute) -> [String] {
        var matching: DefaultRoute?
        for candidate in snapshot.defaultRoutes where candidate.family == route.family && candidate.type == .unicast
            && candidate.nextHops.contains(where: { $0.interfaceIndex == route.interfaceIndex && $0.gateway == route.gateway }) {
            if candidate.table == route.table { matching = candidate; break }
            if matching == nil { matching = candidate }
        }
        let hops = matching?.nextHops ?? [NextHop(interfaceIndex: route.interfaceIndex, gateway: route.gateway)]
        return hops.compactMap { $0.gateway?.description }
    }

    /// Primary first, then interfaces with a usable default route by metric, then the rest
    /// that are up, have carrier and a usable address.
    func availableInterfaces(primary: Link?) -> [String] {
        var ordered: [Int32] = primary.map { [$0.index] } ?? []
        let defaults = snapshot.defaultRoutes.filter { $0.type == .unicast }.sorted { $0.metric < $1.metric }
        for route in defaults {
            for hop in route.nextHops where isCarrying(hop.interfaceIndex, family: route.family) {
                ordered.append(hop.interfaceIndex)
            }
        }
        let rest = snapshot.links.values
            .filter { link in AddressFamily.allCases.contains { isCarrying(link.index, family: $0) } }
            .sorted { $0.index < $1.index }
        ordered += rest.map(\.index)
        var seen = Set<Int32>()
        return ordered.filter { seen.insert($0).inserted }.compactMap { snapshot.links[$0]?.name }
    }

    /// Whether the interface is a candidate that is up, has carrier and a usable address of the family.
    func isCarrying(_ interfaceIndex: Int32, family: AddressFamily) -> Bool {
        guard let link = snapshot.links[interfaceIndex], isCandidate(link), link.isUp, link.carrier,
              !InterfaceRoles.underlayIsDown(link, in: snapshot) else { return false }
        return snapshot.addresses.contains { $0.interfaceIndex == interfaceIndex && $0.family == family && $0.isUsableForInternet }
    }

    /// NetworkManager-style connectivity without probes when no path exists: `local` if
    /// some interface can still talk on its link, `none` otherwise.
    var offlineConnectivity: Connectivity {
        let onLink = snapshot.links.values.contains { link in
            isCandidate(link) && link.isUp && link.carrier
                && snapshot.addresses.contains { $0.interfaceIndex == link.index && !$0.flags.contains(.dadFailed) }
        }
        return onLink ? .local : .none
    }
}
