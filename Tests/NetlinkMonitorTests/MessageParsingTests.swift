import CNetlink
import Foundation
@testable import NetlinkMonitor
import ReachabilityCore
import SystemPackage
import TestSupport
import XCTest
import FuzzEntryPoints

/// Decoding tests on hand-built messages, through libnl-route as in the monitor, for the
/// paths the running kernel cannot be made to produce (older kernels' IPv6 lookup
/// answers, bridge-port messages, dead next hops, truncated messages).
final class MessageParsingTests: XCTestCase {
    /// Builds a message: `nlmsghdr`, a fixed header and TLV attributes.
    private struct Builder {
        var payload: [UInt8]

        init(header: [UInt8]) { payload = header }

        mutating func attribute(_ type: Int, _ bytes: [UInt8]) {
            let length = 4 + bytes.count
            payload += u16(UInt16(length)) + u16(UInt16(type)) + bytes
            payload += [UInt8](repeating: 0, count: (length + 3) & ~3 - length)
        }

        /// The whole message, or its first `length` bytes with `nlmsg_len` saying so,
        /// in its own exactly sized, aligned allocation.
        func withMessage<T>(type: Int, flags: Int32 = 0, length: Int? = nil, _ body: (NetlinkMessage) -> T) -> T {
            let count = length ?? (16 + payload.count)
            let bytes = (u32(UInt32(count)) + u16(UInt16(type)) + u16(UInt16(flags)) + u32(1) + u32(0) + payload).prefix(count)
            let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 8)
            defer { memory.deallocate() }
            memory.copyBytes(from: bytes)
            return body(NetlinkMessage(header: memory.baseAddress!.bindMemory(to: nlmsghdr.self, capacity: 1)))
        }

        func parse(type: Int, flags: Int32 = 0) -> ParsedMessage {
            withMessage(type: type, flags: flags) { MessageParser.parse($0) }
        }

