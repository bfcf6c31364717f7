import Foundation
import Glibc
import LinuxSystem
import NetlinkMonitor
import ReachabilityCore
import SystemPackage
import XCTest

/// The kernel-side route filter's verdicts, run through a classic BPF interpreter with the
/// kernel's semantics, on messages laid out as the kernel sends them; then the kernel's
/// own checker on the programs. (NetlinkMonitorTests shows the filter on real events.)
final class RouteEventFilterTests: XCTestCase {
    private static let watched: Set<IPAddress> = [
        IPAddress("8.8.8.8")!, IPAddress("192.0.2.80")!, IPAddress("2001:4860:4860::8888")!,
    ]

    func testVerdicts() throws {
        let program = try XCTUnwrap(RouteEventFilter.program(watching: Self.watched))
        let cases: [(String, [UInt8], Bool)] = [
            ("RTM_NEWLINK", Message.other(type: 16), true),
            ("RTM_NEWADDR", Message.other(type: 20), true),
            ("RTM_NEWRULE", Message.other(type: 32), true),
            ("RTM_NEWNDUSEROPT", Message.other(type: 68), true),
            ("IPv4 default", Message.route(family: 2, prefix: 0, destination: nil), true),
            ("IPv4 default, deleted", Message.route(type: 25, family: 2, prefix: 0, destination: nil), true),
            ("198.18.0.1/32", Message.route(family: 2, "198.18.0.1", 32), false),
            ("198.18.0.1/32, deleted", Message.route(type: 25, family: 2, "198.18.0.1", 32), false),
            ("8.8.8.8/32", Message.route(family: 2, "8.8.8.8", 32), true),
            ("8.8.8.0/24", Message.route(family: 2, "8.8.8.0", 24), true),
            ("8.0.0.0/7", Message.route(family: 2, "8.0.0.0", 7), true),
            ("9.0.0.0/8", Message.route(family: 2, "9.0.0.0", 8), false),
            ("8.8.8.9/32", Message.route(family: 2, "8.8.8.9", 32), false),
            ("0.0.0.0/1", Message.route(family: 2, "0.0.0.0", 1), true),
            ("128.0.0.0/1 (covers 192.0.2.80)", Message.route(family: 2, "128.0.0.0", 1), true),
            ("128.0.0.0/2", Message.route(family: 2, "128.0.0.0", 2), false),
            ("192.0.2.80/32", Message.route(family: 2, "192.0.2.80", 32), true),
            ("192.0.2.81/32", Message.route(family: 2, "192.0.2.81", 32), false),
            ("192.0.2.0/24", Message.route(family: 2, "192.0.2.0", 24), true),
            ("198.18.0.1/32, RTA_DST first", Message.route(family: 2, prefix: 32, destination: IPAddress("198.18.0.1"), tableFirst: false), false),
            ("198.18.0.1/32, RTA_DST after 9 others", Message.route(family: 2, prefix: 32, destination: IPAddress("198.18.0.1"), padding: 9), true),
            ("198.18.0.1/32, RTA_DST after 6 others", Message.route(family: 2, prefix: 32, destination: IPAddress("198.18.0.1"), padding: 6), false),
            ("/24 without RTA_DST", Message.route(family: 2, prefix: 24, destination: nil), true),
            ("/33", Message.route(family: 2, "198.18.0.1", 33), true),
            ("attribute length 0", Message.route(family: 2, prefix: 32, destination: nil, raw: [0, 0, 99, 0, 1, 2, 3, 4]), true),
            ("RTA_DST longer than the message", Array(Message.route(family: 2, "198.18.0.1", 32).dropLast(10)), true),
            ("IPv4 RTA_DST of 16 bytes", Message.route(family: 2, prefix: 32, destination: IPAddress("2001:db8::1")), true),
            ("AF_MPLS", Message.route(family: 28, "198.18.0.1", 32), true),
            ("short message", Array(Message.other(type: 24).prefix(20)), true),
            ("2001:4860:4860::8888/128", Message.route(family: 10, "2001:4860:4860::8888", 128), true),
            ("2001:4860:4860::8889/128", Message.route(family: 10, "2001:4860:4860::8889", 128), false),
            ("2001:4860::/32", Message.route(family: 10, "2001:4860::", 32), true),
            ("2001:4860:4860::/48", Message.route(family: 10, "2001:4860:4860::", 48), true),
            ("2001:4861::/32", Message.route(family: 10, "2001:4861::", 32), false),
            ("2001:db8::/32", Message.route(family: 10, "2001:db8::", 32), false),
            ("::/1", Message.route(family: 10, "::", 1), true),
            ("8000::/1", Message.route(family: 10, "8000::", 1), false),
            ("2001:4860:4860::8880/121", Message.route(family: 10, "2001:4860:4860::8880", 121), true),
            ("2001:4860:4860::8800/121", Message.route(family: 10, "2001:4860:4860::8800", 121), false),
            ("2001:4860:4860::/96", Message.route(family: 10, "2001:4860:4860::", 96), true),
            ("2001:4860:4860:0:0:1::/96", Message.route(family: 10, "2001:4860:4860:0:0:1::", 96), false),
            ("2001:4860:4860::/64, deleted", Message.route(type: 25, family: 10, "2001:4860:4860::", 64), true),
            ("IPv6 default", Message.route(family: 10, prefix: 0, destination: nil), true),
            ("/129", Message.route(family: 10, "2001:4860:4860::8888", 129), true),
            ("IPv6 RTA_DST of 4 bytes", Message.route(family: 10, prefix: 32, destination: IPAddress("8.8.8.8")), true),
        ]
        for (name, message, kept) in cases {
            XCTAssertEqual(try ClassicBPF.run(program, on: message) != 0, kept, name)
        }
    }

