/// The verdict for one target ("can I reach this host?"): the kernel's FIB answer for each
/// of its addresses, judged by the same rules as the host's path. Pure, and the one place
/// that decides what "this target is reachable" means.
///
/// Per address, the lookup (made with the caller's uid, so `ip rule uidrange` applies)
/// names the route. It counts when:
/// - it is a `local` route: the address is this host's own (`isLocalAddress`), reachable
///   whatever the interfaces do;
/// - it is a `unicast` route whose output interface passes checks 2–5 of `PathDerivation`
///   (up, carrier, not dormant), with check 4 by the target's rule (`TargetSource`: the
///   kernel's preferred source, link-local towards the link). A route without a gateway is
///   on-link (`isDirect`). An interface the path ignores (a container bridge, say) still
///   carries traffic to its hosts: ignoring is for the path, not for "can I reach this host".
/// A refused lookup (`unreachable`, `blackhole`, `prohibit`, no route) is its reason.
///
/// A scoped address (`fe80::1%eth0`) is looked up out of its interface; one whose interface
/// does not exist, or a link-local IPv6 address without one (the kernel's answer for it
/// would name any link), is `noInterface`.
///
/// An IPv4 address the host cannot reach natively, on a network that announced a NAT64
/// prefix, is judged by its RFC 6052 address's route instead (`viaNAT64`), as Apple's stack
/// synthesizes one for an IPv4 literal on an IPv6-only network.
///
/// The target is reachable when one address is; IPv6 first when both families work, as a
/// Happy-Eyeballs client would connect. When none is, the most specific reason explains it.
/// A name that did not resolve is not reachable, with the resolution's reason: never an
/// optimistic answer (SCNetworkReachability's "reachable" for a made-up name).
package enum TargetDerivation {
    /// Derives the answer for a target whose addresses were looked up.
    package static func derive(_ lookups: [TargetLookup], snapshot: NetworkSnapshot, policy: InterfacePolicy) -> TargetPath {
        let context = Context(snapshot: snapshot, policy: policy, filter: .none)
        let judged = lookups.map { judge($0, context: context) }
        let ordered = judged.enumerated().sorted { left, right in
            // IPv6 before IPv4, otherwise the resolver's order.
            if left.element.answer.family != right.element.answer.family { return left.element.answer.family == .ipv6 }
            return left.offset < right.offset
        }.map(\.element)

        let ready = ordered.first { $0.answer.reachable && !$0.requiresConnection }
        let primary = ready ?? ordered.first { $0.answer.reachable }
        var flags: ReachabilityFlags = []
        let status: PathStatus
        let reason: UnsatisfiedReason?
        if let primary {
            status = ready != nil ? .satisfied : .requiresConnection
            reason = ready != nil ? nil : .connectionRequired
            flags.insert(.reachable)
            if primary.requiresConnection { flags.insert(.connectionRequired) }
            if primary.isLocal { flags.insert(.isLocalAddress) }
            if primary.answer.gateway == nil, let link = primary.link, !InterfaceRoles.isPointToPoint(link) { flags.insert(.isDirect) }
            if primary.answer.interfaceType == .cellular { flags.insert(.isWWAN) }
            if let link = primary.link, PathDerivation.isTransient(link) { flags.insert(.transientConnection) }
        } else {
            status = .unsatisfied
            reason = lookups.isEmpty ? .nameNotFound : PathDerivation.mostSpecificReason(ordered.compactMap(\.answer.unsatisfiedReason))
        }
        return TargetPath(
            status: status,
            unsatisfiedReason: reason,
            reachability: status == .satisfied ? PathDerivation.reachability(for: primary?.answer.interfaceType) : .notReachable,
            flags: flags,
            primaryInterface: primary?.answer.interface,
            primaryInterfaceType: primary?.answer.interfaceType,
            addresses: ordered.map(\.answer)
        )
    }

    /// The answer for a name that did not resolve.
    package static func unresolved(_ reason: UnsatisfiedReason) -> TargetPath {
        TargetPath(status: .unsatisfied, unsatisfiedReason: reason, reachability: .notReachable)
    }

    private struct Judged {
        var answer: TargetAddress
        var link: Link?
        var isLocal = false
        var requiresConnection = false
    }

    /// The index of the interface a scope names: a link of that name, else (as `getaddrinfo`
    /// reads `%2`) a link with that number as its index.
    package static func interfaceIndex(named scope: String, in links: [Int32: Link]) -> Int32? {
        if let link = links.values.first(where: { $0.name == scope }) { return link.index }
        if scope.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let index = Int32(scope), links[index] != nil {
            return index
        }
        return nil
    }

    private static func judge(_ lookup: TargetLookup, context: Context) -> Judged {
        let native = judgeNatively(lookup, context: context)
        guard !native.answer.reachable, let nat64 = lookup.nat64 else { return native }
        var translated = judgeNatively(TargetLookup(address: nat64.address, route: nat64.route), context: context)
        guard translated.answer.reachable else { return native }
        translated.answer.address = native.answer.address
        translated.answer.family = native.answer.family
        translated.answer.viaNAT64 = nat64.address.description
        translated.answer.nat64Prefix = nat64.prefix.description
        return translated
    }

    private static func judgeNatively(_ lookup: TargetLookup, context: Context) -> Judged {
        var answer = TargetAddress(address: lookup.address, interface: lookup.interface)
        if let scope = lookup.interface {
            guard interfaceIndex(named: scope, in: context.snapshot.links) != nil else {
                answer.unsatisfiedReason = .noInterface
                return Judged(answer: answer)
            }
        } else if lookup.address.family == .ipv6 && lookup.address.isLinkLocal {
            answer.unsatisfiedReason = .noInterface
            return Judged(answer: answer)
        }
        let result: RouteLookupResult
        switch lookup.route {
        case let .failure(failure):
            answer.unsatisfiedReason = Context.reason(for: failure)
            return Judged(answer: answer)
        case let .route(found):
            result = found
        }
        let link = context.snapshot.links[result.outputInterface]
        answer.interface = link?.name
        answer.interfaceType = link.map(context.policy.type(of:))
        answer.gateway = result.gateway?.description
        if result.type == .local {
            answer.source = result.preferredSource?.description
            answer.reachable = true
            return Judged(answer: answer, link: link, isLocal: true)
        }
        guard result.type == .unicast else {
            answer.unsatisfiedReason = Context.reason(forRouteType: result.type) ?? .noRoute
            return Judged(answer: answer, link: link)
        }
        guard let link else {
            answer.unsatisfiedReason = .noRoute
            return Judged(answer: answer)
        }
        if context.isIgnored(link) { answer.ignoredForPath = true }
        let source = TargetSource.choose(
            for: lookup.address, onLink: result.gateway == nil, outputInterface: link.index,
            preferred: result.preferredSource, addresses: context.snapshot.addresses
        )
        // Only a source that can carry the traffic is reported: never a tentative one.
        if case let .preferred(address) = source { answer.source = address.description }
        let hop = NextHop(interfaceIndex: result.outputInterface, gateway: result.gateway, isLinkDown: result.isLinkDown)
        switch context.check(hop, family: lookup.address.family, preferredSource: result.preferredSource, usableSource: source != .none) {
        case let .usable(route):
            answer.reachable = true
            return Judged(answer: answer, link: link, requiresConnection: route.requiresConnection)
        case let .unusable(reason):
            answer.unsatisfiedReason = reason
            return Judged(answer: answer, link: link)
        }
    }
}

