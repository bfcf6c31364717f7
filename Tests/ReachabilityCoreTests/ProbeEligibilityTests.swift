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

    /// The route each family's FIB lookup chose is probed like a default route, under the
    /// same checks: OpenVPN's `redirect-gateway def1` (0.0.0.0/1 and 128.0.0.0/1 via tun0)
    /// makes tun0 the path's interface without any default route through it.
    func testTheLookupsInterfaceIsProbed() {
        let tunv4 = addr(5, "10.8.0.2")
        let tunv6 = addr(5, "fd08::2")
        let eth0Default = defaultRoute(.ipv4, dev: 2, via: "10.0.0.1")
        let def1 = routeVia(5, gateway: "10.8.0.1")
        var vx0 = link(9, "vx0", kind: "vxlan")
        vx0.lowerIndex = 8
        let eth1Down = link(8, "eth1", carrier: false, oper: .down)
        let eth0v4 = self.eth0v4
        func def1Snapshot(_ tun: Link = tun0, addresses: [InterfaceAddress] = [eth0v4, tunv4], v4: RouteLookup? = def1,
                          v6: RouteLookup? = nil) -> NetworkSnapshot {
            snapshot(links: [lo, eth0, tun], addresses: addresses, defaults: [eth0Default], v4: v4, v6: v6)
        }
        let eth0Key = ProbeKey(interfaceIndex: 2, family: .ipv4)
        let tunKey = ProbeKey(interfaceIndex: 5, family: .ipv4)
        let both: [AddressFamily] = [.ipv4, .ipv6]
        let cases: [(String, NetworkSnapshot, InterfacePolicy, [AddressFamily], [ProbeKey])] = [
            ("def1: tun0 carries the path, eth0 keeps its default", def1Snapshot(), InterfacePolicy(), both, [eth0Key, tunKey]),
            ("the lookup names the default route's interface: no second entry",
             def1Snapshot(v4: routeVia(2, gateway: "10.0.0.1")), InterfacePolicy(), both, [eth0Key]),
            ("IPv6 over the tunnel (2000::/4 dev tun0, on-link)",
             def1Snapshot(addresses: [eth0v4, tunv4, tunv6], v6: routeVia(5)), InterfacePolicy(), both,
             [eth0Key, tunKey, ProbeKey(interfaceIndex: 5, family: .ipv6)]),
            ("a family not configured is not probed", def1Snapshot(), InterfacePolicy(), [.ipv6], []),
            ("tun0 ignored by policy", def1Snapshot(), InterfacePolicy(ignoredPatterns: ["tun*"]), both, [eth0Key]),
            ("tun0 down", def1Snapshot(link(5, "tun0", up: false, hw: ARPHardwareType.none, kind: "tun")), InterfacePolicy(), both, [eth0Key]),
            ("tun0 without carrier (no process holds it)",
             def1Snapshot(link(5, "tun0", carrier: false, oper: .down, hw: ARPHardwareType.none, kind: "tun")), InterfacePolicy(), both, [eth0Key]),
            ("tun0 dormant", def1Snapshot(link(5, "tun0", oper: .dormant, hw: ARPHardwareType.none, kind: "tun")), InterfacePolicy(), both, [eth0Key]),
            ("tun0 without an address of the family", def1Snapshot(addresses: [eth0v4, tunv6]), InterfacePolicy(), both, [eth0Key]),
            ("the lookup's route is linkdown", def1Snapshot(v4: routeVia(5, gateway: "10.8.0.1", linkdown: true)), InterfacePolicy(), both, [eth0Key]),
            ("the lookup answers local, not a route out", def1Snapshot(v4: routeVia(5, type: .local)), InterfacePolicy(), both, [eth0Key]),
            ("the lookup failed", def1Snapshot(v4: lookupFailure(.noRoute)), InterfacePolicy(), both, [eth0Key]),
            ("an overlay whose underlay lost carrier",
             snapshot(links: [lo, eth1Down, vx0], addresses: [addr(9, "10.9.0.2")], v4: routeVia(9, gateway: "10.9.0.1")),
             InterfacePolicy(), both, []),
            ("a def1-style route and no default route at all",
             snapshot(links: [lo, tun0], addresses: [tunv4], v4: def1), InterfacePolicy(), both, [tunKey]),
        ]
        for (name, snapshot, policy, families, expected) in cases {
            XCTAssertEqual(ProbeSchedule.eligibleTargets(snapshot, policy: policy, families: families).keys.sorted(), expected, name)
        }
        let context = ProbeSchedule.eligibleTargets(def1Snapshot(), policy: InterfacePolicy(), families: both)[tunKey]
        XCTAssertEqual(context?.interfaceName, "tun0")
        XCTAssertEqual(context?.gateways, [ip("10.8.0.1")], "the lookup's gateway is part of what the answer depends on")
        XCTAssertEqual(context?.addresses, [ip("10.8.0.2")])
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
