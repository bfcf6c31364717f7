import LinuxSystem
import ReachabilityCore

/// The decision which route events may change an answer, made in the kernel: a classic
/// BPF program for the event socket (`SO_ATTACH_FILTER`).
///
/// reachd's answers come from FIB lookups of a few addresses (the well-known lookup
/// targets, plus the targets clients watch) and from the default routes it tracks. A
/// route whose destination prefix covers none of those addresses cannot change any
/// lookup's answer, and a non-default route is not tracked, so such an event is dropped
/// before it is queued: a flood of a million host routes elsewhere neither wakes reachd
/// nor fills its receive buffer (no ENOBUFS, no resync). Everything else passes: link,
/// address, rule and ND user-option messages, default routes (`rtm_dst_len == 0`), routes
/// covering a watched address, what matters about a watched gateway's neighbour entry
/// (`GatewayEvents`), and anything the program cannot read with certainty (an unknown
/// family, no RTA_DST among the first attributes, a malformed attribute), so a mistake
/// here can cost a wake-up but never an answer.
///
/// Each rtnetlink notification is one datagram holding one message, so the program reads
/// the message at offset 0: `nlmsghdr` (16 bytes), `rtmsg` (12), then attributes. Netlink
/// is host-endian (little-endian here) while BPF loads are big-endian: 16-bit fields are
/// compared byte-swapped, and addresses, in network order, compare as loaded.
///
/// Regenerated whenever the watched set changes (`NetlinkMonitor.watch(_:)`); the engine
/// looks up again after installing it, so nothing between the two is missed.
package enum RouteEventFilter {
    /// The verdict that keeps a whole datagram (the return value is a length to keep).
    static let accept: UInt32 = 0xFFFF_FFFF
    /// The verdict that drops it.
    static let drop: UInt32 = 0
    /// Attributes read before giving up on finding RTA_DST (the kernel puts it second,
    /// after RTA_TABLE).
    static let attributesSearched = 8
    /// The kernel's limit on a classic BPF program (BPF_MAXINSNS).
    package static let maximumLength = 4096

    /// The program that keeps every datagram (too many addresses for one program).
    package static let keepEverything: [SocketFilterInstruction] = [.ret(accept)]

    /// What passes about one watched gateway's neighbour entry.
    package enum GatewayEvents: Sendable, Hashable {
        /// Only what can make it unreachable, FAILED and RTM_DELNEIGH, and an administrator's
        /// PERMANENT or NOARP entry (a gateway that answers moves between REACHABLE, STALE,
        /// DELAY and PROBE all day, which changes nothing).
        case failures
        /// Every event: the gateway is failed (any other state may restore it), being
        /// resolved, or has no entry.
        case all
    }

    /// The program for `watched` addresses and `gateways`' neighbour entries; nil when it
    /// would exceed the kernel's limit (thousands of watched IPv6 addresses), in which case
    /// every event must pass.
    ///
    /// Neighbour messages (`ndmsg`, 12 bytes, then NDA_DST first among the attributes) pass
    /// only for a watched gateway (address and `ndm_ifindex`), and then as `GatewayEvents`
    /// says; a busy LAN's ARP and ND churn, and bridge FDB entries, are dropped.
    package static func program(watching watched: Set<IPAddress>, gateways: [GatewayKey: GatewayEvents] = [:]) -> [SocketFilterInstruction]? {
        var code = BPFAssembler(acceptVerdict: accept)
        let ordered = watched.sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
        let (route, family, destination, ipv4) = (code.newLabel(), code.newLabel(), code.newLabel(), code.newLabel())
        let neighbour = code.newLabel()

        // Short messages and anything but route and neighbour messages pass.
        code.emit(.loadLength)
        code.jump(ifGreaterOrEqual: Offset.attributes, else: .accept)
        code.emit(.loadHalf(Offset.messageType))
        // Neighbours by far jumps: the route part before them is long.
        code.jump(if: swapped(28), then: .next, else: .skip(1))  // RTM_NEWNEIGH
        code.jump(to: neighbour)
        code.jump(if: swapped(29), then: .next, else: .skip(1))  // RTM_DELNEIGH
        code.jump(to: neighbour)
        code.jump(if: swapped(24), then: .label(route))  // RTM_NEWROUTE
        code.jump(if: swapped(25), then: .label(route), else: .accept)  // RTM_DELROUTE
        code.place(route)
        // Default routes are tracked: they pass.
        code.emit(.loadByte(Offset.destinationLength))
        code.jump(if: 0, then: .accept)
        code.emit(.store(Slot.prefixLength))
        code.emit(.loadByte(Offset.family))
        code.jump(if: 2, then: .label(family))  // AF_INET
        code.jump(if: 10, then: .label(family), else: .accept)  // AF_INET6
        code.place(family)

        findDestination(then: destination, in: &code)

        // RTA_DST at X. IPv6 first; IPv4 by a far jump, as the IPv6 checks may be long.
        code.place(destination)
        code.emit(.loadByte(Offset.family))
        code.jump(if: 2, then: .next, else: .skip(1))
        code.jump(to: ipv4)
        checks(for: ordered.filter { $0.family == .ipv6 }, words: 4, in: &code)
        code.place(ipv4)
        checks(for: ordered.filter { $0.family == .ipv4 }, words: 1, in: &code)

        code.place(neighbour)
        neighbourChecks(for: gateways, in: &code)

        guard let program = code.assembled(), program.count <= maximumLength else { return nil }
        return program
    }

    /// Walks the attributes for the destination (RTA_DST and NDA_DST are both type 1, both
    /// after a 12-byte header) and jumps to `found` with X at it; passes the message when
    /// it is not among the first `attributesSearched` or an attribute is malformed.
    private static func findDestination(then found: BPFAssembler.Label, in code: inout BPFAssembler) {
        // X holds the current attribute's offset.
        code.emit(.loadIndexConstant(Offset.attributes))
        for _ in 0..<attributesSearched {
            // The 4-byte attribute header must lie inside the message.
            code.emit(.loadLength)
            code.emit(.subtract(4))
            code.jump(ifGreaterOrEqualIndex: .accept)
            code.emit(.loadHalfIndexed(2))
            code.jump(if: swapped(1), then: .label(found))  // RTA_DST, NDA_DST
            // Next attribute: X += align4(rta_len), rta_len read byte by byte (host order).
            code.emit(.indexToAccumulator)
            code.emit(.store(Slot.offset))
            code.emit(.loadByteIndexed(1))
            code.emit(.shiftLeft(8))
            code.emit(.store(Slot.scratch))
            code.emit(.loadByteIndexed(0))
            code.emit(.loadIndex(Slot.scratch))
            code.emit(.orIndex)
            code.jump(ifGreaterOrEqual: 4, else: .accept)  // a length under 4 would not advance
            code.emit(.add(3))
            code.emit(.and(0xFFFF_FFFC))
            code.emit(.loadIndex(Slot.offset))
            code.emit(.addIndex)
            code.emit(.accumulatorToIndex)
        }
        code.emit(.ret(accept))
    }

    /// The neighbour part: IPv4 and IPv6 entries of a watched gateway pass as `gateways`
    /// says; other families (bridge FDB) and other neighbours are dropped.
    private static func neighbourChecks(for gateways: [GatewayKey: GatewayEvents], in code: inout BPFAssembler) {
        let (family, destination, ipv6, failures) = (code.newLabel(), code.newLabel(), code.newLabel(), code.newLabel())
        code.emit(.loadByte(Offset.family))
        code.jump(if: 2, then: .label(family))  // AF_INET
        code.jump(if: 10, then: .label(family), else: .drop)  // AF_INET6
        code.place(family)
        guard !gateways.isEmpty else {
            code.emit(.ret(drop))
            return
        }
        findDestination(then: destination, in: &code)
        code.place(destination)
        let ordered = gateways.sorted { a, b in
            a.key.address == b.key.address
                ? a.key.interfaceIndex < b.key.interfaceIndex : a.key.address.bytes.lexicographicallyPrecedes(b.key.address.bytes)
        }
        // IPv4 first; IPv6 by a far jump past the IPv4 checks.
        code.emit(.loadByte(Offset.family))
        code.jump(if: 2, then: .skip(1), else: .next)
        code.jump(to: ipv6)
        for words: UInt32 in [1, 4] {
            if words == 4 { code.place(ipv6) }
            requireOneAddress(words: words, in: &code)  // NDA_DST
            for (key, events) in ordered where key.address.bytes.count == 4 * Int(words) {
                let next = code.newLabel()
                let bytes = key.address.bytes
                for word in 0..<words {
                    let value = bytes[Int(word) * 4..<Int(word) * 4 + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                    code.emit(.loadWordIndexed(4 + 4 * word))
                    code.jump(if: value, then: .next, else: .label(next))
                }
                code.emit(.loadWord(Offset.neighbourInterface))
                code.jump(if: UInt32(bitPattern: key.interfaceIndex).byteSwapped, then: .next, else: .label(next))
                switch events {
                case .all: code.emit(.ret(accept))
                case .failures: code.jump(to: failures)
                }
                code.place(next)
            }
            code.emit(.ret(drop))
        }
        // A gateway that answers: only its removal, NUD_FAILED, NUD_NOARP or NUD_PERMANENT
        // (0x20, 0x40, 0x80: ndm_state's low byte).
        code.place(failures)
        code.emit(.loadHalf(Offset.messageType))
        code.jump(if: swapped(29), then: .accept)
        code.emit(.loadByte(Offset.neighbourState))
        code.emit(.and(0xE0))
        code.jump(if: 0, then: .drop, else: .accept)
    }

    /// Byte offsets in the message.
    enum Offset {
        static let messageType: UInt32 = 4
        static let family: UInt32 = 16
        static let destinationLength: UInt32 = 17
        /// `ndm_ifindex`, a host-order 32-bit integer.
        static let neighbourInterface: UInt32 = 20
        /// `ndm_state`'s low byte (host order: the first of its two).
        static let neighbourState: UInt32 = 24
        static let attributes: UInt32 = 28
    }

    /// Scratch memory slots (classic BPF has 16).
    enum Slot {
        static let prefixLength: UInt32 = 0
        static let offset: UInt32 = 1
        static let scratch: UInt32 = 2
        /// Four: the destination's 32-bit words.
        static let words: UInt32 = 4
        /// Four: per word, the right shift that keeps only the prefix's bits in it.
        static let shifts: UInt32 = 8
    }

    /// A 16-bit host-order (little-endian) value as a big-endian BPF half-word load sees it.
    static func swapped(_ value: UInt16) -> UInt32 { UInt32(value.byteSwapped) }

    /// The attribute at X must be exactly one address of `words` words and lie inside the
    /// message; anything else is accepted (the program cannot read it with certainty).
    private static func requireOneAddress(words: UInt32, in code: inout BPFAssembler) {
        let length = 4 + 4 * words
        code.emit(.loadHalfIndexed(0))
        code.jump(if: swapped(UInt16(length)), then: .next, else: .accept)
        code.emit(.loadLength)
        code.emit(.subtract(length))
        code.jump(ifGreaterOrEqualIndex: .accept)
    }

    /// One family's part: store RTA_DST's words and the prefix's shift per word, then
    /// accept if the prefix covers any of `addresses`, else drop.
    private static func checks(for addresses: [IPAddress], words: UInt32, in code: inout BPFAssembler) {
        requireOneAddress(words: words, in: &code)  // RTA_DST
        for word in 0..<words {
            code.emit(.loadWordIndexed(4 + 4 * word))
            code.emit(.store(Slot.words + word))
        }
        code.emit(.loadMemory(Slot.prefixLength))
        code.jump(ifGreater: 32 * words, then: .accept)
        // Per word the prefix reaches (length > 32i): shift = 32 − min(32, length − 32i).
        for word in 0..<words {
            code.emit(.loadMemory(Slot.prefixLength))
            code.emit(.subtract(32 * word))
            code.jump(ifGreater: 32, then: .skip(3))  // the whole word is in the prefix: shift 0
            code.emit(.negate)
            code.emit(.add(32))
            code.emit(.jumpAlways(1))
            code.emit(.loadConstant(0))
            code.emit(.store(Slot.shifts + word))
        }
        for address in addresses { check(address, words: words, in: &code) }
        code.emit(.ret(drop))
    }

    /// Accepts when the destination prefix covers `address`: every word the prefix reaches
    /// agrees with the address in the prefix's bits. Otherwise falls through to the next check.
    private static func check(_ address: IPAddress, words: UInt32, in code: inout BPFAssembler) {
        let bytes = address.bytes
        let next = code.newLabel()
        for word in 0..<words {
            if word > 0 {
                // The prefix ends before this word and the words so far matched: covered.
                code.emit(.loadMemory(Slot.prefixLength))
                code.jump(ifGreater: 32 * word, then: .next, else: .accept)
            }
            let value = bytes[Int(word) * 4..<Int(word) * 4 + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            code.emit(.loadMemory(Slot.words + word))
            code.emit(.xor(value))
            code.emit(.loadIndex(Slot.shifts + word))
            code.emit(.shiftRightIndex)
            code.jump(if: 0, then: .next, else: .label(next))
        }
        code.emit(.ret(accept))
        code.place(next)
    }
}
