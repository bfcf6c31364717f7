@testable import NetlinkMonitor
import ReachabilityCore
import XCTest

/// Pure decoding tests on hand-built messages, for the paths the running kernel
/// cannot be made to produce (older kernels' IPv6 lookup answers, bridge-port
/// messages, dead next hops).
final class MessageParsingTests: XCTestCase {
    /// Builds the payload of a message: a fixed header and TLV attributes.
    private struct Builder {
        var bytes: [UInt8]

        init(header: [UInt8]) { bytes = header }

        mutating func attribute(_ type: UInt16, _ payload: [UInt8]) {
            let length = 4 + payload.count
            bytes += withUnsafeBytes(of: UInt16(length)) { Array($0) } + withUnsafeBytes(of: type) { Array($0) } + payload
            bytes += [UInt8](repeating: 0, count: Kernel.align(length) - length)
        }

        func parse(type: UInt16, flags: UInt16 = 0) -> ParsedMessage {
            bytes.withUnsafeBytes { MessageParser.parse(RawMessage(type: type, flags: flags, payload: $0)) }
        }

        func lookup() -> RouteLookup {
            bytes.withUnsafeBytes { FIBLookup.interpret(RawMessage(type: Kernel.newRoute, payload: $0)) }
        }
    }

    private static func u32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
    private static func i32(_ value: Int32) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }

    /// struct rtmsg.
    private static func rtmsg(family: UInt8, dstLength: UInt8 = 0, table: UInt8 = 254, type: UInt8 = 1, flags: UInt32 = 0) -> [UInt8] {
        [family, dstLength, 0, 0, table, 3, 0, type] + u32(flags)
    }

    func testNonDefaultRouteStopsAtTheHeader() {
        // No attributes at all: only the header decides.
        let route = Builder(header: Self.rtmsg(family: Kernel.afInet, dstLength: 24))
        guard case .otherRoute = route.parse(type: Kernel.newRoute) else { return XCTFail() }
        let cloned = Builder(header: Self.rtmsg(family: Kernel.afInet6, dstLength: 128, flags: Kernel.routeCloned))
        guard case .ignored = cloned.parse(type: Kernel.newRoute) else { return XCTFail() }
    }

    func testDefaultRouteTableOverrideMetricAndReplace() {
        var route = Builder(header: Self.rtmsg(family: Kernel.afInet, table: 252 /* RT_TABLE_COMPAT */, flags: Kernel.nextHopLinkDown))
        route.attribute(Kernel.rtaTable, Self.u32(1000))
        route.attribute(Kernel.rtaPriority, Self.u32(600))
        route.attribute(Kernel.rtaOutputInterface, Self.u32(7))
        route.attribute(Kernel.rtaGateway, [192, 0, 2, 1])
        guard case .defaultRoute(let record) = route.parse(type: Kernel.newRoute, flags: Kernel.flagReplace) else { return XCTFail() }
        XCTAssertEqual(record.route, DefaultRoute(
            family: .ipv4, table: 1000, type: .unicast, metric: 600,
            nextHops: [NextHop(interfaceIndex: 7, gateway: IPAddress("192.0.2.1"), isLinkDown: true)]
        ))
        XCTAssertTrue(record.replaces)
    }

    func testMultipathWithViaAndDeadHop() {
        var route = Builder(header: Self.rtmsg(family: Kernel.afInet))
        func u16(_ value: UInt16) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
        var hops: [UInt8] = []
        // rtnexthop { len, flags, hops, ifindex } + RTA_GATEWAY
        hops += u16(16) + [UInt8(Kernel.nextHopLinkDown), 0] + Self.i32(3)
        hops += u16(8) + u16(Kernel.rtaGateway) + [10, 0, 0, 2]
        // A dead hop: dropped.
        hops += u16(8) + [UInt8(Kernel.nextHopDead), 0] + Self.i32(4)
        // RTA_VIA with an IPv6 gateway (IPv4 route via IPv6 next hop).
        let linkLocal: [UInt8] = [0xFE, 0x80] + [UInt8](repeating: 0, count: 13) + [1]
        hops += u16(8 + 24) + [0, 0] + Self.i32(5)
        hops += u16(4 + 18) + u16(Kernel.rtaVia) + u16(UInt16(Kernel.afInet6))
        hops += linkLocal + [0, 0]
        route.attribute(Kernel.rtaMultipath, hops)
        guard case .defaultRoute(let record) = route.parse(type: Kernel.newRoute) else { return XCTFail() }
        XCTAssertEqual(record.route.nextHops, [
            NextHop(interfaceIndex: 3, gateway: IPAddress("10.0.0.2"), isLinkDown: true),
            NextHop(interfaceIndex: 5, gateway: IPAddress("fe80::1")),
        ])
    }

    func testBridgePortMessagesAreNotLinkRemovals() {
        let port = Builder(header: [Kernel.afBridge, 0, 1, 0] + Self.i32(9) + Self.u32(0) + Self.u32(0))
        guard case .ignored = port.parse(type: Kernel.delLink) else { return XCTFail() }
        let link = Builder(header: [Kernel.afUnspec, 0, 1, 0] + Self.i32(9) + Self.u32(0) + Self.u32(0))
        guard case .linkRemoved(9) = link.parse(type: Kernel.delLink) else { return XCTFail() }
    }

    func testLinkCarrierFallsBackToLowerUp() {
        var link = Builder(header: [Kernel.afUnspec, 0, 0x00, 0x02 /* 512: ppp */] + Self.i32(4) + Self.u32(0x10041) + Self.u32(0))
        link.attribute(Kernel.iflaIfName, Array("ppp0".utf8) + [0])
        guard case .link(let parsed) = link.parse(type: Kernel.newLink) else { return XCTFail() }
        XCTAssertEqual(parsed.name, "ppp0")
        XCTAssertEqual(parsed.hardwareType, ARPHardwareType.ppp)
        XCTAssertTrue(parsed.carrier)
        XCTAssertEqual(parsed.operState, .unknown)
    }

    func testAddressFlagsAttributeOverridesHeaderAndLocalWins() {
        // ifaddrmsg { family, prefixlen, flags (8-bit: permanent), scope global, index }
        var address = Builder(header: [Kernel.afInet, 32, 0x80, 0] + Self.u32(6))
        address.attribute(Kernel.ifaAddress, [198, 51, 100, 2])
        address.attribute(Kernel.ifaLocal, [198, 51, 100, 1])
        address.attribute(Kernel.ifaFlags, Self.u32(0x80 | 0x40 | 0x200))
        guard case .address(let parsed) = address.parse(type: Kernel.newAddress) else { return XCTFail() }
        XCTAssertEqual(parsed.address, IPAddress("198.51.100.1"))
        XCTAssertEqual(parsed.interfaceIndex, 6)
        XCTAssertTrue(parsed.flags.contains(.tentative))
        XCTAssertTrue(parsed.flags.contains(.permanent))
    }

    func testOlderKernelsIPv6RejectAnswersMapToFailures() {
        func answer(type: UInt8, cachedError: Int32) -> RouteLookup {
            var reply = Builder(header: Self.rtmsg(family: Kernel.afInet6, dstLength: 128, type: type))
            reply.attribute(Kernel.rtaOutputInterface, Self.u32(1))
            reply.attribute(Kernel.rtaCacheInfo, Self.u32(0) + Self.u32(0) + Self.i32(0) + Self.i32(cachedError) + [UInt8](repeating: 0, count: 16))
            return reply.lookup()
        }
        XCTAssertEqual(answer(type: Kernel.rtnUnreachable, cachedError: -Kernel.enetunreach), .failure(.noRoute))
        XCTAssertEqual(answer(type: Kernel.rtnUnreachable, cachedError: -Kernel.ehostunreach), .failure(.unreachableRoute))
        XCTAssertEqual(answer(type: Kernel.rtnBlackhole, cachedError: -22), .failure(.blackholeRoute))
        XCTAssertEqual(answer(type: Kernel.rtnProhibit, cachedError: -13), .failure(.prohibitedRoute))
        XCTAssertEqual(answer(type: Kernel.rtnThrow, cachedError: -11), .failure(.noRoute))
        guard case .route(let result) = answer(type: 1, cachedError: 0) else { return XCTFail() }
        XCTAssertEqual(result.outputInterface, 1)
    }

    func testKernelErrnoMapping() {
        XCTAssertEqual(RouteLookupFailure(errno: 101), .noRoute)
        XCTAssertEqual(RouteLookupFailure(errno: 113), .unreachableRoute)
        XCTAssertEqual(RouteLookupFailure(errno: 22), .blackholeRoute)
        XCTAssertEqual(RouteLookupFailure(errno: 13), .prohibitedRoute)
    }

    func testUeventDeviceType() {
        XCTAssertEqual(SysfsDeviceFacts.deviceType(fromUevent: "INTERFACE=wlan0\nIFINDEX=3\nDEVTYPE=wlan\n"), "wlan")
        XCTAssertNil(SysfsDeviceFacts.deviceType(fromUevent: "INTERFACE=eth0\n"))
        XCTAssertEqual(SysfsDeviceFacts(root: "/nonexistent").facts(for: "eth0"), DeviceFacts())
        XCTAssertEqual(SysfsDeviceFacts(root: "/sys").facts(for: "../etc"), DeviceFacts())
    }

    func testErrorDescription() {
        let error = NetlinkError(operation: "nl_connect(event)", errno: 13)
        XCTAssertEqual(error.description, "nl_connect(event): Permission denied (errno 13)")
    }
}