    private static let gateways: [GatewayKey: RouteEventFilter.GatewayEvents] = [
        GatewayKey(interfaceIndex: 2, address: IPAddress("10.77.0.1")!): .failures,
        GatewayKey(interfaceIndex: 3, address: IPAddress("192.0.2.1")!): .all,
        GatewayKey(interfaceIndex: 2, address: IPAddress("fe80::1")!): .failures,
        GatewayKey(interfaceIndex: 4, address: IPAddress("2001:db8::1")!): .all,
    ]

    /// Neighbour messages: a watched gateway's pass as its `GatewayEvents` say, the LAN's
    /// other neighbours and bridge FDB entries are dropped; routes are judged as before.
    func testNeighbourVerdicts() throws {
        let program = try XCTUnwrap(RouteEventFilter.program(watching: Self.watched, gateways: Self.gateways))
        let (reachable, stale, failed, incomplete, probe): (UInt16, UInt16, UInt16, UInt16, UInt16) = (0x02, 0x04, 0x20, 0x01, 0x10)
        let cases: [(String, [UInt8], Bool)] = [
            ("answering gateway turns FAILED", Message.neighbour(family: 2, interface: 2, "10.77.0.1", state: failed), true),
            ("answering gateway REACHABLE", Message.neighbour(family: 2, interface: 2, "10.77.0.1", state: reachable), false),
            ("answering gateway STALE", Message.neighbour(family: 2, interface: 2, "10.77.0.1", state: stale), false),
            ("answering gateway INCOMPLETE", Message.neighbour(family: 2, interface: 2, "10.77.0.1", state: incomplete), false),
            ("answering gateway made PERMANENT", Message.neighbour(family: 2, interface: 2, "10.77.0.1", state: 0x80), true),
            ("answering gateway made NOARP", Message.neighbour(family: 2, interface: 2, "10.77.0.1", state: 0x40), true),
            ("answering gateway DELAY", Message.neighbour(family: 2, interface: 2, "10.77.0.1", state: 0x08), false),
            ("answering gateway removed", Message.neighbour(type: 29, family: 2, interface: 2, "10.77.0.1", state: stale), true),
            ("the same address on another interface", Message.neighbour(family: 2, interface: 5, "10.77.0.1", state: failed), false),
            ("failed gateway answers again", Message.neighbour(family: 2, interface: 3, "192.0.2.1", state: reachable), true),
            ("failed gateway PROBE", Message.neighbour(family: 2, interface: 3, "192.0.2.1", state: probe), true),
            ("another neighbour on the LAN", Message.neighbour(family: 2, interface: 2, "10.77.0.9", state: reachable), false),
            ("another neighbour FAILED", Message.neighbour(family: 2, interface: 2, "10.77.0.9", state: failed), false),
            ("another neighbour removed", Message.neighbour(type: 29, family: 2, interface: 2, "10.77.0.9", state: stale), false),
            ("IPv6 router FAILED", Message.neighbour(family: 10, interface: 2, "fe80::1", state: failed), true),
            ("IPv6 router STALE", Message.neighbour(family: 10, interface: 2, "fe80::1", state: stale), false),
            ("IPv6 failed router REACHABLE", Message.neighbour(family: 10, interface: 4, "2001:db8::1", state: reachable), true),
            ("another IPv6 neighbour", Message.neighbour(family: 10, interface: 2, "fe80::2", state: failed), false),
            ("bridge FDB entry", Message.neighbour(family: 7, interface: 2, "10.77.0.1", state: reachable), false),
            ("no NDA_DST", Message.neighbour(family: 2, interface: 2, nil, state: reachable), true),
            ("IPv4 NDA_DST of 16 bytes", Message.neighbour(family: 2, interface: 2, "2001:db8::1", state: reachable), true),
            ("routes still judged", Message.route(family: 2, "198.18.0.1", 32), false),
            ("a watched route", Message.route(family: 2, "8.8.8.8", 32), true),
            ("links still pass", Message.other(type: 16), true),
        ]
        for (name, message, kept) in cases {
            XCTAssertEqual(try ClassicBPF.run(program, on: message) != 0, kept, name)
        }
        let none = try XCTUnwrap(RouteEventFilter.program(watching: Self.watched))
        XCTAssertEqual(try ClassicBPF.run(none, on: Message.neighbour(family: 2, interface: 2, "10.77.0.1", state: failed)), 0, "no gateway watched")
    }

