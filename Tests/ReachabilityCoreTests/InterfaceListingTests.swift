import ReachabilityCore
import XCTest

final class InterfaceListingTests: XCTestCase {
    private static let network = snapshot(
        links: [wwan0, docker0, link(3, "wlan0", carrier: false, oper: .down, device: .wireless), eth0, lo,
                link(9, "tap0", up: false, kind: "tun")],
        addresses: [
            addr(2, "10.0.0.2"), addr(2, "2001:db8:1::2", flags: .tentative), addr(2, "fe80::2"),
            addr(2, "2001:db8:1::3", flags: [.tentative, .dadFailed]), addr(2, "2001:db8:1::4", flags: [.tentative, .optimistic]),
            addr(1, "127.0.0.1", 8), addr(4, "100.64.0.2", 30), addr(7, "172.17.0.1", 16),
        ]
    )

    func testInterfacesByIndexWithPolicyApplied() {
        let listing = InterfaceListing.describe(Self.network, policy: InterfacePolicy(overrides: [.init(pattern: "wlan0", isConstrained: true)]))
        typealias Row = (index: Int, name: String, type: InterfaceType, kind: String?, operState: String, up: Bool, carrier: Bool,
                         expensive: Bool, constrained: Bool, ignored: Bool, addresses: Int)
        let expected: [Row] = [
            (1, "lo", .loopback, nil, "UNKNOWN", true, true, false, false, false, 1),
            (2, "eth0", .wiredEthernet, nil, "UP", true, true, false, false, false, 5),
            (3, "wlan0", .wifi, nil, "DOWN", true, false, false, true, false, 0),
            (4, "wwan0", .cellular, nil, "UNKNOWN", true, true, true, false, false, 1),
            (7, "docker0", .wiredEthernet, "bridge", "UP", true, true, false, false, true, 1),
            (9, "tap0", .other, "tun", "DOWN", false, true, false, false, false, 0),
        ]
        XCTAssertEqual(listing.map(\.name), expected.map(\.name), "sorted by index, every link listed (ignored ones too)")
        for (row, described) in zip(expected, listing) {
            let name = row.name
            XCTAssertEqual(described.index, row.index, "\(name): index")
            XCTAssertEqual(described.type, row.type, "\(name): type")
            XCTAssertEqual(described.kind, row.kind, "\(name): kind")
            XCTAssertEqual(described.operState, row.operState, "\(name): operState")
            XCTAssertEqual(described.up, row.up, "\(name): up")
            XCTAssertEqual(described.carrier, row.carrier, "\(name): carrier")
            XCTAssertEqual(described.isExpensive, row.expensive, "\(name): isExpensive")
            XCTAssertEqual(described.isConstrained, row.constrained, "\(name): isConstrained")
            XCTAssertEqual(described.ignored, row.ignored, "\(name): ignored")
            XCTAssertEqual(described.addresses.count, row.addresses, "\(name): address count")
        }
    }

    func testAddressFlags() {
        let eth0 = InterfaceListing.describe(Self.network).first { $0.name == "eth0" }
        typealias Row = (address: String, prefix: Int, family: AddressFamily, scope: AddressScope, tentative: Bool, dadFailed: Bool, usable: Bool)
        let expected: [Row] = [
            ("10.0.0.2", 24, .ipv4, .global, false, false, true),
            ("2001:db8:1::2", 64, .ipv6, .global, true, false, false),
            ("fe80::2", 64, .ipv6, .link, false, false, false),
            ("2001:db8:1::3", 64, .ipv6, .global, true, true, false),
            ("2001:db8:1::4", 64, .ipv6, .global, true, false, true),
        ]
        let addresses = eth0?.addresses ?? []
        XCTAssertEqual(addresses.map(\.address), expected.map(\.address), "eth0 addresses in snapshot order")
        for (row, described) in zip(expected, addresses) {
            let name = row.address
            XCTAssertEqual(described.prefixLength, row.prefix, "\(name): prefixLength")
            XCTAssertEqual(described.family, row.family, "\(name): family")
            XCTAssertEqual(described.scope, row.scope, "\(name): scope")
            XCTAssertEqual(described.tentative, row.tentative, "\(name): tentative")
            XCTAssertEqual(described.dadFailed, row.dadFailed, "\(name): dadFailed")
            XCTAssertEqual(described.usable, row.usable, "\(name): usable")
        }
    }

    func testDefaultPolicyAndEmptySnapshot() {
        XCTAssertEqual(InterfaceListing.describe(NetworkSnapshot()), [], "empty snapshot lists nothing")
        let noGlobs = InterfaceListing.describe(Self.network, policy: InterfacePolicy(ignoredPatterns: [])).filter(\.ignored)
        XCTAssertEqual(noGlobs.map(\.name), ["docker0"], "without globs, a bridge with no port and no default route is still a guests' bridge")
        let keepAll = InterfacePolicy(ignoredPatterns: [], overrides: [.init(pattern: "*", isIgnored: false)])
        let ignored = InterfaceListing.describe(Self.network, policy: keepAll).filter(\.ignored)
        XCTAssertEqual(ignored.map(\.name), [], "a policy that ignores nothing marks nothing")
    }
}
