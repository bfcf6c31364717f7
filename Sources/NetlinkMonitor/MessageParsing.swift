import ReachabilityCore

/// A default route as one RTM_NEWROUTE / RTM_DELROUTE described it, plus what the
/// tracked state needs to match updates and deletions against it.
struct DefaultRouteRecord: Hashable {
    /// The route in the model's terms.
    var route: DefaultRoute
    /// `rtm_tos`: part of an IPv4 route's key.
    var tos: UInt8
    /// `NLM_F_REPLACE` was set: the route replaced whatever had the same key.
    var replaces: Bool
}

/// What one rtnetlink message means for the tracked state.
enum ParsedMessage {
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
        case .link, .linkRemoved, .address, .addressRemoved, .defaultRoute, .defaultRouteRemoved: return true
        case .otherRoute, .rule, .ignored: return false
        }
    }
}

/// Decodes rtnetlink messages into `ParsedMessage`s. Pure: bytes in, values out.
enum MessageParser {
    /// Decodes one message.
    static func parse(_ message: RawMessage) -> ParsedMessage {
        switch message.type {
        case Kernel.newRoute, Kernel.delRoute:
            return parseRoute(message, removed: message.type == Kernel.delRoute)
        case Kernel.newLink:
            return parseLink(message)
        case Kernel.delLink:
            return parseLinkRemoval(message)
        case Kernel.newAddress, Kernel.delAddress:
            guard let address = parseAddress(message) else { return .ignored }
            return message.type == Kernel.newAddress ? .address(address) : .addressRemoved(address)
        case Kernel.newRule, Kernel.delRule:
            return .rule
        default:
            return .ignored
        }
    }

    // MARK: Routes

    /// Routes: the `rtmsg` header is read first and anything with a destination
    /// prefix returns at once, so a flood of ordinary route events costs a few loads
    /// and no allocation.
    static func parseRoute(_ message: RawMessage, removed: Bool) -> ParsedMessage {
        let payload = message.payload
        guard payload.count >= Kernel.rtmsgLength else { return .ignored }
        // struct rtmsg { family, dst_len, src_len, tos, table, protocol, scope, type; u32 flags }
        let flags = payload.loadUnaligned(fromByteOffset: 8, as: UInt32.self)
        // Cloned routes (route cache, PMTU exceptions) are not part of the FIB.
        if flags & Kernel.routeCloned != 0 { return .ignored }
        guard payload[1] == 0 else { return .otherRoute }
        let familyByte = payload[0]
        let family: AddressFamily
        switch familyByte {
        case Kernel.afInet: family = .ipv4
        case Kernel.afInet6: family = .ipv6
        default: return .ignored
        }
        var table = UInt32(payload[4])
        var metric: UInt32 = 0
        var outputInterface: Int32 = 0
        var gateway: IPAddress?
        var multipath: [NextHop]?
        for attribute in message.attributes(after: Kernel.rtmsgLength) {
            switch attribute.type {
            case Kernel.rtaTable: table = attribute.uint32 ?? table
            case Kernel.rtaPriority: metric = attribute.uint32 ?? 0
            case Kernel.rtaOutputInterface: outputInterface = Int32(bitPattern: attribute.uint32 ?? 0)
            case Kernel.rtaGateway: gateway = attribute.address
            case Kernel.rtaVia: gateway = viaAddress(attribute.payload)
            case Kernel.rtaMultipath: multipath = parseMultipath(attribute.payload)
            default: break
            }
        }
        let hops: [NextHop]
        if let multipath {
            hops = multipath
        } else if outputInterface != 0 || gateway != nil {
            hops = [NextHop(interfaceIndex: outputInterface, gateway: gateway, isLinkDown: flags & Kernel.nextHopLinkDown != 0)]
        } else {
            hops = []
        }
        let route = DefaultRoute(
            family: family, table: table, type: RouteType(kernelValue: payload[7]), metric: metric, nextHops: hops
        )
        let record = DefaultRouteRecord(route: route, tos: payload[3], replaces: message.flags & Kernel.flagReplace != 0)
        return removed ? .defaultRouteRemoved(record) : .defaultRoute(record)
    }

    /// `struct rtvia { __kernel_sa_family_t family; __u8 addr[]; }`.
    static func viaAddress(_ payload: UnsafeRawBufferPointer) -> IPAddress? {
        guard payload.count > 2 else { return nil }
        return IPAddress(bytes: Array(payload[2...]))
    }

