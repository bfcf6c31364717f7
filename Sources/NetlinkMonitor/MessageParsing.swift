import CNetlink
import ReachabilityCore

/// A default route as one RTM_NEWROUTE / RTM_DELROUTE described it, plus what the
/// tracked state needs to match updates and deletions against it.
package struct DefaultRouteRecord: Hashable {
    /// The route in the model's terms.
    var route: DefaultRoute
    /// `rtm_tos`: part of an IPv4 route's key.
    var tos: UInt8
    /// `NLM_F_REPLACE` was set: the route replaced whatever had the same key.
    var replaces: Bool
}

/// What one rtnetlink message means for the tracked state.
package enum ParsedMessage {
    /// RTM_NEWLINK: a link appeared or changed. Device facts are not filled in yet.
    case link(Link)
    /// RTM_DELLINK (also what a move to another namespace looks like from here).
    case linkRemoved(Int32)
    /// RTM_NEWADDR.
    case address(InterfaceAddress)
    /// RTM_DELADDR.
    case addressRemoved(InterfaceAddress)
    /// RTM_NEWROUTE with a zero-length destination.
    case defaultRoute(DefaultRouteRecord)
    /// RTM_DELROUTE with a zero-length destination.
    case defaultRouteRemoved(DefaultRouteRecord)
    /// Any other route event: not tracked, it only means "re-evaluate".
    case otherRoute
    /// RTM_NEWRULE / RTM_DELRULE: policy routing changed, re-evaluate.
    case rule
    /// RTM_NEWNDUSEROPT carrying RFC 8910's captive-portal option (RA option 37).
    case captivePortal(NDUserOption.CaptivePortal)
    /// RTM_NEWNDUSEROPT carrying RFC 8781's PREF64 option (RA option 38): a NAT64 prefix.
    case pref64(NDUserOption.PREF64)
    /// RTM_NEWNEIGH (a state) or RTM_DELNEIGH (nil) of an IPv4 or IPv6 neighbour.
    case neighbour(GatewayKey, NeighbourState?)
    /// Nothing reachd cares about (bridge-port messages, cloned routes, other types).
    case ignored

    /// Whether the message may change the answer (anything but `.ignored`).
    var isRelevant: Bool {
        if case .ignored = self { return false }
        return true
    }

    /// Whether the message changes tracked state (links, addresses, default routes),
    /// as opposed to only asking for a re-evaluation.
    var touchesTrackedState: Bool {
        switch self {
        case .link, .linkRemoved, .address, .addressRemoved, .defaultRoute, .defaultRouteRemoved, .captivePortal, .pref64: return true
        case .otherRoute, .rule, .ignored, .neighbour: return false
        }
    }
}

