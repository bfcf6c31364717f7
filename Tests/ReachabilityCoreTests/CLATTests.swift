import ReachabilityCore
import XCTest

/// 464XLAT: a CLAT's device (192.0.0.0/29, an IPv4 default route through it) provides IPv4
/// by translation; the IPv6 uplink stays the primary interface.
final class CLATTests: XCTestCase {
    private let uplink = [addr(2, "fd77::2"), addr(2, "fe80::2")]
    private let clatDefault = defaultRoute(.ipv4, dev: 5)
    private let uplinkDefault = defaultRoute(.ipv6, dev: 2, via: "fe80::1")

    func testCLATAddresses() {
        let cases: [(String, Bool)] = [
            ("192.0.0.0", true), ("192.0.0.1", true), ("192.0.0.4", true), ("192.0.0.7", true),
            ("192.0.0.8", false), ("192.0.0.170", false), ("192.0.1.1", false), ("10.0.0.1", false), ("::ffff:c000:1", false),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(InterfaceRoles.isCLATAddress(ip(text)), expected, text)
        }
    }

    func testWhichLinksAreCLATs() {
        let cases: [(name: String, snapshot: NetworkSnapshot, expected: Bool)] = [
            ("a CLAT's tun", snapshot(links: [eth0, tun0], addresses: uplink + [addr(5, "192.0.0.1", 29)], defaults: [uplinkDefault, clatDefault]), true),
            ("a VPN's tun", snapshot(links: [eth0, tun0], addresses: uplink + [addr(5, "10.8.0.2")], defaults: [uplinkDefault, clatDefault]), false),
            ("192.0.0.0/29 and another address", snapshot(links: [eth0, tun0], addresses: uplink + [addr(5, "192.0.0.1", 29), addr(5, "10.8.0.2")],
                                                           defaults: [uplinkDefault, clatDefault]), false),
            ("no IPv4 default route through it", snapshot(links: [eth0, tun0], addresses: uplink + [addr(5, "192.0.0.1", 29)], defaults: [uplinkDefault]), false),
            ("an unreachable default is no route", snapshot(links: [eth0, tun0], addresses: uplink + [addr(5, "192.0.0.1", 29)],
                                                            defaults: [uplinkDefault, defaultRoute(.ipv4, dev: 5, type: .unreachable)]), false),
            ("no IPv4 address", snapshot(links: [eth0, tun0], addresses: uplink, defaults: [uplinkDefault, clatDefault]), false),
        ]
        for testCase in cases {
            XCTAssertEqual(InterfaceRoles.isCLAT(5, in: testCase.snapshot), testCase.expected, testCase.name)
        }
    }

    func testTheUplinkStaysPrimary() {
        struct Expected: Equatable {
            var primary: String?
            var type: InterfaceType?
            var ipv4: Bool
            var provider: IPv4Provider?
            var reachability: ReachabilityStatus
            var available: [String]
        }
        let cases: [(name: String, snapshot: NetworkSnapshot, expected: Expected)] = [
            ("CLAT over an IPv6-only uplink",
             snapshot(links: [lo, eth0, tun0], addresses: loAddresses + uplink + [addr(5, "192.0.0.1", 29)], defaults: [uplinkDefault, clatDefault],
                      v4: routeVia(5), v6: routeVia(2, gateway: "fe80::1")),
             Expected(primary: "eth0", type: .wiredEthernet, ipv4: true, provider: .clat, reachability: .reachableViaWired, available: ["eth0", "tun0"])),
            ("CLAT over cellular",
             snapshot(links: [lo, wwan0, tun0], addresses: loAddresses + [addr(4, "2001:db8::2")] + [addr(5, "192.0.0.4", 29)],
                      defaults: [defaultRoute(.ipv6, dev: 4), clatDefault], v4: routeVia(5), v6: routeVia(4)),
             Expected(primary: "wwan0", type: .cellular, ipv4: true, provider: .clat, reachability: .reachableViaWWAN, available: ["wwan0", "tun0"])),
            ("a CLAT whose uplink lost IPv6: IPv4 has nothing else to go by",
             snapshot(links: [lo, eth0, tun0], addresses: loAddresses + [addr(2, "fe80::2")] + [addr(5, "192.0.0.1", 29)], defaults: [uplinkDefault, clatDefault],
                      v4: routeVia(5), v6: routeVia(2, gateway: "fe80::1")),
             Expected(primary: "tun0", type: .other, ipv4: true, provider: .clat, reachability: .reachableViaOther, available: ["tun0"])),
            ("a VPN's tun stays primary",
             snapshot(links: [lo, eth0, tun0], addresses: loAddresses + uplink + [addr(5, "10.8.0.2")], defaults: [uplinkDefault, clatDefault],
                      v4: routeVia(5), v6: routeVia(2, gateway: "fe80::1")),
             Expected(primary: "tun0", type: .other, ipv4: true, provider: nil, reachability: .reachableViaOther, available: ["tun0", "eth0"])),
            ("native dual stack",
             snapshot(links: [lo, eth0], addresses: loAddresses + uplink + [addr(2, "10.0.0.2")], defaults: [uplinkDefault, defaultRoute(.ipv4, dev: 2, via: "10.0.0.1")],
                      v4: routeVia(2, gateway: "10.0.0.1"), v6: routeVia(2, gateway: "fe80::1")),
             Expected(primary: "eth0", type: .wiredEthernet, ipv4: true, provider: nil, reachability: .reachableViaWired, available: ["eth0"])),
        ]
        for testCase in cases {
            let path = PathDerivation.derive(testCase.snapshot)
            let got = Expected(primary: path.primaryInterface, type: path.primaryInterfaceType, ipv4: path.supportsIPv4, provider: path.ipv4ProvidedBy,
                               reachability: path.reachability, available: path.availableInterfaces)
            XCTAssertEqual(got, testCase.expected, testCase.name)
            XCTAssertEqual(path.status, .satisfied, testCase.name)
        }
    }

    func testTheListingNamesTheRole() {
        let listed = InterfaceListing.describe(snapshot(links: [eth0, tun0], addresses: uplink + [addr(5, "192.0.0.1", 29)], defaults: [uplinkDefault, clatDefault]))
        XCTAssertEqual(listed.map(\.role), [nil, .clat])
        let vpn = InterfaceListing.describe(snapshot(links: [eth0, tun0], addresses: uplink + [addr(5, "10.8.0.2")], defaults: [uplinkDefault, clatDefault]))
        XCTAssertEqual(vpn.map(\.role), [nil, nil])
    }

    func testACLATComingOrGoingIsAnIPv4Change() {
        let native = Path(status: .satisfied, reachability: .reachableViaWired, supportsIPv4: true, supportsIPv6: true)
        var translated = native
        translated.ipv4ProvidedBy = .clat
        XCTAssertTrue(PathChange.between(native, addresses: [], and: translated, addresses: []).contains(.ipv4))
        XCTAssertTrue(translated.summary.contains("IPv4 via CLAT"), translated.summary)
    }
}
