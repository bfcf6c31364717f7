import CNetlink
import ReachabilityCore

/// Kernel constants as the types this module uses, taken from the C headers once so
/// the rest of the code never deals with the headers' mix of `Int`, `Int32` and
/// imported enum structs.
enum Kernel {
    // Message types.
    static let newLink = UInt16(RTM_NEWLINK)
    static let delLink = UInt16(RTM_DELLINK)
    static let getLink = UInt16(RTM_GETLINK)
    static let newAddress = UInt16(RTM_NEWADDR)
    static let delAddress = UInt16(RTM_DELADDR)
    static let getAddress = UInt16(RTM_GETADDR)
    static let newRoute = UInt16(RTM_NEWROUTE)
    static let delRoute = UInt16(RTM_DELROUTE)
    static let getRoute = UInt16(RTM_GETROUTE)
    static let newRule = UInt16(RTM_NEWRULE)
    static let delRule = UInt16(RTM_DELRULE)

    // nlmsghdr flags.
    static let flagRequest = Int32(NLM_F_REQUEST)
    static let flagDump = Int32(NLM_F_DUMP)
    static let flagReplace = UInt16(NLM_F_REPLACE)
    static let flagDumpInterrupted = UInt16(NLM_F_DUMP_INTR)

    // Multicast groups.
    static let groups: [Int32] = [
        Int32(RTNLGRP_LINK.rawValue), Int32(RTNLGRP_IPV4_IFADDR.rawValue), Int32(RTNLGRP_IPV6_IFADDR.rawValue),
        Int32(RTNLGRP_IPV4_ROUTE.rawValue), Int32(RTNLGRP_IPV6_ROUTE.rawValue),
        Int32(RTNLGRP_IPV4_RULE.rawValue), Int32(RTNLGRP_IPV6_RULE.rawValue),
    ]

    // Families.
    static let afUnspec = UInt8(AF_UNSPEC)
    static let afInet = UInt8(AF_INET)
    static let afInet6 = UInt8(AF_INET6)
    static let afBridge = UInt8(AF_BRIDGE)

    // Link attributes.
    static let iflaIfName = UInt16(IFLA_IFNAME)
    static let iflaOperState = UInt16(IFLA_OPERSTATE)
    static let iflaCarrier = UInt16(IFLA_CARRIER)
    static let iflaLinkInfo = UInt16(IFLA_LINKINFO)
    static let iflaInfoKind = UInt16(IFLA_INFO_KIND)

    // Address attributes.
    static let ifaAddress = UInt16(IFA_ADDRESS)
    static let ifaLocal = UInt16(IFA_LOCAL)
    static let ifaFlags = UInt16(IFA_FLAGS)

    // Route attributes and flags.
    static let rtaDestination = UInt16(RTA_DST.rawValue)
    static let rtaOutputInterface = UInt16(RTA_OIF.rawValue)
    static let rtaGateway = UInt16(RTA_GATEWAY.rawValue)
    static let rtaPriority = UInt16(RTA_PRIORITY.rawValue)
    static let rtaPreferredSource = UInt16(RTA_PREFSRC.rawValue)
    static let rtaMultipath = UInt16(RTA_MULTIPATH.rawValue)
    static let rtaCacheInfo = UInt16(RTA_CACHEINFO.rawValue)
    static let rtaTable = UInt16(RTA_TABLE.rawValue)
    static let rtaVia = UInt16(RTA_VIA.rawValue)
    static let routeCloned = UInt32(RTM_F_CLONED)
    static let nextHopLinkDown = UInt32(RTNH_F_LINKDOWN)
    static let nextHopDead = UInt32(RTNH_F_DEAD)

    // Route types.
    static let rtnUnreachable = UInt8(RTN_UNREACHABLE)
    static let rtnBlackhole = UInt8(RTN_BLACKHOLE)
    static let rtnProhibit = UInt8(RTN_PROHIBIT)
    static let rtnThrow = UInt8(RTN_THROW)

    // Link flags.
    static let iffUp = UInt32(IFF_UP.rawValue)
    static let iffLowerUp = UInt32(IFF_LOWER_UP.rawValue)

    // errno values that matter for lookups.
    static let enetunreach: Int32 = 101
    static let ehostunreach: Int32 = 113

