import ReachabilityCore
import XCTest

/// What NAT64 prefixes do to the path and to a target's answer: an IPv6-only network's
/// prefix makes IPv4 reachable through it, native IPv4 always wins, and an IPv4 literal is
/// answered through its synthesized address only when IPv4 itself cannot reach.
final class NAT64DerivationTests: XCTestCase {
    private static let prefix = NAT64Prefix("64:ff9b::/96", source: .routerAdvertisement)!
    private static let dns64 = NAT64Prefix("2001:db8:64::/96", source: .dns64)!

    private struct PathCase {
        var name: String
        var addresses: [InterfaceAddress]
        var v4: RouteLookup
        var v6: RouteLookup
        var prefixes: [Int32: [NAT64Prefix]]
        var supportsIPv4: Bool
        var carried: [String]?
        var via: String?
        var summary: String
    }

    func testPathCarriesPrefixes() {
        let v6Only = loAddresses + [addr(2, "2001:db8:1::2")]
        let dual = v6Only + [addr(2, "10.0.0.2")]
        let cases: [PathCase] = [
            PathCase(name: "IPv6-only with PREF64: IPv4 via NAT64", addresses: v6Only, v4: lookupFailure(.noRoute),
                     v6: routeVia(2, gateway: "fe80::1"), prefixes: [2: [Self.prefix]], supportsIPv4: false,
                     carried: ["64:ff9b::/96"], via: "64:ff9b::/96",
                     summary: "reachable via eth0 (wiredEthernet) gw fe80::1, IPv6, IPv4 via NAT64 64:ff9b::/96"),
            PathCase(name: "IPv6-only without a prefix: nothing", addresses: v6Only, v4: lookupFailure(.noRoute),
                     v6: routeVia(2, gateway: "fe80::1"), prefixes: [:], supportsIPv4: false, carried: nil, via: nil,
                     summary: "reachable via eth0 (wiredEthernet) gw fe80::1, IPv6"),
            PathCase(name: "dual-stack with PREF64: native IPv4, no via", addresses: dual, v4: routeVia(2, gateway: "10.0.0.1"),
                     v6: routeVia(2, gateway: "fe80::1"), prefixes: [2: [Self.prefix]], supportsIPv4: true,
                     carried: ["64:ff9b::/96"], via: nil,
                     summary: "reachable via eth0 (wiredEthernet) gw 10.0.0.1,fe80::1, IPv4+IPv6"),
            PathCase(name: "a prefix on another link than IPv6's: not the path's", addresses: v6Only, v4: lookupFailure(.noRoute),
                     v6: routeVia(2, gateway: "fe80::1"), prefixes: [3: [Self.prefix]], supportsIPv4: false, carried: nil, via: nil,
                     summary: "reachable via eth0 (wiredEthernet) gw fe80::1, IPv6"),
            PathCase(name: "no IPv6 either: no via", addresses: loAddresses + [addr(2, "fe80::2")], v4: lookupFailure(.noRoute),
                     v6: routeVia(2, gateway: "fe80::1"), prefixes: [2: [Self.prefix]], supportsIPv4: false, carried: nil, via: nil,
                     summary: "not reachable: noAddress"),
            PathCase(name: "DNS64's prefix counts too", addresses: v6Only, v4: lookupFailure(.noRoute),
                     v6: routeVia(2, gateway: "fe80::1"), prefixes: [2: [Self.dns64]], supportsIPv4: false,
                     carried: ["2001:db8:64::/96"], via: "2001:db8:64::/96",
                     summary: "reachable via eth0 (wiredEthernet) gw fe80::1, IPv6, IPv4 via NAT64 2001:db8:64::/96"),
        ]
        for testCase in cases {
            var state = snapshot(links: [lo, eth0, wlan0], addresses: testCase.addresses, v4: testCase.v4, v6: testCase.v6)
            state.nat64Prefixes = testCase.prefixes
            let path = PathDerivation.derive(state)
            XCTAssertEqual(path.supportsIPv4, testCase.supportsIPv4, testCase.name)
            XCTAssertEqual(path.nat64Prefixes?.map(\.description), testCase.carried, testCase.name)
            XCTAssertEqual(path.ipv4ViaNAT64?.description, testCase.via, testCase.name)
            XCTAssertEqual(path.summary, testCase.summary, testCase.name)
            let listed = InterfaceListing.describe(state).first { $0.name == "eth0" }
            XCTAssertEqual(listed?.nat64Prefixes, testCase.prefixes[2], testCase.name)
        }
    }

    func testViaNAT64ChangesTheIPv4Entry() {
        var before = Path(status: .satisfied, reachability: .reachableViaWired, supportsIPv6: true)
        var after = before
        after.ipv4ViaNAT64 = Self.prefix
        XCTAssertEqual(PathChange.between(before, addresses: [], and: after, addresses: []), [.ipv4])
        before.nat64Prefixes = [Self.prefix]
        XCTAssertEqual(PathChange.between(before, addresses: [], and: before, addresses: []), [])
    }

