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
/// address, rule and ND messages, default routes (`rtm_dst_len == 0`), routes covering a
/// watched address, and anything the program cannot read with certainty (an unknown
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
public enum RouteEventFilter {
    /// The verdict that keeps a whole datagram (the return value is a length to keep).
    static let accept: UInt32 = 0xFFFF_FFFF
    /// The verdict that drops it.
    static let drop: UInt32 = 0
    /// Attributes read before giving up on finding RTA_DST (the kernel puts it second,
    /// after RTA_TABLE).
    static let attributesSearched = 8
    /// The kernel's limit on a classic BPF program (BPF_MAXINSNS).
    public static let maximumLength = 4096

    /// The program that keeps every datagram (too many addresses for one program).
    public static let keepEverything: [SocketFilterInstruction] = [.ret(accept)]

    /// The program for `watched` addresses; nil when it would exceed the kernel's limit
    /// (thousands of watched IPv6 addresses), in which case every event must pass.
    public static func program(watching watched: Set<IPAddress>) -> [SocketFilterInstruction]? {
        var code = BPFAssembler(acceptVerdict: accept)
        let ordered = watched.sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
        let (route, family, destination, ipv4) = (code.newLabel(), code.newLabel(), code.newLabel(), code.newLabel())

        // Short messages and anything but RTM_NEWROUTE / RTM_DELROUTE pass.
        code.emit(.loadLength)
        code.jump(ifGreaterOrEqual: Offset.attributes, else: .accept)
        code.emit(.loadHalf(Offset.messageType))
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

        // Walk the attributes for RTA_DST; X holds the current attribute's offset.
        code.emit(.loadIndexConstant(Offset.attributes))
        for _ in 0..<attributesSearched {
            // The 4-byte attribute header must lie inside the message.
            code.emit(.loadLength)
            code.emit(.subtract(4))
            code.jump(ifGreaterOrEqualIndex: .accept)
            code.emit(.loadHalfIndexed(2))
            code.jump(if: swapped(1), then: .label(destination))  // RTA_DST
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

        // RTA_DST at X. IPv6 first; IPv4 by a far jump, as the IPv6 checks may be long.
        code.place(destination)
        code.emit(.loadByte(Offset.family))
        code.jump(if: 2, then: .next, else: .skip(1))
        code.jump(to: ipv4)
        checks(for: ordered.filter { $0.family == .ipv6 }, words: 4, in: &code)
        code.place(ipv4)
        checks(for: ordered.filter { $0.family == .ipv4 }, words: 1, in: &code)

        guard let program = code.assembled(), program.count <= maximumLength else { return nil }
        return program
    }

    /// Byte offsets in the message.
    enum Offset {
        static let messageType: UInt32 = 4
        static let family: UInt32 = 16
        static let destinationLength: UInt32 = 17
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

    /// One family's part: store RTA_DST's words and the prefix's shift per word, then
    /// accept if the prefix covers any of `addresses`, else drop.
    private static func checks(for addresses: [IPAddress], words: UInt32, in code: inout BPFAssembler) {
        // RTA_DST must be exactly one address long and lie inside the message.
        let length = 4 + 4 * words
        code.emit(.loadHalfIndexed(0))
        code.jump(if: swapped(UInt16(length)), then: .next, else: .accept)
        code.emit(.loadLength)
        code.emit(.subtract(length))
        code.jump(ifGreaterOrEqualIndex: .accept)
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
