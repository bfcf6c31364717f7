import CNetlink
import ReachabilityCore
import SystemPackage

/// One FIB lookup: the RTM_GETROUTE request `ip route get` sends (no packet leaves
/// the host), and the mapping of the kernel's answer to a `RouteLookup`.
package enum FIBLookup {
    /// Asks the kernel how a packet to `destination` would leave, on the blocking
    /// request socket. Socket-level failures come back as `.failure(.lookupFailed(text))`.
    /// With `uid`, the kernel applies the rules for that user (`ip rule … uidrange`); with
    /// `outputInterface`, it looks up out of that interface (`RTA_OIF`, `ip route get … oif`),
    /// which a link-local destination needs: without it, the answer names any link.
    static func lookup(_ destination: IPAddress, uid: UInt32? = nil, outputInterface: Int32? = nil, on socket: NetlinkSocket) -> RouteLookup {
        do {
            return try perform(destination, uid: uid, outputInterface: outputInterface, on: socket)
        } catch {
            return .failure(.lookupFailed(error.description))
        }
    }

    /// The route the FIB matched for `destination` as the kernel stores it, every next hop
    /// included (`ip route get fibmatch`, RTM_F_FIB_MATCH, Linux 4.13): parsed like a
    /// dumped route, so a matched default becomes `.defaultRoute`. Nil when the kernel
    /// found none or refused the flag.
    static func matchedRoute(_ destination: IPAddress, on socket: NetlinkSocket) -> ParsedMessage? {
        var matched: ParsedMessage?
        let answer = try? request(destination, flags: UInt32(RTM_F_FIB_MATCH), uid: nil, outputInterface: nil, on: socket) { message in
            if message.type == UInt16(RTM_NEWROUTE) { matched = MessageParser.parse(message) }
        }
        guard case .complete? = answer else { return nil }
        return matched
    }

    private static func perform(_ destination: IPAddress, uid: UInt32?, outputInterface: Int32?, on socket: NetlinkSocket) throws(NetlinkError) -> RouteLookup {
        var lookup: RouteLookup?
        // Report the table the match came from (IPv4 says "main" otherwise).
        let answer = try request(destination, flags: UInt32(RTM_F_LOOKUP_TABLE), uid: uid, outputInterface: outputInterface, on: socket) { message in
            if message.type == UInt16(RTM_NEWROUTE) { lookup = interpret(message) }
        }
        if case .failed(let errno) = answer { return .failure(failure(for: errno)) }
        return lookup ?? .failure(.lookupFailed("no answer"))
    }

    /// Sends one RTM_GETROUTE for `destination` with `flags` in `rtm_flags`.
    private static func request(
        _ destination: IPAddress, flags: UInt32, uid: UInt32?, outputInterface: Int32?, on socket: NetlinkSocket, answer: (NetlinkMessage) -> Void
    ) throws(NetlinkError) -> NetlinkSocket.Answer {
        let bytes = destination.bytes
        return try socket.request(type: Int32(RTM_GETROUTE), flags: NLM_F_REQUEST) { (request) throws(NetlinkError) in
            var header = rtmsg()
            header.rtm_family = UInt8(destination.family == .ipv4 ? AF_INET : AF_INET6)
            header.rtm_dst_len = UInt8(bytes.count * 8)
            header.rtm_flags = flags
            try request.append(header)
            try request.put(Int32(RTA_DST.rawValue), bytes)
            if let uid { try request.put(Int32(RTA_UID.rawValue), withUnsafeBytes(of: uid) { Array($0) }) }
            if let outputInterface { try request.put(Int32(RTA_OIF.rawValue), withUnsafeBytes(of: outputInterface) { Array($0) }) }
        } answer: { message in
            answer(message)
        }
    }

    /// What the kernel's error for a lookup means (docs/DESIGN.md rule 2). The one place an
    /// errno becomes a reason.
    static func failure(for errno: Errno) -> RouteLookupFailure {
        switch errno {
        case .networkUnreachable: .noRoute
        case .noRouteToHost: .unreachableRoute
        case .invalidArgument: .blackholeRoute
        case .permissionDenied, .notPermitted: .prohibitedRoute
        default: .lookupFailed(errno.description)
        }
    }

    /// Maps an RTM_NEWROUTE answer, parsed by `rtnl_route_parse`. Reject routes become
    /// failures: current kernels answer them with an errno for both families, but IPv6
    /// on older kernels returns the route itself (via `lo`) with its error in
    /// RTA_CACHEINFO, where ENETUNREACH is the null entry ("no route at all").
    package static func interpret(_ message: NetlinkMessage) -> RouteLookup {
        if let hazard = message.routeParseHazard { return .failure(.lookupFailed("rtnl_route_parse: \(hazard)")) }
        var parsed: OpaquePointer?
        let result = rtnl_route_parse(message.header, &parsed)
        guard result >= 0, let route = parsed else {
            return .failure(.lookupFailed(NetlinkError(operation: "rtnl_route_parse", libnlCode: result).description))
        }
        defer { rtnl_route_put(route) }
        let type = rtnl_route_get_type(route)
        switch Int(type) {
        case RTN_UNREACHABLE:
            return .failure(cachedError(message) == .networkUnreachable ? .noRoute : .unreachableRoute)
        case RTN_BLACKHOLE:
            return .failure(.blackholeRoute)
        case RTN_PROHIBIT:
            return .failure(.prohibitedRoute)
        case RTN_THROW:
            return .failure(.noRoute)
        default:
            // A resolved destination has one next hop (the single form: RTA_OIF, RTA_GATEWAY).
            let hop = rtnl_route_get_nnexthops(route) > 0 ? rtnl_route_nexthop_n(route, 0) : nil
            return .route(RouteLookupResult(
                type: RouteType(kernelValue: type),
                outputInterface: hop.map { Int32(rtnl_route_nh_get_ifindex($0)) } ?? 0,
                gateway: hop.flatMap { IPAddress(libnl: rtnl_route_nh_get_gateway($0)) ?? IPAddress(libnl: rtnl_route_nh_get_via($0)) },
                preferredSource: IPAddress(libnl: rtnl_route_get_pref_src(route)),
                isLinkDown: rtnl_route_get_flags(route) & UInt32(RTNH_F_LINKDOWN) != 0,
                table: rtnl_route_get_table(route)
            ))
        }
    }

    /// The error an old kernel put in an IPv6 reject route's RTA_CACHEINFO, if any.
    ///
    /// Read by hand because libnl has no getter for it: `rtnl_route_parse` copies the
    /// attribute into the route but exposes none of its fields. So the attribute is
    /// found with `nlmsg_find_attr` and read as the kernel's `struct rta_cacheinfo`.
    static func cachedError(_ message: NetlinkMessage) -> Errno? {
        guard let attribute = message.attribute(Int32(RTA_CACHEINFO.rawValue), after: rtmsg.self),
              Int(nla_len(attribute)) >= MemoryLayout<rta_cacheinfo>.size else { return nil }
        let info = UnsafeRawPointer(nla_data(attribute)).loadUnaligned(as: rta_cacheinfo.self)
        return Errno(kernelValue: Int32(bitPattern: info.rta_error))
    }
}
