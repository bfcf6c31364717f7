import ReachabilityCore
import XCTest

/// Which interfaces and families probes run over, and what makes them probe again.
final class ProbeEligibilityTests: XCTestCase {
    private let eth0v4 = addr(2, "10.0.0.2")
    private let eth0v6 = addr(2, "2001:db8::2")
    private let wlan0v4 = addr(3, "192.168.1.10")

    func testEligibleTargets() {
        let both: [AddressFamily] = [.ipv4, .ipv6]
        let v4Default = defaultRoute(.ipv4, dev: 2, via: "10.0.0.1")
        let v6Default = defaultRoute(.ipv6, dev: 2, via: "fe80::1")
        let wlanDefault = defaultRoute(.ipv4, dev: 3, via: "192.168.1.1", metric: 600)
        let cases: [(String, NetworkSnapshot, InterfacePolicy, [AddressFamily], [ProbeKey])] = [
            ("one wired uplink, IPv4", snapshot(links: [lo, eth0], addresses: [eth0v4], defaults: [v4Default]), InterfacePolicy(), both,
             [ProbeKey(interfaceIndex: 2, family: .ipv4)]),
            ("dual stack: each family on its own", snapshot(links: [lo, eth0], addresses: [eth0v4, eth0v6], defaults: [v4Default, v6Default]),
             InterfacePolicy(), both, [ProbeKey(interfaceIndex: 2, family: .ipv4), ProbeKey(interfaceIndex: 2, family: .ipv6)]),
            ("families limited by configuration", snapshot(links: [lo, eth0], addresses: [eth0v4, eth0v6], defaults: [v4Default, v6Default]),
             InterfacePolicy(), [.ipv6], [ProbeKey(interfaceIndex: 2, family: .ipv6)]),
            ("a second uplink is probed too", snapshot(links: [lo, eth0, wlan0], addresses: [eth0v4, wlan0v4], defaults: [v4Default, wlanDefault]),
             InterfacePolicy(), both, [ProbeKey(interfaceIndex: 2, family: .ipv4), ProbeKey(interfaceIndex: 3, family: .ipv4)]),
            ("no default route: nothing", snapshot(links: [lo, eth0], addresses: [eth0v4]), InterfacePolicy(), both, []),
            ("a default but no address of the family", snapshot(links: [lo, eth0], addresses: [eth0v4], defaults: [v6Default]),
             InterfacePolicy(), both, []),
            ("no carrier", snapshot(links: [lo, link(2, "eth0", carrier: false, oper: .down)], addresses: [eth0v4], defaults: [v4Default]),
             InterfacePolicy(), both, []),
            ("linkdown route", snapshot(links: [lo, eth0], addresses: [eth0v4], defaults: [defaultRoute(.ipv4, dev: 2, via: "10.0.0.1", linkdown: true)]),
             InterfacePolicy(), both, []),
            ("dormant (802.1X pending)", snapshot(links: [lo, link(2, "eth0", oper: .dormant)], addresses: [eth0v4], defaults: [v4Default]),
             InterfacePolicy(), both, []),
            ("ignored by policy", snapshot(links: [lo, eth0], addresses: [eth0v4], defaults: [v4Default]),
             InterfacePolicy(ignoredPatterns: ["eth*"]), both, []),
            ("blackhole default: nothing to probe over", snapshot(links: [lo, eth0], addresses: [eth0v4], defaults: [defaultRoute(.ipv4, dev: 2, type: .blackhole)]),
             InterfacePolicy(), both, []),
            ("only link-local addresses", snapshot(links: [lo, eth0], addresses: [addr(2, "fe80::2")], defaults: [v6Default]),
             InterfacePolicy(), both, []),
        ]
        for (name, snapshot, policy, families, expected) in cases {
            let targets = ProbeSchedule.eligibleTargets(snapshot, policy: policy, families: families)
            XCTAssertEqual(targets.keys.sorted(), expected, name)
        }
    }

    /// The context changes (so the interface is probed again at once) exactly when the
    /// network behind it may have: another address, gateway, DNS or announced portal.
    func testContextFollowsTheNetwork() {
        let base = snapshot(links: [lo, eth0], addresses: [eth0v4], defaults: [defaultRoute(.ipv4, dev: 2, via: "10.0.0.1")])
        let key = ProbeKey(interfaceIndex: 2, family: .ipv4)
        let context = ProbeSchedule.eligibleTargets(base, policy: InterfacePolicy(), families: [.ipv4])[key]
        XCTAssertEqual(context?.interfaceName, "eth0")
        XCTAssertEqual(context?.gateways, [ip("10.0.0.1")])

        var otherGateway = base
        otherGateway.defaultRoutes = [defaultRoute(.ipv4, dev: 2, via: "10.0.0.254")]
        var otherAddress = base
        otherAddress.addresses = [addr(2, "10.0.0.3")]
        var withDNS = base
        withDNS.hasNameserver = true
        var ipv6Only = base
        ipv6Only.addresses.append(eth0v6)
        for (name, changed, differs) in [("gateway", otherGateway, true), ("address", otherAddress, true), ("DNS", withDNS, true),
                                          ("an IPv6 address does not touch IPv4", ipv6Only, false)] {
            let next = ProbeSchedule.eligibleTargets(changed, policy: InterfacePolicy(), families: [.ipv4])[key]
            XCTAssertEqual(next != context, differs, name)
        }
        let announced = ProbeSchedule.eligibleTargets(base, policy: InterfacePolicy(), families: [.ipv4], announcedAPIs: [2: "https://p.test/api"])[key]
        XCTAssertEqual(announced?.announcedAPI, "https://p.test/api")
    }
}