/// One address of a target and the kernel's FIB answer for it.
package struct TargetLookup: Sendable, Hashable {
    /// The address.
    package var address: IPAddress
    /// The interface a scoped address (`fe80::1%eth0`) was looked up on; nil when unscoped.
    package var interface: String?
    /// What the kernel answered.
    package var route: RouteLookup
    /// For an IPv4 address while a link carries a NAT64 prefix: the lookup of its
    /// synthesized address.
    package var nat64: NAT64Lookup?

    /// Pairs an address (scoped to `interface`, if given) with its lookup.
    package init(address: IPAddress, interface: String? = nil, route: RouteLookup, nat64: NAT64Lookup? = nil) {
        self.address = address
        self.interface = interface
        self.route = route
        self.nat64 = nat64
    }

    /// Pairs a looked-up key with the kernel's answer.
    package init(_ key: TargetKey, route: RouteLookup, nat64: NAT64Lookup? = nil) {
        self.init(address: key.address, interface: key.interface, route: route, nat64: nat64)
    }
}

/// The answer for one target. Field names are the wire names of
/// `io.reachd.Reachability.TargetPath`.
public struct TargetPath: Sendable, Hashable, Codable {
    /// Satisfied when one address is reachable.
    public var status: PathStatus
    /// Why not; nil when satisfied. Name-resolution reasons appear only here.
    public var unsatisfiedReason: UnsatisfiedReason?
    /// AFNetworking-style status, from the primary address's interface.
    public var reachability: ReachabilityStatus
    /// SCNetworkReachability flags for the target: reachable, isLocalAddress, isDirect,
    /// isWWAN, transientConnection, connectionRequired.
    public var flags: ReachabilityFlags
    /// Interface traffic to the target would leave by.
    public var primaryInterface: String?
    /// Its type.
    public var primaryInterfaceType: InterfaceType?
    /// Every address, IPv6 first, each with its own verdict.
    public var addresses: [TargetAddress]