    func testNothingWatchedDropsEveryRouteWithAPrefix() throws {
        let program = try XCTUnwrap(RouteEventFilter.program(watching: []))
        XCTAssertEqual(try ClassicBPF.run(program, on: Message.route(family: 2, "8.8.8.8", 32)), 0)
        XCTAssertEqual(try ClassicBPF.run(program, on: Message.route(family: 10, "::", 1)), 0)
        XCTAssertNotEqual(try ClassicBPF.run(program, on: Message.route(family: 2, prefix: 0, destination: nil)), 0)
    }

    /// Every prefix length against addresses next to the watched ones, compared with the
    /// definition: the prefix covers the address when their first `length` bits agree.
    func testEveryPrefixLengthAgreesWithTheDefinition() throws {
        let program = try XCTUnwrap(RouteEventFilter.program(watching: Self.watched))
        var generator = SplitMix(seed: 42)
        for watched in Self.watched {
            let bits = watched.bytes.count * 8
            for length in 1...bits {
                for _ in 0..<8 {
                    // Flip one bit, sometimes inside the prefix, sometimes past it.
                    var bytes = watched.bytes
                    let bit = Int(generator.next() % UInt64(bits))
                    bytes[bit / 8] ^= 0x80 >> UInt8(bit % 8)
                    let covers = Self.watched.contains { Self.prefix(bytes, length, covers: $0) }
                    let message = Message.route(family: watched.family == .ipv4 ? 2 : 10, prefix: UInt8(length), destination: IPAddress(bytes: bytes))
                    XCTAssertEqual(try ClassicBPF.run(program, on: message) != 0, covers, "\(watched) bit \(bit) flipped, /\(length)")
                }
            }
        }
    }

