import CNetlink
@testable import NetlinkMonitor
import ReachabilityCore
import SystemPackage
import XCTest

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

    // MARK: Links

    func testBridgePortMessagesAreNotLinkRemovals() {
        let port = Builder(header: Self.ifinfomsg(family: UInt8(AF_BRIDGE), index: 9))
        guard case .ignored = port.parse(type: RTM_DELLINK) else { return XCTFail() }
        let link = Builder(header: Self.ifinfomsg(index: 9))
        guard case .linkRemoved(9) = link.parse(type: RTM_DELLINK) else { return XCTFail() }
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

    // MARK: Lookups

    func testOlderKernelsIPv6RejectAnswersMapToFailures() {
        func answer(type: Int, cachedError: Int32) -> RouteLookup {
            var reply = Builder(header: Self.rtmsg(family: Self.afInet6, dstLength: 128, type: UInt8(type)))
            reply.attribute(Self.rtaOIF, Self.u32(1))
            reply.attribute(Self.rtaCacheInfo, Self.u32(0) + Self.u32(0) + Self.i32(0) + Self.i32(cachedError) + [UInt8](repeating: 0, count: 16))
            return reply.lookup()
        }
        XCTAssertEqual(answer(type: RTN_UNREACHABLE, cachedError: -ENETUNREACH), .failure(.noRoute))
        XCTAssertEqual(answer(type: RTN_UNREACHABLE, cachedError: -EHOSTUNREACH), .failure(.unreachableRoute))
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
        ]
        for (errno, failure) in table {
            XCTAssertEqual(FIBLookup.failure(for: errno), failure, "\(errno)")
        }
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
    }
}

private func u16(_ value: UInt16) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
private func u32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