    /// Creates a target answer.
    public init(
        status: PathStatus, unsatisfiedReason: UnsatisfiedReason? = nil, reachability: ReachabilityStatus,
        flags: ReachabilityFlags = [], primaryInterface: String? = nil, primaryInterfaceType: InterfaceType? = nil,
        addresses: [TargetAddress] = []
    ) {
        self.status = status
        self.unsatisfiedReason = unsatisfiedReason
        self.reachability = reachability
        self.flags = flags
        self.primaryInterface = primaryInterface
        self.primaryInterfaceType = primaryInterfaceType
        self.addresses = addresses
    }
}

/// One address of a target, as the kernel would route traffic to it.
public struct TargetAddress: Sendable, Hashable, Codable {
    /// The address, as text; a scoped one with its interface (`fe80::1%eth0`).
    public var address: String
    /// Its family.
    public var family: AddressFamily
    /// The route to it passes every check.
    public var reachable: Bool
    /// Why not (the route type, or the output interface's problem); nil when reachable.
    public var unsatisfiedReason: UnsatisfiedReason?
    /// Output interface of the route, when there is one.
    public var interface: String?
    /// Its type.
    public var interfaceType: InterfaceType?
    /// Gateway; nil when on-link (or no route).
    public var gateway: String?
    /// Source address the kernel would use.
    public var source: String?
    /// True when the path leaves the interface out (an ignore glob, an override, a bridge
    /// for guests): the target is reached through it all the same. Nil otherwise.
    public var ignoredForPath: Bool?
    /// The RFC 6052 address an IPv4 address is reached through, by the network's NAT64
    /// (the other fields then describe its route); nil when reached natively or not at all.
    public var viaNAT64: String?
    /// The NAT64 prefix `viaNAT64` was synthesized under (`64:ff9b::/96`).
    public var nat64Prefix: String?

    /// An address (scoped to `interface`, if given) not yet judged (not reachable, no route).
    public init(address: IPAddress, interface: String? = nil) {
        self.address = interface.map { "\(address)%\($0)" } ?? address.description
        self.family = address.family
        self.reachable = false
    }
}

/// One address a client asked about, with the client's uid: the kernel's answer may differ
/// per uid (`ip rule … uidrange`), so the uid is part of what is looked up.
package struct TargetKey: Sendable, Hashable {
    /// The address.
    package var address: IPAddress
    /// The interface a scoped address (`fe80::1%eth0`) is looked up on (`RTA_OIF`): its
    /// name as the client or the resolver gave it; nil when unscoped.
    package var interface: String?
    /// The uid of the client that asked (`SO_PEERCRED`), given to the kernel as `RTA_UID`.
    package var uid: UInt32

    /// Creates a key (for an address scoped to `interface`, if given).
    package init(address: IPAddress, interface: String? = nil, uid: UInt32) {
        self.address = address
        self.interface = interface
        self.uid = uid
    }
}