    /// The definition: same family, and the first `length` bits agree.
    private static func prefix(_ bytes: [UInt8], _ length: Int, covers address: IPAddress) -> Bool {
        let other = address.bytes
        guard other.count == bytes.count else { return false }
        return (0..<length).allSatisfy { bit in
            let mask = UInt8(0x80) >> UInt8(bit % 8)
            return bytes[bit / 8] & mask == other[bit / 8] & mask
        }
    }

    func testTheKernelAcceptsThePrograms() throws {
        // A real rtnetlink socket (the monitor's event socket; opening one needs no privilege).
        let monitor = try NetlinkMonitor()
        defer { withExtendedLifetime(monitor) {} }
        let descriptor = monitor.eventDescriptor
        var many = Self.watched
        for n in 0..<100 {
            many.insert(.v4(198, 18, UInt8(n), 1))
            many.insert(IPAddress(bytes: [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [UInt8(n)])!)
        }
        for set in [[], Self.watched, many] {
            let program = try XCTUnwrap(RouteEventFilter.program(watching: set))
            XCTAssertNoThrow(try descriptor.attachSocketFilter(program), "\(set.count) addresses, \(program.count) instructions")
        }
        for set in [[], Self.watched] {
            let program = try XCTUnwrap(RouteEventFilter.program(watching: set, gateways: Self.gateways))
            XCTAssertNoThrow(try descriptor.attachSocketFilter(program), "\(set.count) addresses and four gateways, \(program.count) instructions")
        }
        XCTAssertNoThrow(try descriptor.attachSocketFilter(RouteEventFilter.keepEverything))
    }

    func testTooManyAddressesForOneProgramMeansNone() throws {
        let addresses = (0..<1000).map { IPAddress(bytes: [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 10) + [UInt8($0 / 256), UInt8($0 % 256)])! }
        XCTAssertNil(RouteEventFilter.program(watching: Set(addresses)))
        let fits = try XCTUnwrap(RouteEventFilter.program(watching: Set(addresses.prefix(100))), "100 IPv6 addresses fit")
        XCTAssertLessThanOrEqual(fits.count, RouteEventFilter.maximumLength)
    }
}

/// rtnetlink messages laid out as the kernel sends them (host order, 4-byte aligned attributes).
private enum Message {
    /// A message of `type` with a zeroed 12-byte family header.
    static func other(type: UInt16) -> [UInt8] {
        header(type: type, payload: [UInt8](repeating: 0, count: 12))
    }

    /// An RTM_NEWROUTE (24) or RTM_DELROUTE (25) for `text`/`prefix`, RTA_TABLE then RTA_DST.
    static func route(type: UInt16 = 24, family: UInt8, _ text: String, _ prefix: UInt8) -> [UInt8] {
        route(type: type, family: family, prefix: prefix, destination: IPAddress(text)!)
    }

    /// The general form: `padding` RTA_PRIORITY attributes before RTA_DST, `raw` bytes
    /// appended as they are.
    static func route(
        type: UInt16 = 24, family: UInt8, prefix: UInt8, destination: IPAddress?, tableFirst: Bool = true, padding: Int = 0,
        raw: [UInt8] = []
    ) -> [UInt8] {
        // rtmsg: family, dst_len, src_len, tos, table, protocol, scope, type, flags.
        var payload: [UInt8] = [family, prefix, 0, 0, 254, 4, 0, 1, 0, 0, 0, 0]
        if tableFirst { payload += attribute(type: 15, [254, 0, 0, 0]) }  // RTA_TABLE
        for _ in 0..<padding { payload += attribute(type: 6, [1, 0, 0, 0]) }  // RTA_PRIORITY
        if let destination { payload += attribute(type: 1, destination.bytes) }  // RTA_DST
        payload += attribute(type: 4, [2, 0, 0, 0])  // RTA_OIF
        payload += raw
        return header(type: type, payload: payload)
    }

