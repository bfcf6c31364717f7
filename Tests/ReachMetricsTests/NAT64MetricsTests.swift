import ReachabilityCore
@testable import ReachMetrics
import TestSupport
import XCTest

/// The NAT64 series: the path's IPv4-through-NAT64 gauge and one info series per prefix an
/// interface's network announced.
final class NAT64MetricsTests: XCTestCase {
    private func text(prefixes: [Int32: [NAT64Prefix]], ipv4: Bool) -> String {
        let lo = Link(index: 1, name: "lo", flags: [.up, .running, .loopback], operState: .unknown, carrier: true, hardwareType: ARPHardwareType.loopback)
        let eth = Link(index: 2, name: "eth0", flags: [.up, .running], operState: .up, carrier: true)
        var addresses = [InterfaceAddress(interfaceIndex: 2, address: IPAddress("2001:db8:1::2")!, prefixLength: 64)]
        if ipv4 { addresses.append(InterfaceAddress(interfaceIndex: 2, address: IPAddress("10.0.0.2")!, prefixLength: 24)) }
        var snapshot = NetworkSnapshot(
            links: [1: lo, 2: eth], addresses: addresses,
            lookups: [
                .ipv4: ipv4 ? .route(RouteLookupResult(outputInterface: 2, gateway: IPAddress("10.0.0.1"))) : .failure(.noRoute),
                .ipv6: .route(RouteLookupResult(outputInterface: 2, gateway: IPAddress("fe80::1"))),
            ]
        )
        snapshot.nat64Prefixes = prefixes
        let facts = MetricsFacts(
            state: ReachabilityState(snapshot: snapshot, policy: InterfacePolicy()), sequence: 1, lastChange: 0, subscribers: 0,
            refusals: [:], netlinkEvents: 0, resyncs: [:], probing: false
        )
        return MetricsExposition.text(facts)
    }

    private func samples(_ text: String, _ name: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { $0.hasPrefix(name + " ") || $0.hasPrefix(name + "{") }
    }

    func testSeries() {
        let prefix = NAT64Prefix("64:ff9b::/96", source: .routerAdvertisement)!
        let dns64 = NAT64Prefix("2001:db8:64::/96", source: .dns64)!
        let cases: [(String, [Int32: [NAT64Prefix]], Bool, [String], [String])] = [
            ("IPv6-only with PREF64", [2: [prefix]], false, ["reachd_path_ipv4_via_nat64 1.0"],
             [#"reachd_interface_nat64_prefix{device="eth0",prefix="64:ff9b::/96",source="routerAdvertisement"} 1.0"#]),
            ("IPv6-only with DNS64", [2: [dns64]], false, ["reachd_path_ipv4_via_nat64 1.0"],
             [#"reachd_interface_nat64_prefix{device="eth0",prefix="2001:db8:64::/96",source="dns64"} 1.0"#]),
            ("dual-stack with PREF64: native IPv4", [2: [prefix]], true, ["reachd_path_ipv4_via_nat64 0.0"],
             [#"reachd_interface_nat64_prefix{device="eth0",prefix="64:ff9b::/96",source="routerAdvertisement"} 1.0"#]),
            ("no prefix", [:], false, ["reachd_path_ipv4_via_nat64 0.0"], []),
        ]
        for (name, prefixes, ipv4, path, interface) in cases {
            let text = text(prefixes: prefixes, ipv4: ipv4)
            XCTAssertEqual(samples(text, "reachd_path_ipv4_via_nat64"), path, name)
            XCTAssertEqual(samples(text, "reachd_interface_nat64_prefix"), interface, name)
        }
    }

    func testCLATSeries() {
        let lo = Link(index: 1, name: "lo", flags: [.up, .running, .loopback], operState: .unknown, carrier: true, hardwareType: ARPHardwareType.loopback)
        let eth = Link(index: 2, name: "eth0", flags: [.up, .running], operState: .up, carrier: true)
        let clat = Link(index: 5, name: "clat", flags: [.up, .running, .pointToPoint], operState: .unknown, carrier: true, hardwareType: ARPHardwareType.none)
        func text(clatAddress: String) -> String {
            let snapshot = NetworkSnapshot(
                links: [1: lo, 2: eth, 5: clat],
                addresses: [
                    InterfaceAddress(interfaceIndex: 2, address: IPAddress("2001:db8:1::2")!, prefixLength: 64),
                    InterfaceAddress(interfaceIndex: 5, address: IPAddress(clatAddress)!, prefixLength: 29),
                ],
                defaultRoutes: [
                    DefaultRoute(family: .ipv6, metric: 1024, nextHops: [NextHop(interfaceIndex: 2, gateway: IPAddress("fe80::1"))]),
                    DefaultRoute(family: .ipv4, metric: 1024, nextHops: [NextHop(interfaceIndex: 5, gateway: nil)]),
                ],
                lookups: [
                    .ipv4: .route(RouteLookupResult(outputInterface: 5, gateway: nil)),
                    .ipv6: .route(RouteLookupResult(outputInterface: 2, gateway: IPAddress("fe80::1"))),
                ]
            )
            let facts = MetricsFacts(
                state: ReachabilityState(snapshot: snapshot, policy: InterfacePolicy()), sequence: 1, lastChange: 0, subscribers: 0,
                refusals: [:], netlinkEvents: 0, resyncs: [:], probing: false
            )
            return MetricsExposition.text(facts)
        }
        let cases: [(String, String, [String])] = [
            ("a CLAT's 192.0.0.1/29", "192.0.0.1", ["reachd_path_ipv4_via_clat 1.0"]),
            ("a VPN's tun", "10.8.0.2", ["reachd_path_ipv4_via_clat 0.0"]),
        ]
        for (name, address, expected) in cases {
            XCTAssertEqual(samples(text(clatAddress: address), "reachd_path_ipv4_via_clat"), expected, name)
        }
    }

    func testPromtoolAccepts() throws {
        let promtool = try XCTUnwrap(PrometheusTools.promtool, "promtool not available (scripts/bootstrap --test unpacks it)")
        let prefixes = [NAT64Prefix("64:ff9b::/96", source: .routerAdvertisement)!, NAT64Prefix("2001:db8:64::/96", source: .dns64)!]
        let checked = try PrometheusTools.check(text(prefixes: [2: prefixes], ipv4: false), promtool: promtool)
        XCTAssertEqual(checked.status, 0, checked.output)
        XCTAssertEqual(checked.output, "", "promtool has no complaint")
    }
}