    /// NLMSG_HDRLEN.
    static let messageHeaderLength = 16
    /// sizeof(struct ifinfomsg).
    static let ifinfomsgLength = MemoryLayout<ifinfomsg>.size
    /// sizeof(struct ifaddrmsg).
    static let ifaddrmsgLength = MemoryLayout<ifaddrmsg>.size
    /// sizeof(struct rtmsg).
    static let rtmsgLength = MemoryLayout<rtmsg>.size
    /// sizeof(struct rtnexthop).
    static let rtnexthopLength = MemoryLayout<rtnexthop>.size

    /// NLMSG_ALIGN / RTA_ALIGN / NLA_ALIGN: round up to 4 bytes.
    static func align(_ length: Int) -> Int { (length + 3) & ~3 }
}

/// One netlink message as bytes: the `nlmsghdr` fields plus the payload after it.
///
/// The payload points into libnl's receive buffer and is only valid inside the
/// callback that produced it; nothing here outlives that callback.
struct RawMessage {
    /// `nlmsg_type`.
    var type: UInt16
    /// `nlmsg_flags`.
    var flags: UInt16
    /// `nlmsg_seq`.
    var sequence: UInt32
    /// Everything after the 16-byte `nlmsghdr`, bounded by `nlmsg_len`.
    var payload: UnsafeRawBufferPointer

    /// Wraps a header libnl handed over.
    init(header: UnsafeMutablePointer<nlmsghdr>) {
        let length = max(Int(header.pointee.nlmsg_len), Kernel.messageHeaderLength)
        type = header.pointee.nlmsg_type
        flags = header.pointee.nlmsg_flags
        sequence = header.pointee.nlmsg_seq
        payload = UnsafeRawBufferPointer(
            start: UnsafeRawPointer(header).advanced(by: Kernel.messageHeaderLength),
            count: length - Kernel.messageHeaderLength
        )
    }

    /// Wraps bytes directly (tests).
    init(type: UInt16, flags: UInt16 = 0, sequence: UInt32 = 0, payload: UnsafeRawBufferPointer) {
        self.type = type
        self.flags = flags
        self.sequence = sequence
        self.payload = payload
    }

    /// The attributes after a fixed family header of `headerLength` bytes; empty if truncated.
    func attributes(after headerLength: Int) -> NetlinkAttributes {
        let start = Kernel.align(headerLength)
        guard payload.count >= start else { return NetlinkAttributes(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return NetlinkAttributes(UnsafeRawBufferPointer(rebasing: payload[start...]))
    }
}

/// Bounds-checked iteration over a run of `struct nlattr` / `struct rtattr` TLVs.
struct NetlinkAttributes: Sequence {
    /// One attribute: its type (nested / byte-order bits masked off) and payload.
    struct Attribute {
        /// Attribute type, `NLA_TYPE_MASK` applied.
        var type: UInt16
        /// The payload bytes.
        var payload: UnsafeRawBufferPointer

        /// The payload as a native-endian u8, if long enough.
        var uint8: UInt8? { payload.count >= 1 ? payload[0] : nil }
        /// The payload as a native-endian u32, if long enough.
        var uint32: UInt32? { payload.count >= 4 ? payload.loadUnaligned(as: UInt32.self) : nil }
        /// The payload as a NUL-terminated string.
        var string: String {
            let bytes = payload.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
        /// The payload as an IPv4 / IPv6 address, if it is 4 or 16 bytes.
        var address: IPAddress? { IPAddress(bytes: Array(payload)) }
        /// The attributes nested in this one.
        var nested: NetlinkAttributes { NetlinkAttributes(payload) }
    }

    /// Iterator state: the offset of the next attribute.
    struct Iterator: IteratorProtocol {
        let buffer: UnsafeRawBufferPointer
        var offset = 0

        mutating func next() -> Attribute? {
            guard offset + 4 <= buffer.count else { return nil }
            let length = Int(buffer.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            let type = buffer.loadUnaligned(fromByteOffset: offset + 2, as: UInt16.self) & 0x3FFF
            guard length >= 4, offset + length <= buffer.count else { return nil }
            let payload = UnsafeRawBufferPointer(rebasing: buffer[(offset + 4)..<(offset + length)])
            offset += Kernel.align(length)
            return Attribute(type: type, payload: payload)
        }
    }

    let buffer: UnsafeRawBufferPointer

    init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

    func makeIterator() -> Iterator { Iterator(buffer: buffer) }
}