/// Turns rtnetlink messages into `ParsedMessage`s: the fixed header is read as the
/// kernel struct to decide whether the message matters at all; what does is parsed
/// by libnl-route into an `rtnl_link` / `rtnl_addr` / `rtnl_route` and converted with
/// libnl's getters. No IO, no libnl cache; every libnl object is released here.
package enum MessageParser {
    /// Decodes one message.
    package static func parse(_ message: NetlinkMessage) -> ParsedMessage {
        switch message.type {
        case UInt16(RTM_NEWROUTE), UInt16(RTM_DELROUTE):
            return parseRoute(message, removed: message.type == UInt16(RTM_DELROUTE))
        case UInt16(RTM_NEWLINK):
            return parseLink(message)
        case UInt16(RTM_DELLINK):
            return parseLinkRemoval(message)
        case UInt16(RTM_NEWADDR), UInt16(RTM_DELADDR):
            guard let address = parseAddress(message) else { return .ignored }
            return message.type == UInt16(RTM_NEWADDR) ? .address(address) : .addressRemoved(address)
        case UInt16(RTM_NEWRULE), UInt16(RTM_DELRULE):
            return .rule
        case UInt16(RTM_NEWNEIGH), UInt16(RTM_DELNEIGH):
            return parseNeighbour(message, removed: message.type == UInt16(RTM_DELNEIGH))
        case UInt16(RTM_NEWNDUSEROPT):
            // The payload is bytes the router sent: parsed by our own bounds-checked walk
            // (libnl has no parser for ND options).
            let length = Int(nlmsg_datalen(message.header))
            guard length > 0 else { return .ignored }
            let payload = Array(UnsafeRawBufferPointer(start: nlmsg_data(message.header), count: length))
            // The kernel relays each option in a message of its own.
            if let portal = NDUserOption.captivePortal(inPayload: payload) { return .captivePortal(portal) }
            return NDUserOption.pref64(inPayload: payload).map { .pref64($0) } ?? .ignored
        default:
            return .ignored
        }
    }

    // MARK: Routes

    /// Routes: the `rtmsg` header is judged first and anything with a destination
    /// prefix returns at once, so a flood of ordinary route events costs a few loads
    /// and no allocation. Only default routes reach `rtnl_route_parse`.
    static func parseRoute(_ message: NetlinkMessage, removed: Bool) -> ParsedMessage {
        guard let header = message.fixedHeader(rtmsg.self) else { return .ignored }
        // Cloned routes (route cache, PMTU exceptions) are not part of the FIB.
        if header.rtm_flags & UInt32(RTM_F_CLONED) != 0 { return .ignored }
        guard header.rtm_dst_len == 0 else { return .otherRoute }
        let family: AddressFamily
        switch Int32(header.rtm_family) {
        case AF_INET: family = .ipv4
        case AF_INET6: family = .ipv6
        default: return .ignored
        }
        var parsed: OpaquePointer?
        guard message.routeParseHazard == nil, rtnl_route_parse(message.header, &parsed) >= 0, let route = parsed else {
            // libnl refused the message, or would mishandle it (out of memory, or
            // attributes the kernel never sends). The route stays untracked, but the answer
            // is re-evaluated: the lookups, which decide it, ask the kernel itself.
            return .otherRoute
        }
        defer { rtnl_route_put(route) }
        let record = DefaultRouteRecord(
            route: DefaultRoute(
                family: family, table: rtnl_route_get_table(route), type: RouteType(kernelValue: rtnl_route_get_type(route)),
                metric: rtnl_route_get_priority(route),
                nextHops: nextHops(of: route, multipath: message.attribute(Int32(RTA_MULTIPATH.rawValue), after: rtmsg.self) != nil)
            ),
            tos: rtnl_route_get_tos(route),
            replaces: message.flags & UInt16(NLM_F_REPLACE) != 0
        )
        return removed ? .defaultRouteRemoved(record) : .defaultRoute(record)
    }

    /// The route's next hops in the model's terms; a gateway is RTA_GATEWAY or RTA_VIA
    /// (an IPv4 route via an IPv6 next hop).
    ///
    /// libnl folds both message forms into next hops, so `multipath` says which one
    /// the message used (whether it has RTA_MULTIPATH; libnl keeps no trace of it):
    /// - RTA_MULTIPATH: one hop per `rtnexthop`; dead ones (`RTNH_F_DEAD`) are left
    ///   out, the kernel does not use them.
    /// - the single form (RTA_OIF, RTA_GATEWAY, … with the hop's flags in `rtm_flags`):
    ///   a hop only if it has an output interface or a gateway (a blackhole has
    ///   neither), kept even when flagged dead (with `ignore_routes_with_linkdown` the
    ///   kernel adds RTNH_F_DEAD to a linkdown route it still has).
    static func nextHops(of route: OpaquePointer, multipath: Bool) -> [NextHop] {
        var hops: [NextHop] = []
        for position in 0..<max(rtnl_route_get_nnexthops(route), 0) {
            guard let hop = rtnl_route_nexthop_n(route, position) else { continue }
            let flags = UInt32(rtnl_route_nh_get_flags(hop))
            let interfaceIndex = Int32(rtnl_route_nh_get_ifindex(hop))
            let gateway = IPAddress(libnl: rtnl_route_nh_get_gateway(hop)) ?? IPAddress(libnl: rtnl_route_nh_get_via(hop))
            if multipath {
                if flags & UInt32(RTNH_F_DEAD) != 0 { continue }
            } else if interfaceIndex == 0 && gateway == nil {
                continue
            }
            hops.append(NextHop(interfaceIndex: interfaceIndex, gateway: gateway, isLinkDown: flags & UInt32(RTNH_F_LINKDOWN) != 0))
        }
        return hops
    }

    // MARK: Neighbours

    /// RTM_NEWNEIGH / RTM_DELNEIGH, parsed by `rtnl_neigh_parse`: which entry (interface,
    /// NDA_DST) and its state. Bridge FDB entries and proxies have no IP address to key by.
    static func parseNeighbour(_ message: NetlinkMessage, removed: Bool) -> ParsedMessage {
        guard message.fixedHeader(ndmsg.self) != nil else { return .ignored }
        var parsed: OpaquePointer?
        guard rtnl_neigh_parse(message.header, &parsed) >= 0, let neighbour = parsed else { return .ignored }
        defer { rtnl_neigh_put(neighbour) }
        let family = rtnl_neigh_get_family(neighbour)
        guard family == AF_INET || family == AF_INET6, let address = IPAddress(libnl: rtnl_neigh_get_dst(neighbour)) else { return .ignored }
        let key = GatewayKey(interfaceIndex: Int32(rtnl_neigh_get_ifindex(neighbour)), address: address)
        return .neighbour(key, removed ? nil : NeighbourState(kernelValue: UInt16(truncatingIfNeeded: rtnl_neigh_get_state(neighbour))))
    }

    // MARK: Links

    /// RTM_NEWLINK. Bridge-port notifications (`AF_BRIDGE`) describe a port, not the
    /// link, and are ignored before parsing; so is a message without a name.
    static func parseLink(_ message: NetlinkMessage) -> ParsedMessage {
        guard let header = message.fixedHeader(ifinfomsg.self), Int32(header.ifi_family) != AF_BRIDGE,
              let link = parseObject(message) else { return .ignored }
        defer { nl_object_put(link) }
        let index = rtnl_link_get_ifindex(link)
        guard let name = rtnl_link_get_name(link).map({ String(cString: $0) }), index > 0 else { return .ignored }
        let flags = rtnl_link_get_flags(link)
        // libnl reads a missing IFLA_CARRIER as 0 and keeps no trace of its absence;
        // only the message says whether to fall back to IFF_LOWER_UP.
        let hasCarrier = message.attribute(Int32(IFLA_CARRIER), after: ifinfomsg.self) != nil
        let kind = rtnl_link_get_type(link).map { String(cString: $0) }
        return .link(Link(
            index: index, name: name, flags: LinkFlags(rawValue: flags),
            operState: OperationalState(kernelValue: rtnl_link_get_operstate(link)),
            carrier: hasCarrier ? rtnl_link_get_carrier(link) != 0 : flags & IFF_LOWER_UP.rawValue != 0,
            hardwareType: UInt16(truncatingIfNeeded: rtnl_link_get_arptype(link)),
            kind: kind,
            masterIndex: positive(rtnl_link_get_master(link)),
            // A veth's IFLA_LINK is its peer, not a device it runs over.
            lowerIndex: kind == "veth" ? nil : lowerIndex(of: link)
        ))
    }

    /// The device `link` is stacked on, in this namespace: a vxlan names it in its own
    /// attributes (`IFLA_VXLAN_LINK`), the others in `IFLA_LINK`. A lower device in another
    /// namespace (`IFLA_LINK_NETNSID`, a veth's peer in a container) has an index that means
    /// nothing here.
    private static func lowerIndex(of link: OpaquePointer) -> Int32? {
        var netnsID: Int32 = 0
        guard rtnl_link_get_link_netnsid(link, &netnsID) != 0 else { return nil }
        if rtnl_link_is_vxlan(link) != 0 {
            var index: UInt32 = 0
            guard rtnl_link_vxlan_get_link(link, &index) == 0 else { return nil }
            return positive(Int32(truncatingIfNeeded: index))
        }
        let index = positive(rtnl_link_get_link(link))
        return index == rtnl_link_get_ifindex(link) ? nil : index
    }

    private static func positive(_ index: Int32) -> Int32? { index > 0 ? index : nil }

    /// RTM_DELLINK: only the index counts, read from the `ifinfomsg` header (bridge-port
    /// removals, `AF_BRIDGE`, are not link removals).
    static func parseLinkRemoval(_ message: NetlinkMessage) -> ParsedMessage {
        guard let header = message.fixedHeader(ifinfomsg.self), Int32(header.ifi_family) != AF_BRIDGE else { return .ignored }
        return .linkRemoved(header.ifi_index)
    }

    // MARK: Addresses

    /// RTM_NEWADDR / RTM_DELADDR of IPv4 and IPv6. libnl makes IFA_LOCAL the local
    /// address (on point-to-point links IFA_ADDRESS is the peer) and lets IFA_FLAGS
    /// override the 8-bit `ifa_flags`.
    static func parseAddress(_ message: NetlinkMessage) -> InterfaceAddress? {
        guard message.fixedHeader(ifaddrmsg.self) != nil, let object = parseObject(message) else { return nil }
        defer { nl_object_put(object) }
        let family = rtnl_addr_get_family(object)
        guard family == AF_INET || family == AF_INET6 else { return nil }
        var local = IPAddress(libnl: rtnl_addr_get_local(object))
        if family == AF_INET, local == .v4(0, 0, 0, 0) {
            // The kernel leaves out a zero IFA_LOCAL and libnl then reports 0.0.0.0;
            // IFA_ADDRESS (libnl's peer, when it differs) is the address then.
            local = IPAddress(libnl: rtnl_addr_get_peer(object))
        }
        guard let address = local else { return nil }
        return InterfaceAddress(
            interfaceIndex: Int32(rtnl_addr_get_ifindex(object)), address: address,
            prefixLength: UInt8(truncatingIfNeeded: rtnl_addr_get_prefixlen(object)),
            scope: AddressScope(kernelValue: UInt8(truncatingIfNeeded: rtnl_addr_get_scope(object))),
            flags: AddressFlags(rawValue: UInt32(rtnl_addr_get_flags(object)))
        )
    }

    // MARK: libnl objects

    /// Parses a link or address message into its libnl object (`rtnl_link`, `rtnl_addr`)
    /// with `nl_msg_parse`, which copies the message (`nlmsg_convert`) and hands the
    /// object to a callback; the callback takes a reference. The caller owns it and
    /// releases it with `nl_object_put`. Nil if libnl refused the message.
    static func parseObject(_ message: NetlinkMessage) -> OpaquePointer? {
        guard let copy = nlmsg_convert(message.header) else { return nil }
        defer { nlmsg_free(copy) }
        // nlmsg_convert leaves the protocol unset; nl_msg_parse finds the parser by it.
        nlmsg_set_proto(copy, NETLINK_ROUTE)
        var object: OpaquePointer?
        let result = withUnsafeMutablePointer(to: &object) { nl_msg_parse(copy, keepObject, $0) }
        if result < 0, let parsed = object {
            nl_object_put(parsed)
            return nil
        }
        return object
    }

    /// `nl_msg_parse`'s callback: keeps (a reference to) the first object parsed.
    /// `slot` points to an `OpaquePointer?`.
    private static let keepObject: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { object, slot in
        guard let object, let slot = slot?.assumingMemoryBound(to: OpaquePointer?.self), slot.pointee == nil else { return }
        nl_object_get(object)
        slot.pointee = object
    }
}