    private struct TargetCase {
        var name: String
        var addresses: [InterfaceAddress]
        var route: RouteLookup
        var nat64: RouteLookup?
        var status: PathStatus
        var reason: UnsatisfiedReason?
        /// address, reachable, interface, viaNAT64, source
        var line: String
    }

    func testIPv4LiteralAnsweredThroughNAT64() {
        let v6Only = loAddresses + [addr(2, "2001:db8:1::2")]
        let dual = v6Only + [addr(2, "10.0.0.2")]
        let synthesized = "64:ff9b::c000:201"
        let cases: [TargetCase] = [
            TargetCase(name: "IPv6-only: through the synthesized address", addresses: v6Only, route: lookupFailure(.noRoute),
                       nat64: routeVia(2, gateway: "fe80::1", source: "2001:db8:1::2"), status: .satisfied,
                       line: "192.0.2.1 true eth0 \(synthesized) 64:ff9b::/96 2001:db8:1::2"),
            TargetCase(name: "no NAT64 lookup: native answer", addresses: v6Only, route: lookupFailure(.noRoute), nat64: nil,
                       status: .unsatisfied, reason: .noRoute, line: "192.0.2.1 false - - - -"),
            TargetCase(name: "native IPv4 wins", addresses: dual, route: routeVia(2, gateway: "10.0.0.1", source: "10.0.0.2"),
                       nat64: routeVia(2, gateway: "fe80::1", source: "2001:db8:1::2"), status: .satisfied,
                       line: "192.0.2.1 true eth0 - - 10.0.0.2"),
            TargetCase(name: "the synthesized address unreachable too: IPv4's own reason", addresses: v6Only,
                       route: lookupFailure(.noRoute), nat64: lookupFailure(.unreachableRoute), status: .unsatisfied, reason: .noRoute,
                       line: "192.0.2.1 false - - - -"),
            TargetCase(name: "IPv6 without a usable address: IPv4's own reason", addresses: loAddresses + [addr(2, "fe80::2")],
                       route: lookupFailure(.noRoute), nat64: routeVia(2, gateway: "fe80::1"), status: .unsatisfied, reason: .noRoute,
                       line: "192.0.2.1 false - - - -"),
        ]
        for testCase in cases {
            let state = snapshot(links: [lo, eth0], addresses: testCase.addresses)
            let nat64 = testCase.nat64.map { NAT64Lookup(prefix: Self.prefix, address: ip(synthesized), route: $0) }
            let path = TargetDerivation.derive([TargetLookup(address: ip("192.0.2.1"), route: testCase.route, nat64: nat64)],
                                               snapshot: state, policy: InterfacePolicy())
            XCTAssertEqual(path.status, testCase.status, testCase.name)
            XCTAssertEqual(path.unsatisfiedReason, testCase.reason, testCase.name)
            let answer = path.addresses[0]
            XCTAssertEqual(answer.family, .ipv4, testCase.name)
            let line = [answer.address, "\(answer.reachable)", answer.interface ?? "-", answer.viaNAT64 ?? "-",
                        answer.nat64Prefix ?? "-", answer.source ?? "-"].joined(separator: " ")
            XCTAssertEqual(line, testCase.line, testCase.name)
        }
    }

    func testChoosingThePrefixToLookUp() {
        let ipv4 = ip("192.0.2.1")
        let other = NAT64Prefix("2001:db8:99::/96", source: .routerAdvertisement)!
        var asked: [String] = []
        // The first link's prefix routes out of link 3: link 5's, which routes out of link 5, wins.
        let chosen = NAT64Lookup.choose(for: ipv4, prefixes: [5: [other], 2: [Self.prefix]]) { address in
            asked.append(address.description)
            return address.description.hasPrefix("64:ff9b") ? routeVia(3) : routeVia(5)
        }
        XCTAssertEqual(asked, ["64:ff9b::c000:201", "2001:db8:99::c000:201"])
        XCTAssertEqual(chosen?.prefix, other)
        XCTAssertEqual(chosen?.address, ip("2001:db8:99::c000:201"))
        // None leaves by its own link (no route, or a VPN taking IPv6 elsewhere): no NAT64.
        XCTAssertNil(NAT64Lookup.choose(for: ipv4, prefixes: [2: [Self.prefix]]) { _ in lookupFailure(.noRoute) })
        XCTAssertNil(NAT64Lookup.choose(for: ipv4, prefixes: [2: [Self.prefix]]) { _ in routeVia(5, gateway: "fd00::1") })
        XCTAssertNil(NAT64Lookup.choose(for: ip("2001:db8::1"), prefixes: [2: [Self.prefix]]) { _ in routeVia(2) })
        XCTAssertNil(NAT64Lookup.choose(for: ipv4, prefixes: [:]) { _ in routeVia(2) })
    }
}