    /// RTA_MULTIPATH: a run of `struct rtnexthop` each followed by its own attributes.
    /// Dead next hops (`RTNH_F_DEAD`) are left out: the kernel does not use them.
    static func parseMultipath(_ payload: UnsafeRawBufferPointer) -> [NextHop] {
        var hops: [NextHop] = []
        var offset = 0
        while offset + Kernel.rtnexthopLength <= payload.count {
            // struct rtnexthop { u16 len; u8 flags; u8 hops; int ifindex; }
            let length = Int(payload.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            guard length >= Kernel.rtnexthopLength, offset + length <= payload.count else { break }
            let flags = UInt32(payload[offset + 2])
            let interfaceIndex = payload.loadUnaligned(fromByteOffset: offset + 4, as: Int32.self)
            var gateway: IPAddress?
            let nested = UnsafeRawBufferPointer(rebasing: payload[(offset + Kernel.rtnexthopLength)..<(offset + length)])
            for attribute in NetlinkAttributes(nested) {
                if attribute.type == Kernel.rtaGateway { gateway = attribute.address }
                if attribute.type == Kernel.rtaVia { gateway = viaAddress(attribute.payload) }
            }
            if flags & Kernel.nextHopDead == 0 {
                hops.append(NextHop(interfaceIndex: interfaceIndex, gateway: gateway, isLinkDown: flags & Kernel.nextHopLinkDown != 0))
            }
            offset += Kernel.align(length)
        }
        return hops
    }

    // MARK: Links

    /// RTM_NEWLINK. Bridge-port notifications (`AF_BRIDGE`) describe a port, not the
    /// link, and are ignored; so is a message without a name.
    static func parseLink(_ message: RawMessage) -> ParsedMessage {
        let payload = message.payload
        guard payload.count >= Kernel.ifinfomsgLength, payload[0] != Kernel.afBridge else { return .ignored }
        // struct ifinfomsg { u8 family; u8 pad; u16 type; int index; unsigned flags; unsigned change; }
        let hardwareType = payload.loadUnaligned(fromByteOffset: 2, as: UInt16.self)
        let index = payload.loadUnaligned(fromByteOffset: 4, as: Int32.self)
        let flags = payload.loadUnaligned(fromByteOffset: 8, as: UInt32.self)
        var name: String?
        var operState = OperationalState.unknown
        var carrier: Bool?
        var kind: String?
        for attribute in message.attributes(after: Kernel.ifinfomsgLength) {
            switch attribute.type {
            case Kernel.iflaIfName: name = attribute.string
            case Kernel.iflaOperState: operState = OperationalState(kernelValue: attribute.uint8 ?? 0)
            case Kernel.iflaCarrier: carrier = attribute.uint8.map { $0 != 0 }
            case Kernel.iflaLinkInfo:
                for info in attribute.nested where info.type == Kernel.iflaInfoKind {
                    kind = info.string
                }
            default: break
            }
        }
        guard let name, index > 0 else { return .ignored }
        return .link(Link(
            index: index, name: name, flags: LinkFlags(rawValue: flags), operState: operState,
            carrier: carrier ?? (flags & Kernel.iffLowerUp != 0), hardwareType: hardwareType, kind: kind
        ))
    }

    /// RTM_DELLINK (bridge-port removals, `AF_BRIDGE`, are not link removals).
    static func parseLinkRemoval(_ message: RawMessage) -> ParsedMessage {
        let payload = message.payload
        guard payload.count >= Kernel.ifinfomsgLength, payload[0] != Kernel.afBridge else { return .ignored }
        return .linkRemoved(payload.loadUnaligned(fromByteOffset: 4, as: Int32.self))
    }

    // MARK: Addresses

    /// RTM_NEWADDR / RTM_DELADDR: IFA_LOCAL is the local address (on point-to-point
    /// links IFA_ADDRESS is the peer); IFA_FLAGS overrides the 8-bit `ifa_flags`.
    static func parseAddress(_ message: RawMessage) -> InterfaceAddress? {
        let payload = message.payload
        guard payload.count >= Kernel.ifaddrmsgLength else { return nil }
        // struct ifaddrmsg { u8 family; u8 prefixlen; u8 flags; u8 scope; u32 index; }
        guard payload[0] == Kernel.afInet || payload[0] == Kernel.afInet6 else { return nil }
        var flags = UInt32(payload[2])
        var local: IPAddress?
        var address: IPAddress?
        for attribute in message.attributes(after: Kernel.ifaddrmsgLength) {
            switch attribute.type {
            case Kernel.ifaLocal: local = attribute.address
            case Kernel.ifaAddress: address = attribute.address
            case Kernel.ifaFlags: flags = attribute.uint32 ?? flags
            default: break
            }
        }
        guard let value = local ?? address else { return nil }
        return InterfaceAddress(
            interfaceIndex: Int32(bitPattern: payload.loadUnaligned(fromByteOffset: 4, as: UInt32.self)),
            address: value, prefixLength: payload[1], scope: AddressScope(kernelValue: payload[3]),
            flags: AddressFlags(rawValue: flags)
        )
    }
}
