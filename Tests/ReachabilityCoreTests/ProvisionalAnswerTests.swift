import ReachabilityCore
import XCTest

/// `PathDerivation.familiesAwaitingRoutes`: when an answer may be published while the
/// default routes are still being read at start (ProvisionalAnswer.swift's cases 1–4).
/// Each case's snapshot holds, for a pending family, only the route its lookup matched.
final class ProvisionalAnswerTests: XCTestCase {
    struct Case {
        var name: String
        var snapshot: NetworkSnapshot
        var pending: Set<AddressFamily> = [.ipv4, .ipv6]
        var policy = InterfacePolicy()
        var filter = PathFilter.none
        var awaiting: Set<AddressFamily>
    }

    static let eth0v4 = addr(2, "10.0.0.2")
    static let wlan0v4 = addr(3, "192.168.1.10")
    static let eth1v4 = addr(8, "10.0.1.2")
    /// The default the IPv4 lookup matched (what RTM_F_FIB_MATCH names).
    static let matched = defaultRoute(.ipv4, dev: 2, via: "10.0.0.1", metric: 100)
    static let viaEth0 = routeVia(2, gateway: "10.0.0.1", table: 254)
    static let unreachable6 = lookupFailure(.unreachableRoute)

    static func wired(
        links: [Link] = [lo, eth0], addresses: [InterfaceAddress] = [eth0v4], defaults: [DefaultRoute] = [matched],
        v4: RouteLookup = viaEth0, v6: RouteLookup = unreachable6
    ) -> NetworkSnapshot {
        snapshot(links: links, addresses: loAddresses + addresses, defaults: defaults, v4: v4, v6: v6)
    }

    static let cases: [Case] = [
        Case(name: "the lookups decide alone: final", snapshot: wired(), awaiting: []),
        Case(name: "nothing pending: final whatever the lookups say",
             snapshot: wired(v4: lookupFailure(.noRoute), v6: lookupFailure(.noRoute)), pending: [], awaiting: []),
        // Case 2: the defaults may explain a missing route (a linkdown one the kernel skips).
        Case(name: "IPv6 found no route: its defaults are needed", snapshot: wired(v6: lookupFailure(.noRoute)), awaiting: [.ipv6]),
        Case(name: "IPv6 found no route but its routes were read", snapshot: wired(v6: lookupFailure(.noRoute)),
             pending: [.ipv4], awaiting: []),
        Case(name: "a failed lookup counts as no route", snapshot: wired(v4: lookupFailure(.lookupFailed("EIO"))), awaiting: [.ipv4]),
        Case(name: "a blackhole answer is the kernel's last word",
             snapshot: wired(defaults: [], v4: lookupFailure(.blackholeRoute)), awaiting: []),
        // Case 1: the fallback to other defaults.
        Case(name: "the lookup's interface is filtered out", snapshot: wired(),
             filter: PathFilter(prohibitedInterfaceTypes: [.wiredEthernet]), awaiting: [.ipv4]),
        Case(name: "the lookup's interface is ignored", snapshot: wired(),
             policy: InterfacePolicy(ignoredPatterns: ["eth0"]), awaiting: [.ipv4]),
        Case(name: "a filter the lookup's interface passes", snapshot: wired(),
             filter: PathFilter(requiredInterfaceType: .wiredEthernet), awaiting: []),
        // Case 3: the gateways come from a default through the lookup's hop.
        Case(name: "the matched route is no default (a VPN's 0.0.0.0/1)", snapshot: wired(defaults: []), awaiting: [.ipv4]),
        Case(name: "the known default is in another table than the lookup's",
             snapshot: wired(defaults: [defaultRoute(.ipv4, dev: 2, via: "10.0.0.1", metric: 100, table: 100)]), awaiting: [.ipv4]),
        Case(name: "the lookup's hop cannot carry traffic: its own reason is final",
             snapshot: wired(links: [lo, link(2, "eth0", carrier: false, oper: .lowerLayerDown)], defaults: []), awaiting: []),
        Case(name: "the lookup leaves by a link not known", snapshot: wired(defaults: [], v4: routeVia(9, table: 254)), awaiting: []),
        // Case 4: the order of availableInterfaces.
        Case(name: "one other interface could carry traffic: its place is fixed",
             snapshot: wired(links: [lo, eth0, wlan0], addresses: [eth0v4, wlan0v4]), awaiting: []),
        Case(name: "two other interfaces could: their order follows routes not read",
             snapshot: wired(links: [lo, eth0, wlan0, eth1], addresses: [eth0v4, wlan0v4, eth1v4]), awaiting: [.ipv4, .ipv6]),
        Case(name: "two others, one without an address, cannot carry traffic",
             snapshot: wired(links: [lo, eth0, wlan0, eth1], addresses: [eth0v4, wlan0v4]), awaiting: []),
    ]

    func testEachCaseAwaitsTheFamiliesItNeeds() {
        for entry in Self.cases {
            var snapshot = entry.snapshot
            snapshot.pendingRouteFamilies = entry.pending
            XCTAssertEqual(
                PathDerivation.familiesAwaitingRoutes(snapshot, policy: entry.policy, filter: entry.filter), entry.awaiting, entry.name
            )
        }
    }

    /// What "final" promises: reading the rest of the routes changes nothing. Each case
    /// that may be published gets routes added that the dump could bring (another default
    /// through a down interface, a worse one through the same hop, a multipath in another
    /// table), and its path must stay what it was.
    func testAFinalAnswerIsTheAnswerOfTheCompleteSnapshot() {
        let unread = [
            defaultRoute(.ipv4, dev: 3, via: "192.168.1.1", metric: 50),
            defaultRoute(.ipv4, dev: 2, via: "10.0.0.1", metric: 900),
            DefaultRoute(family: .ipv4, table: 100, metric: 10, nextHops: [
                NextHop(interfaceIndex: 2, gateway: ip("10.0.0.1")), NextHop(interfaceIndex: 8, gateway: ip("10.0.1.1")),
            ]),
            defaultRoute(.ipv6, dev: 8, via: "fe80::1", metric: 5),
        ]
        for entry in Self.cases where entry.awaiting.isEmpty && !entry.pending.isEmpty {
            var provisional = entry.snapshot
            provisional.pendingRouteFamilies = entry.pending
            var complete = entry.snapshot
            complete.defaultRoutes += unread
            XCTAssertEqual(
                PathDerivation.derive(provisional, policy: entry.policy, filter: entry.filter),
                PathDerivation.derive(complete, policy: entry.policy, filter: entry.filter), entry.name
            )
        }
    }

    func testGatewaysComeFromTheDefaultInTheLookupsTable() {
        let multipathElsewhere = DefaultRoute(family: .ipv4, table: 100, metric: 10, nextHops: [
            NextHop(interfaceIndex: 2, gateway: ip("10.0.0.1")), NextHop(interfaceIndex: 2, gateway: ip("10.0.0.254")),
        ])
        let path = PathDerivation.derive(Self.wired(defaults: [multipathElsewhere, Self.matched]))
        XCTAssertEqual(path.gateways, ["10.0.0.1"], "the main table's route, which the lookup matched")
        let untabled = PathDerivation.derive(Self.wired(defaults: [multipathElsewhere, Self.matched], v4: routeVia(2, gateway: "10.0.0.1")))
        XCTAssertEqual(untabled.gateways, ["10.0.0.1", "10.0.0.254"], "no table reported: the first through the hop")
    }
}