        func lookup() -> RouteLookup {
            withMessage(type: RTM_NEWROUTE) { FIBLookup.interpret($0) }
        }
    }

    private static func u16(_ value: UInt16) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
    private static func u32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
    private static func i32(_ value: Int32) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }

    private static let afInet = UInt8(AF_INET), afInet6 = UInt8(AF_INET6)
    private static let rtaTable = Int(RTA_TABLE.rawValue), rtaPriority = Int(RTA_PRIORITY.rawValue)
    private static let rtaOIF = Int(RTA_OIF.rawValue), rtaGateway = Int(RTA_GATEWAY.rawValue)
    private static let rtaVia = Int(RTA_VIA.rawValue), rtaMultipath = Int(RTA_MULTIPATH.rawValue)
    private static let rtaCacheInfo = Int(RTA_CACHEINFO.rawValue), rtaPrefSrc = Int(RTA_PREFSRC.rawValue)
    private static let linkDown = UInt32(RTNH_F_LINKDOWN), dead = UInt32(RTNH_F_DEAD)

    /// struct rtmsg.
    private static func rtmsg(family: UInt8, dstLength: UInt8 = 0, table: UInt8 = 254, type: UInt8 = 1, flags: UInt32 = 0) -> [UInt8] {
        [family, dstLength, 0, 0, table, 3, 0, type] + u32(flags)
    }

    /// struct ifinfomsg.
    private static func ifinfomsg(family: UInt8 = UInt8(AF_UNSPEC), type: UInt16 = 1, index: Int32, flags: UInt32 = 0) -> [UInt8] {
        [family, 0] + u16(type) + i32(index) + u32(flags) + u32(0)
    }

    /// struct rtnexthop followed by its attributes.
    private static func nextHop(flags: UInt32 = 0, index: Int32, attributes: [UInt8] = []) -> [UInt8] {
        u16(UInt16(8 + attributes.count)) + [UInt8(flags), 0] + i32(index) + attributes
    }

    private static func nestedAttribute(_ type: Int, _ bytes: [UInt8]) -> [UInt8] {
        var builder = Builder(header: [])
        builder.attribute(type, bytes)
        return builder.payload
    }

    private static let linkLocal: [UInt8] = [0xFE, 0x80] + [UInt8](repeating: 0, count: 13) + [1]

    // MARK: Routes

    func testNonDefaultRouteStopsAtTheHeader() {
        // No attributes at all: only the header decides.
        let route = Builder(header: Self.rtmsg(family: Self.afInet, dstLength: 24))
        guard case .otherRoute = route.parse(type: RTM_NEWROUTE) else { return XCTFail() }
        let cloned = Builder(header: Self.rtmsg(family: Self.afInet6, dstLength: 128, flags: UInt32(RTM_F_CLONED)))
        guard case .ignored = cloned.parse(type: RTM_NEWROUTE) else { return XCTFail() }
        let clonedDefault = Builder(header: Self.rtmsg(family: Self.afInet6, flags: UInt32(RTM_F_CLONED)))
        guard case .ignored = clonedDefault.parse(type: RTM_DELROUTE) else { return XCTFail() }
        let mpls = Builder(header: Self.rtmsg(family: UInt8(AF_MPLS)))
        guard case .ignored = mpls.parse(type: RTM_NEWROUTE) else { return XCTFail() }
    }

    func testDefaultRouteTableOverrideMetricAndReplace() {
        var route = Builder(header: Self.rtmsg(family: Self.afInet, table: 252 /* RT_TABLE_COMPAT */, flags: Self.linkDown))
        route.attribute(Self.rtaTable, Self.u32(1000))
        route.attribute(Self.rtaPriority, Self.u32(600))
        route.attribute(Self.rtaOIF, Self.u32(7))
        route.attribute(Self.rtaGateway, [192, 0, 2, 1])
        guard case .defaultRoute(let record) = route.parse(type: RTM_NEWROUTE, flags: NLM_F_REPLACE) else { return XCTFail() }
        XCTAssertEqual(record.route, DefaultRoute(
            family: .ipv4, table: 1000, type: .unicast, metric: 600,
            nextHops: [NextHop(interfaceIndex: 7, gateway: IPAddress("192.0.2.1"), isLinkDown: true)]
        ))
        XCTAssertTrue(record.replaces)
        guard case .defaultRouteRemoved(let removed) = route.parse(type: RTM_DELROUTE) else { return XCTFail() }
        XCTAssertEqual(removed.route, record.route)
        XCTAssertFalse(removed.replaces)
    }

    func testMultipathWithViaAndDeadHop() {
        var route = Builder(header: Self.rtmsg(family: Self.afInet))
        var hops: [UInt8] = []
        hops += Self.nextHop(flags: Self.linkDown, index: 3, attributes: Self.nestedAttribute(Self.rtaGateway, [10, 0, 0, 2]))
        // A dead hop: dropped.
        hops += Self.nextHop(flags: Self.dead, index: 4)
        // RTA_VIA with an IPv6 gateway (IPv4 route via IPv6 next hop).
        hops += Self.nextHop(index: 5, attributes: Self.nestedAttribute(Self.rtaVia, Self.u16(UInt16(AF_INET6)) + Self.linkLocal))
        route.attribute(Self.rtaMultipath, hops)
        guard case .defaultRoute(let record) = route.parse(type: RTM_NEWROUTE) else { return XCTFail() }
        XCTAssertEqual(record.route.nextHops, [
            NextHop(interfaceIndex: 3, gateway: IPAddress("10.0.0.2"), isLinkDown: true),
            NextHop(interfaceIndex: 5, gateway: IPAddress("fe80::1")),
        ])
    }

    func testIPv6MultipathDefault() {
        var route = Builder(header: Self.rtmsg(family: Self.afInet6))
        route.attribute(Self.rtaPriority, Self.u32(1024))
        let first = IPAddress("2001:db8::2")!.bytes, second = IPAddress("2001:db8:2::2")!.bytes
        route.attribute(Self.rtaMultipath,
                        Self.nextHop(index: 3, attributes: Self.nestedAttribute(Self.rtaGateway, first))
                            + Self.nextHop(flags: Self.linkDown, index: 4, attributes: Self.nestedAttribute(Self.rtaGateway, second)))
        guard case .defaultRoute(let record) = route.parse(type: RTM_NEWROUTE) else { return XCTFail() }
        XCTAssertEqual(record.route, DefaultRoute(family: .ipv6, table: 254, metric: 1024, nextHops: [
            NextHop(interfaceIndex: 3, gateway: IPAddress("2001:db8::2")),
            NextHop(interfaceIndex: 4, gateway: IPAddress("2001:db8:2::2"), isLinkDown: true),
        ]))
    }

    /// What libnl 3.7's `rtnl_route_parse` mishandles never reaches it: a zero-length next
    /// hop (it loops, allocating, until memory runs out: the fuzzer's out-of-memory), a next
    /// hop whose aligned length exceeds what is left (it reads past the attribute), and an
    /// RTA_VIA too short for its family (a negative `memcpy`: the fuzzer's crash).
    func testRouteMessagesLibnlWouldMishandle() {
        let gateway = Self.nestedAttribute(Self.rtaGateway, [10, 0, 0, 2])
        let shortVia = Self.nestedAttribute(Self.rtaVia, [UInt8(AF_INET6)])
        let multipath = "malformed RTA_MULTIPATH", via = "RTA_VIA shorter than its address family"
        let cases: [(name: String, attributes: [(Int, [UInt8])], hazard: String)] = [
            ("a zero-length hop after a good one",
             [(Self.rtaMultipath, Self.nextHop(index: 3, attributes: gateway) + [UInt8](repeating: 0, count: 16))], multipath),
            ("a zero-length hop first", [(Self.rtaMultipath, [UInt8](repeating: 0, count: 8))], multipath),
            // rtnh_len 9 in 9 bytes: aligned to 12, more than is left.
            ("an unaligned last hop", [(Self.rtaMultipath, Self.u16(9) + [0, 0] + Self.i32(3) + [0])], multipath),
            // libnl keeps the last of repeated attributes: a bad second RTA_MULTIPATH counts.
            ("a bad repeated RTA_MULTIPATH",
             [(Self.rtaMultipath, Self.nextHop(index: 3, attributes: gateway)), (Self.rtaMultipath, [UInt8](repeating: 0, count: 8))],
             multipath),
            ("an empty RTA_VIA", [(Self.rtaOIF, Self.u32(2)), (Self.rtaVia, [])], via),
            ("a one-byte RTA_VIA", [(Self.rtaVia, [UInt8(AF_INET6)])], via),
            ("a short RTA_VIA in a next hop", [(Self.rtaMultipath, Self.nextHop(index: 3, attributes: shortVia))], via),
        ]
        for testCase in cases {
            var route = Builder(header: Self.rtmsg(family: Self.afInet))
            for (type, bytes) in testCase.attributes { route.attribute(type, bytes) }
            XCTAssertEqual(route.withMessage(type: RTM_NEWROUTE) { $0.routeParseHazard }, testCase.hazard, testCase.name)
            guard case .otherRoute = route.parse(type: RTM_NEWROUTE) else { return XCTFail(testCase.name) }
            XCTAssertEqual(route.lookup(), .failure(.lookupFailed("rtnl_route_parse: \(testCase.hazard)")), testCase.name)
        }
        // Short (1 to 7 bytes) hops move the walk on: libnl copes, and so do the kernel's.
        var short = Builder(header: Self.rtmsg(family: Self.afInet))
        short.attribute(Self.rtaMultipath, Self.u16(4) + [0, 0] + Self.i32(3) + Self.nextHop(index: 4, attributes: gateway))
        XCTAssertNil(short.withMessage(type: RTM_NEWROUTE) { $0.routeParseHazard })
        guard case .defaultRoute = short.parse(type: RTM_NEWROUTE) else { return XCTFail() }
    }

    func testSingleHopViaDeadFlagAndBlackhole() {
        // The single form with RTA_VIA (IPv4 default via an IPv6 link-local gateway).
        var via = Builder(header: Self.rtmsg(family: Self.afInet))
        via.attribute(Self.rtaOIF, Self.u32(2))
        via.attribute(Self.rtaVia, Self.u16(UInt16(AF_INET6)) + Self.linkLocal)
        guard case .defaultRoute(let viaRecord) = via.parse(type: RTM_NEWROUTE) else { return XCTFail() }
        XCTAssertEqual(viaRecord.route.nextHops, [NextHop(interfaceIndex: 2, gateway: IPAddress("fe80::1"))])
        // A single hop flagged dead (ignore_routes_with_linkdown) is still the route's hop.
        var deadHop = Builder(header: Self.rtmsg(family: Self.afInet6, flags: Self.linkDown | Self.dead))
        deadHop.attribute(Self.rtaOIF, Self.u32(2))
        guard case .defaultRoute(let deadRecord) = deadHop.parse(type: RTM_NEWROUTE) else { return XCTFail() }
        XCTAssertEqual(deadRecord.route.nextHops, [NextHop(interfaceIndex: 2, isLinkDown: true)])
        // A blackhole has no next hop at all.
        let blackhole = Builder(header: Self.rtmsg(family: Self.afInet, type: UInt8(RTN_BLACKHOLE)))
        guard case .defaultRoute(let blackholeRecord) = blackhole.parse(type: RTM_NEWROUTE) else { return XCTFail() }
        XCTAssertEqual(blackholeRecord.route, DefaultRoute(family: .ipv4, type: .blackhole))
    }

    // MARK: Links

    func testBridgePortMessagesAreNotLinkRemovals() {
        let port = Builder(header: Self.ifinfomsg(family: UInt8(AF_BRIDGE), index: 9))
        guard case .ignored = port.parse(type: RTM_DELLINK) else { return XCTFail() }
        let link = Builder(header: Self.ifinfomsg(index: 9))
        guard case .linkRemoved(9) = link.parse(type: RTM_DELLINK) else { return XCTFail() }
        var portUpdate = Builder(header: Self.ifinfomsg(family: UInt8(AF_BRIDGE), index: 9))
        portUpdate.attribute(Int(IFLA_IFNAME), Array("veth0".utf8) + [0])
        guard case .ignored = portUpdate.parse(type: RTM_NEWLINK) else { return XCTFail() }
    }

    func testLinkCarrierFallsBackToLowerUp() {
        var link = Builder(header: Self.ifinfomsg(type: 512 /* ppp */, index: 4, flags: 0x10041))
        link.attribute(Int(IFLA_IFNAME), Array("ppp0".utf8) + [0])
        guard case .link(let parsed) = link.parse(type: RTM_NEWLINK) else { return XCTFail() }
        XCTAssertEqual(parsed.name, "ppp0")
        XCTAssertEqual(parsed.hardwareType, ARPHardwareType.ppp)
        XCTAssertTrue(parsed.carrier)
        XCTAssertEqual(parsed.operState, .unknown)
    }

    func testLinkAttributes() {
        // IFLA_CARRIER, when sent, wins over IFF_LOWER_UP; operstate and kind come through.
        var link = Builder(header: Self.ifinfomsg(index: 6, flags: 0x10043))
        link.attribute(Int(IFLA_IFNAME), Array("wg0".utf8) + [0])
        link.attribute(Int(IFLA_OPERSTATE), [2 /* IF_OPER_DOWN */])
        link.attribute(Int(IFLA_CARRIER), [0])
        link.attribute(Int(IFLA_LINKINFO), Self.nestedAttribute(Int(IFLA_INFO_KIND), Array("wireguard".utf8) + [0]))
        guard case .link(let parsed) = link.parse(type: RTM_NEWLINK) else { return XCTFail() }
        XCTAssertEqual(parsed, Link(index: 6, name: "wg0", flags: LinkFlags(rawValue: 0x10043), operState: .down,
                                    carrier: false, hardwareType: 1, kind: "wireguard"))
        // No name, or no index: not a link.
        let nameless = Builder(header: Self.ifinfomsg(index: 6))
        guard case .ignored = nameless.parse(type: RTM_NEWLINK) else { return XCTFail() }
        var indexless = Builder(header: Self.ifinfomsg(index: 0))
        indexless.attribute(Int(IFLA_IFNAME), Array("x".utf8) + [0])
        guard case .ignored = indexless.parse(type: RTM_NEWLINK) else { return XCTFail() }
    }

    // MARK: Addresses

    func testAddressFlagsAttributeOverridesHeaderAndLocalWins() {
        // ifaddrmsg { family, prefixlen, flags (8-bit: permanent), scope global, index }
        var address = Builder(header: [Self.afInet, 32, 0x80, 0] + Self.u32(6))
        address.attribute(Int(IFA_ADDRESS), [198, 51, 100, 2])
        address.attribute(Int(IFA_LOCAL), [198, 51, 100, 1])
        address.attribute(Int(IFA_FLAGS), Self.u32(0x80 | 0x40 | 0x200))
        guard case .address(let parsed) = address.parse(type: RTM_NEWADDR) else { return XCTFail() }
        XCTAssertEqual(parsed.address, IPAddress("198.51.100.1"))
        XCTAssertEqual(parsed.interfaceIndex, 6)
        XCTAssertTrue(parsed.flags.contains(.tentative))
        XCTAssertTrue(parsed.flags.contains(.permanent))
    }

    func testAddressForms() {
        // IPv6 sends IFA_ADDRESS alone; the 8-bit flags stand without IFA_FLAGS.
        var v6 = Builder(header: [Self.afInet6, 64, 0x40, 253 /* link */] + Self.u32(3))
        v6.attribute(Int(IFA_ADDRESS), Self.linkLocal)
        guard case .addressRemoved(let removed) = v6.parse(type: RTM_DELADDR) else { return XCTFail() }
        XCTAssertEqual(removed, InterfaceAddress(interfaceIndex: 3, address: IPAddress("fe80::1")!, prefixLength: 64,
                                                 scope: .link, flags: .tentative))
        // IPv6 point-to-point: IFA_LOCAL is ours, IFA_ADDRESS the peer.
        var peer = Builder(header: [Self.afInet6, 128, 0, 0] + Self.u32(3))
        peer.attribute(Int(IFA_LOCAL), IPAddress("2001:db8::1")!.bytes)
        peer.attribute(Int(IFA_ADDRESS), IPAddress("2001:db8::2")!.bytes)
        guard case .address(let local) = peer.parse(type: RTM_NEWADDR) else { return XCTFail() }
        XCTAssertEqual(local.address, IPAddress("2001:db8::1"))
        // IPv4 without IFA_LOCAL (the kernel leaves out a zero one): IFA_ADDRESS it is.
        var v4 = Builder(header: [Self.afInet, 24, 0, 0] + Self.u32(2))
        v4.attribute(Int(IFA_ADDRESS), [192, 0, 2, 5])
        guard case .address(let only) = v4.parse(type: RTM_NEWADDR) else { return XCTFail() }
        XCTAssertEqual(only.address, IPAddress("192.0.2.5"))
        // Neither, or another family: nothing.
        let empty = Builder(header: [Self.afInet, 24, 0, 0] + Self.u32(2))
        guard case .ignored = empty.parse(type: RTM_NEWADDR) else { return XCTFail() }
        var other = Builder(header: [UInt8(AF_PACKET), 0, 0, 0] + Self.u32(2))
        other.attribute(Int(IFA_ADDRESS), [1, 2, 3, 4])
        guard case .ignored = other.parse(type: RTM_NEWADDR) else { return XCTFail() }
    }

    // MARK: Lookups

    func testLookupAnswer() {
        var reply = Builder(header: Self.rtmsg(family: Self.afInet, dstLength: 32, table: 254, flags: Self.linkDown))
        reply.attribute(Self.rtaTable, Self.u32(100))
        reply.attribute(Self.rtaOIF, Self.u32(4))
        reply.attribute(Self.rtaGateway, [10, 0, 0, 2])
        reply.attribute(Self.rtaPrefSrc, [10, 0, 0, 1])
        XCTAssertEqual(reply.lookup(), .route(RouteLookupResult(
            type: .unicast, outputInterface: 4, gateway: IPAddress("10.0.0.2"), preferredSource: IPAddress("10.0.0.1"),
            isLinkDown: true, table: 100
        )))
    }

    func testOlderKernelsIPv6RejectAnswersMapToFailures() {
        func answer(type: Int, cachedError: Int32) -> RouteLookup {
            var reply = Builder(header: Self.rtmsg(family: Self.afInet6, dstLength: 128, type: UInt8(type)))
            reply.attribute(Self.rtaOIF, Self.u32(1))
            reply.attribute(Self.rtaCacheInfo, Self.u32(0) + Self.u32(0) + Self.i32(0) + Self.i32(cachedError) + [UInt8](repeating: 0, count: 16))
            return reply.lookup()
        }
        XCTAssertEqual(answer(type: RTN_UNREACHABLE, cachedError: -ENETUNREACH), .failure(.noRoute))
        XCTAssertEqual(answer(type: RTN_UNREACHABLE, cachedError: -EHOSTUNREACH), .failure(.unreachableRoute))
        XCTAssertEqual(answer(type: RTN_UNREACHABLE, cachedError: Int32.min), .failure(.unreachableRoute))
        XCTAssertEqual(answer(type: RTN_BLACKHOLE, cachedError: -EINVAL), .failure(.blackholeRoute))
        XCTAssertEqual(answer(type: RTN_PROHIBIT, cachedError: -EACCES), .failure(.prohibitedRoute))
        XCTAssertEqual(answer(type: RTN_THROW, cachedError: -EAGAIN), .failure(.noRoute))
        guard case .route(let result) = answer(type: RTN_UNICAST, cachedError: 0) else { return XCTFail() }
        XCTAssertEqual(result.outputInterface, 1)
    }

    func testKernelErrnoMapping() {
        let table: [(Errno, RouteLookupFailure)] = [
            (.networkUnreachable, .noRoute),
            (.noRouteToHost, .unreachableRoute),
            (.invalidArgument, .blackholeRoute),
            (.permissionDenied, .prohibitedRoute),
            (.notPermitted, .prohibitedRoute),
            (.noBufferSpace, .lookupFailed(Errno.noBufferSpace.description)),
            (.timedOut, .lookupFailed("Connection timed out")),
        ]
        for (errno, failure) in table {
            XCTAssertEqual(FIBLookup.failure(for: errno), failure, "\(errno)")
        }
    }

    // MARK: Neighbours

    /// An `ndmsg`: family, ifindex, state, then NDA_DST (and NDA_LLADDR) as the kernel sends them.
    private static func neighbour(family: UInt8, index: Int32, state: UInt16, destination: IPAddress?) -> Builder {
        var builder = Builder(header: [family, 0, 0, 0] + i32(index) + u16(state) + [0, 1])
        if let destination { builder.attribute(Int(NDA_DST), destination.bytes) }
        builder.attribute(Int(NDA_LLADDR), [2, 0, 0, 0, 0, 1])
        return builder
    }

    /// Neighbour messages become the entry's key (interface, address) and state; a removal
    /// has none; bridge FDB entries and messages without an address are ignored.
    func testNeighbourMessages() {
        let gateway = GatewayKey(interfaceIndex: 2, address: IPAddress("10.77.0.1")!)
        let router = GatewayKey(interfaceIndex: 3, address: IPAddress("fe80::1")!)
        let cases: [(String, Builder, Int, GatewayKey?, NeighbourState?)] = [
            ("IPv4 FAILED", Self.neighbour(family: Self.afInet, index: 2, state: 0x20, destination: gateway.address), RTM_NEWNEIGH, gateway, .failed),
            ("IPv4 REACHABLE", Self.neighbour(family: Self.afInet, index: 2, state: 0x02, destination: gateway.address), RTM_NEWNEIGH, gateway, .reachable),
            ("IPv6 router STALE", Self.neighbour(family: Self.afInet6, index: 3, state: 0x04, destination: router.address), RTM_NEWNEIGH, router, .stale),
            ("IPv4 removed", Self.neighbour(family: Self.afInet, index: 2, state: 0x04, destination: gateway.address), RTM_DELNEIGH, gateway, nil),
            ("bridge FDB", Self.neighbour(family: UInt8(AF_BRIDGE), index: 2, state: 0x80, destination: nil), RTM_NEWNEIGH, nil, nil),
            ("no NDA_DST", Self.neighbour(family: Self.afInet, index: 2, state: 0x02, destination: nil), RTM_NEWNEIGH, nil, nil),
        ]
        for (name, builder, type, key, state) in cases {
            switch builder.parse(type: type) {
            case let .neighbour(parsedKey, parsedState):
                XCTAssertEqual(parsedKey, key, name)
                XCTAssertEqual(parsedState, state, name)
            case .ignored:
                XCTAssertNil(key, name)
            case let other:
                XCTFail("\(name): \(other)")
            }
        }
        let truncated = Self.neighbour(family: Self.afInet, index: 2, state: 0x20, destination: gateway.address)
        for length in 16..<(16 + MemoryLayout<ndmsg>.size) {
            XCTAssertFalse(truncated.withMessage(type: RTM_NEWNEIGH, length: length) { MessageParser.parse($0) }.isRelevant, "cut to \(length)")
        }
    }

    // MARK: Robustness

    /// Every prefix of every message kind, `nlmsg_len` cut to match: no crash, no
    /// out-of-bounds read that matters, and a message too short for its fixed header is ignored.
    func testTruncatedMessagesDoNotCrash() {
        var route = Builder(header: Self.rtmsg(family: Self.afInet6))
        route.attribute(Self.rtaTable, Self.u32(1000))
        route.attribute(Self.rtaMultipath, Self.nextHop(index: 3, attributes: Self.nestedAttribute(Self.rtaGateway, IPAddress("2001:db8::2")!.bytes))
                            + Self.nextHop(index: 4, attributes: Self.nestedAttribute(Self.rtaVia, Self.u16(UInt16(AF_INET6)) + Self.linkLocal)))
        route.attribute(Self.rtaCacheInfo, [UInt8](repeating: 0xFF, count: 32))
        var link = Builder(header: Self.ifinfomsg(index: 4, flags: 0x10041))
        link.attribute(Int(IFLA_IFNAME), Array("eth0".utf8) + [0])
        link.attribute(Int(IFLA_CARRIER), [1])
        link.attribute(Int(IFLA_LINKINFO), Self.nestedAttribute(Int(IFLA_INFO_KIND), Array("veth".utf8) + [0]))
        var address = Builder(header: [Self.afInet, 24, 0, 0] + Self.u32(2))
        address.attribute(Int(IFA_LOCAL), [192, 0, 2, 1])
        address.attribute(Int(IFA_FLAGS), Self.u32(0x80))
        let cases: [(Builder, Int, Int)] = [
            (route, RTM_NEWROUTE, MemoryLayout<rtmsg>.size), (link, RTM_NEWLINK, MemoryLayout<ifinfomsg>.size),
            (link, RTM_DELLINK, MemoryLayout<ifinfomsg>.size), (address, RTM_NEWADDR, MemoryLayout<ifaddrmsg>.size),
        ]
        for (builder, type, fixedHeader) in cases {
            for length in 16...(16 + builder.payload.count) {
                let parsed = builder.withMessage(type: type, length: length) { MessageParser.parse($0) }
                if length < 16 + fixedHeader && parsed.isRelevant { XCTFail("\(type) cut to \(length) bytes: \(parsed)") }
            }
        }
        for length in 16...(16 + route.payload.count) {
            let answer = route.withMessage(type: RTM_NEWROUTE, length: length) { FIBLookup.interpret($0) }
            if length < 16 + MemoryLayout<rtmsg>.size, case .route = answer { XCTFail("answer cut to \(length) bytes: \(answer)") }
        }
    }

    /// The libnl objects are released: parsing the same link, address and route
    /// messages 100k times each leaves the resident set where it was.
    func testParsingDoesNotLeak() throws {
        var route = Builder(header: Self.rtmsg(family: Self.afInet))
        route.attribute(Self.rtaMultipath, Self.nextHop(index: 3, attributes: Self.nestedAttribute(Self.rtaGateway, [10, 0, 0, 2]))
                            + Self.nextHop(index: 5, attributes: Self.nestedAttribute(Self.rtaVia, Self.u16(UInt16(AF_INET6)) + Self.linkLocal)))
        var link = Builder(header: Self.ifinfomsg(index: 4, flags: 0x10041))
        link.attribute(Int(IFLA_IFNAME), Array("veth0".utf8) + [0])
        link.attribute(Int(IFLA_LINKINFO), Self.nestedAttribute(Int(IFLA_INFO_KIND), Array("veth".utf8) + [0]))
        var address = Builder(header: [Self.afInet, 32, 0, 0] + Self.u32(6))
        address.attribute(Int(IFA_ADDRESS), [198, 51, 100, 2])
        address.attribute(Int(IFA_LOCAL), [198, 51, 100, 1])
        func parseAll(_ rounds: Int) {
            for _ in 0..<rounds {
                _ = route.parse(type: RTM_NEWROUTE)
                _ = route.lookup()
                _ = link.parse(type: RTM_NEWLINK)
                _ = address.parse(type: RTM_NEWADDR)
            }
        }
        parseAll(10_000)  // warm up allocator caches
        let before = try Self.residentBytes()
        parseAll(100_000)
        let growth = try Self.residentBytes() - before
        print("RSS growth after 100k parses of each message kind: \(growth / 1024) KiB")
        // A leak of even one small libnl object per parse would be megabytes here.
        XCTAssertLessThan(growth, 2 << 20)
    }

    private static func residentBytes() throws -> Int {
        let statm = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8)
        let pages = try XCTUnwrap(statm.split(separator: " ").dropFirst().first.flatMap { Int($0) })
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    // MARK: Sysfs and errors

    func testUeventDeviceType() {
        XCTAssertEqual(SysfsDeviceFacts.deviceType(fromUevent: "INTERFACE=wlan0\nIFINDEX=3\nDEVTYPE=wlan\n"), "wlan")
        XCTAssertNil(SysfsDeviceFacts.deviceType(fromUevent: "INTERFACE=eth0\n"))
        XCTAssertEqual(SysfsDeviceFacts(root: "/nonexistent").facts(for: "eth0"), DeviceFacts())
        XCTAssertEqual(SysfsDeviceFacts(root: "/sys").facts(for: "../etc"), DeviceFacts())
    }

    func testErrorDescription() {
        let error = NetlinkError(operation: "nl_connect(event)", errno: .permissionDenied)
        XCTAssertEqual(error.description, "nl_connect(event): Permission denied (errno 13)")
        let libnl = NetlinkError(operation: "nl_socket_alloc(event)", libnlCode: -NLE_NOMEM)
        XCTAssertEqual(libnl.code, .libnl(NLE_NOMEM))
        XCTAssertEqual(libnl.description, "nl_socket_alloc(event): Out of memory (libnl \(NLE_NOMEM))")
    }

    // MARK: Fuzz inputs

    /// Every seed and every input a fuzz run found (`Fuzz/corpus/netlink/`,
    /// `Fuzz/regressions/netlink/`), through the entry point `scripts/fuzz netlink` fuzzes.
    func testFuzzInputs() throws {
        for (_, bytes) in try FuzzInputs.inputs(for: "netlink") {
            NetlinkFuzzEntryPoint.datagram(bytes)
        }
    }
}

private func u16(_ value: UInt16) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
private func u32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