    /// An RTM_NEWNEIGH (28) or RTM_DELNEIGH (29): `ndmsg` (family, ifindex, state), then
    /// NDA_DST (when given) and NDA_LLADDR, as the kernel lays them out.
    static func neighbour(type: UInt16 = 28, family: UInt8, interface: Int32, _ destination: String?, state: UInt16) -> [UInt8] {
        var payload: [UInt8] = [family, 0, 0, 0] + littleEndian(interface) + littleEndian(state) + [0, 1]
        if let destination { payload += attribute(type: 1, IPAddress(destination)!.bytes) }
        payload += attribute(type: 2, [2, 0, 0, 0, 0, 1])  // NDA_LLADDR
        payload += attribute(type: 4, [UInt8](repeating: 0, count: 16))  // NDA_CACHEINFO
        return header(type: type, payload: payload)
    }

    private static func attribute(type: UInt16, _ value: [UInt8]) -> [UInt8] {
        let length = UInt16(4 + value.count)
        let bytes = littleEndian(length) + littleEndian(type) + value
        return bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4)
    }

    private static func header(type: UInt16, payload: [UInt8]) -> [UInt8] {
        let length = UInt32(16 + payload.count)
        return littleEndian(length) + littleEndian(type) + littleEndian(UInt16(0)) + littleEndian(UInt32(1)) + littleEndian(UInt32(0)) + payload
    }

    private static func littleEndian<Value: FixedWidthInteger>(_ value: Value) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }
}

/// Classic BPF as the kernel runs a socket filter: 32-bit A and X, 16 words of scratch
/// memory, big-endian loads, and a load outside the datagram ends the program with 0.
private enum ClassicBPF {
    struct Fault: Error { var reason: String }

    static func run(_ program: [SocketFilterInstruction], on packet: [UInt8]) throws -> UInt32 {
        var (a, x) = (UInt32(0), UInt32(0))
        var memory = [UInt32](repeating: 0, count: 16)
        var pc = 0
        func load(_ offset: UInt64, _ size: Int) -> UInt32? {
            guard offset + UInt64(size) <= UInt64(packet.count) else { return nil }
            return packet[Int(offset)..<Int(offset) + size].reduce(0) { $0 << 8 | UInt32($1) }
        }
        while pc < program.count {
            let instruction = program[pc]
            let k = instruction.constant
            pc += 1
            switch instruction.code {
            case 0x80: a = UInt32(packet.count)
            case 0x20, 0x28, 0x30:
                guard let value = load(UInt64(k), [0x20: 4, 0x28: 2, 0x30: 1][instruction.code]!) else { return 0 }
                a = value
            case 0x40, 0x48, 0x50:
                guard let value = load(UInt64(x) + UInt64(k), [0x40: 4, 0x48: 2, 0x50: 1][instruction.code]!) else { return 0 }
                a = value
            case 0x00: a = k
            case 0x60: a = memory[Int(k)]
            case 0x01: x = k
            case 0x61: x = memory[Int(k)]
            case 0x02: memory[Int(k)] = a
            case 0x04: a = a &+ k
            case 0x0C: a = a &+ x
            case 0x14: a = a &- k
            case 0x54: a &= k
            case 0x4C: a |= x
            case 0x64: a = k < 32 ? a << k : 0
            case 0x7C:
                guard x < 32 else { throw Fault(reason: "shift by \(x) at \(pc - 1)") }
                a >>= x
            case 0x84: a = 0 &- a
            case 0xA4: a ^= k
            case 0x05: pc += Int(k)
            case 0x15: pc += Int(a == k ? instruction.jumpIfTrue : instruction.jumpIfFalse)
            case 0x25: pc += Int(a > k ? instruction.jumpIfTrue : instruction.jumpIfFalse)
            case 0x35: pc += Int(a >= k ? instruction.jumpIfTrue : instruction.jumpIfFalse)
            case 0x3D: pc += Int(a >= x ? instruction.jumpIfTrue : instruction.jumpIfFalse)
            case 0x06: return k
            case 0x07: x = a
            case 0x87: a = x
            default: throw Fault(reason: "opcode \(instruction.code) at \(pc - 1)")
            }
        }
        throw Fault(reason: "ran off the end")
    }
}

/// A seeded generator, so a failure repeats.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
