@testable import ReachabilityCore
import XCTest

/// The neighbour rule: which gateways are watched, what a reported state leaves, and what a
/// failed gateway does to the path and to a target, case by case.
final class GatewayNeighboursTests: XCTestCase {
    private static let gateway4 = GatewayKey(interfaceIndex: 2, address: ip("10.0.0.1"))
    private static let gateway6 = GatewayKey(interfaceIndex: 2, address: ip("fe80::1"))

    /// eth0 dual-stack through 10.0.0.1 and fe80::1, wlan0 IPv4 as a standby; the
    /// gateways' entries as given.
    private static func network(_ neighbours: [GatewayKey: NeighbourState], v6: Bool = true) -> NetworkSnapshot {
        var base = snapshot(
            links: [lo, eth0, wlan0],
            addresses: loAddresses + [addr(2, "10.0.0.2"), addr(2, "2001:db8:1::2"), addr(3, "192.168.1.10")],
            defaults: [
                defaultRoute(.ipv4, dev: 2, via: "10.0.0.1", metric: 100), defaultRoute(.ipv6, dev: 2, via: "fe80::1", metric: 100),
                defaultRoute(.ipv4, dev: 3, via: "192.168.1.1", metric: 600),
            ],
            v4: routeVia(2, gateway: "10.0.0.1"), v6: v6 ? routeVia(2, gateway: "fe80::1") : lookupFailure(.noRoute)
        )
        base.gatewayNeighbours = neighbours.mapValues { GatewayNeighbour(state: $0, since: 1_700_000_000) }
        return base
    }

    func testKernelStates() {
        let cases: [(UInt16, NeighbourState)] = [
            (0x00, .none), (0x01, .incomplete), (0x02, .reachable), (0x04, .stale), (0x08, .delay), (0x10, .probe),
            (0x20, .failed), (0x40, .noARP), (0x80, .permanent),
        ]
        for (bits, state) in cases { XCTAssertEqual(NeighbourState(kernelValue: bits), state, "0x\(String(bits, radix: 16))") }
    }

    func testWatchedGateways() {
        var tunnel = Self.network([:])
        tunnel.links[5] = tun0
        tunnel.defaultRoutes.append(defaultRoute(.ipv4, dev: 5, via: "10.8.0.1", metric: 50))
        tunnel.defaultRoutes.append(defaultRoute(.ipv4, dev: 2, type: .blackhole))
        var lookupOnly = Self.network([:])
        lookupOnly.defaultRoutes = []
        lookupOnly.lookups[.ipv4] = routeVia(3, gateway: "192.168.1.254")
        var onLink = Self.network([:])
        onLink.defaultRoutes = [defaultRoute(.ipv4, dev: 2)]
        onLink.lookups = [.ipv4: routeVia(2)]
        let cases: [(String, NetworkSnapshot, Set<GatewayKey>)] = [
            ("every unicast default's gateway and the lookups'", Self.network([:]),
             [Self.gateway4, Self.gateway6, GatewayKey(interfaceIndex: 3, address: ip("192.168.1.1"))]),
            ("not across a point-to-point link, not a blackhole", tunnel,
             [Self.gateway4, Self.gateway6, GatewayKey(interfaceIndex: 3, address: ip("192.168.1.1"))]),
            ("a lookup's gateway without a default route (OpenVPN's halves, a policy table)", lookupOnly,
             [GatewayKey(interfaceIndex: 3, address: ip("192.168.1.254")), Self.gateway6]),
            ("on-link: nothing", onLink, []),
        ]
        for (name, snapshot, expected) in cases { XCTAssertEqual(GatewayNeighbours.watched(in: snapshot), expected, name) }
    }

    func testNextState() {
        let cases: [(NeighbourState?, NeighbourState?, NeighbourState?)] = [
            (nil, .incomplete, .incomplete),  // a first resolution is not a failure
            (.reachable, .failed, .failed),
            (.failed, .incomplete, .failed),  // the kernel retrying a failed gateway
            (.failed, .reachable, .reachable), (.failed, .stale, .stale), (.failed, .delay, .delay), (.failed, .probe, .probe),
            (.failed, nil, nil),  // the entry is gone (a deletion reports FAILED first): nothing known
            (.stale, .incomplete, .incomplete),
            (nil, .permanent, .permanent),
        ]
        for (previous, reported, expected) in cases {
            XCTAssertEqual(GatewayNeighbours.next(previous: previous, reported: reported), expected, "\(String(describing: previous)) + \(String(describing: reported))")
        }
    }

    /// Which gateways' entries stay followed: the used ones, and a few left over (a flap).
    func testWhichGatewaysStayFollowed() {
        func key(_ index: Int32, _ address: String) -> GatewayKey { GatewayKey(interfaceIndex: index, address: IPAddress(address)!) }
        let a = key(2, "10.0.0.1"), b = key(3, "10.1.0.1"), c = key(2, "fe80::1")
        let many = Set((1...9).map { key(4, "10.2.0.\($0)") })
        let cases: [(String, Set<GatewayKey>, Set<GatewayKey>, Set<GatewayKey>)] = [
            ("first time: what the routes use", [a], [], [a]),
            ("a flapping route's gateway stays followed", [], [a], [a]),
            ("and is used again", [a], [a], [a]),
            ("a new gateway joins the old", [b], [a], [a, b]),
            ("both families", [a, c], [b], [a, b, c]),
            ("too many left over: only what is used", [a], many, [a]),
            ("exactly the limit left over: kept", [a], Set(many.prefix(GatewayNeighbours.retainedLimit)),
             Set(many.prefix(GatewayNeighbours.retainedLimit)).union([a])),
        ]
        for (name, wanted, before, expected) in cases {
            XCTAssertEqual(GatewayNeighbours.followed(wanted: wanted, before: before), expected, name)
        }
    }

    /// Which states need only their failure watched (the kernel filter's narrow mode).
    func testWhichStatesAnswer() {
        let cases: [(NeighbourState?, Bool)] = [
            (.reachable, true), (.stale, true), (.delay, true), (.probe, true), (.permanent, true), (.noARP, true),
            (.failed, false), (.incomplete, false), (NeighbourState.none, false), (nil, false),
        ]
        for (state, answers) in cases { XCTAssertEqual(GatewayNeighbours.answers(state), answers, "\(String(describing: state))") }
    }

    func testPath() {
        let cases: [(String, NetworkSnapshot, PathStatus, UnsatisfiedReason?, [String], Bool, Bool)] = [
            ("both answer", Self.network([Self.gateway4: .reachable, Self.gateway6: .stale]), .satisfied, nil, ["10.0.0.1", "fe80::1"], true, true),
            ("nothing known", Self.network([:]), .satisfied, nil, ["10.0.0.1", "fe80::1"], true, true),
            ("a first resolution", Self.network([Self.gateway4: .incomplete, Self.gateway6: .incomplete]), .satisfied, nil, ["10.0.0.1", "fe80::1"], true, true),
            ("IPv4 gateway failed, IPv6 fine", Self.network([Self.gateway4: .failed, Self.gateway6: .reachable]), .satisfied, nil, ["fe80::1"], false, true),
            ("both failed", Self.network([Self.gateway4: .failed, Self.gateway6: .failed]), .unsatisfied, .gatewayUnreachable, ["10.0.0.1", "fe80::1"], false, false),
            ("IPv4 failed, no IPv6 route", Self.network([Self.gateway4: .failed], v6: false), .unsatisfied, .gatewayUnreachable, ["10.0.0.1"], false, false),
            ("IPv4 probing again", Self.network([Self.gateway4: .probe], v6: false), .satisfied, nil, ["10.0.0.1"], true, false),
            ("a failed neighbour of another interface", Self.network([GatewayKey(interfaceIndex: 3, address: ip("10.0.0.1")): .failed], v6: false),
             .satisfied, nil, ["10.0.0.1"], true, false),
        ]
        for (name, snapshot, status, reason, gateways, ipv4, ipv6) in cases {
            let path = PathDerivation.derive(snapshot)
            XCTAssertEqual(path.status, status, name)
            XCTAssertEqual(path.unsatisfiedReason, reason, name)
            XCTAssertEqual(path.gateways, gateways, name)
            XCTAssertEqual(path.supportsIPv4, ipv4, name)
            XCTAssertEqual(path.supportsIPv6, ipv6, name)
        }
    }

    func testABrokenPathStillListsItsInterfacesAndSaysWhichGateway() {
        let path = PathDerivation.derive(Self.network([Self.gateway4: .failed], v6: false))
        XCTAssertEqual(path.availableInterfaces, ["eth0", "wlan0"])
        XCTAssertEqual(path.summary, "not reachable: gateway 10.0.0.1 unreachable")
    }

    func testFailedGatewayRanksAboveAMissingAddress() {
        XCTAssertEqual(PathDerivation.mostSpecificReason([.noAddress, .gatewayUnreachable]), .gatewayUnreachable)
        XCTAssertEqual(PathDerivation.mostSpecificReason([.gatewayUnreachable, .noCarrier]), .gatewayUnreachable)
        XCTAssertEqual(PathDerivation.mostSpecificReason([.gatewayUnreachable, .connectionRequired]), .connectionRequired)
    }

    func testTargets() {
        let network = Self.network([Self.gateway4: .failed], v6: false)
        let cases: [(String, RouteLookup, Bool, UnsatisfiedReason?)] = [
            ("through the failed gateway", routeVia(2, gateway: "10.0.0.1"), false, .gatewayUnreachable),
            ("on the gateway's link", routeVia(2), true, nil),
            ("through another gateway", routeVia(3, gateway: "192.168.1.1"), true, nil),
        ]
        for (name, route, reachable, reason) in cases {
            let answer = TargetDerivation.derive([TargetLookup(address: ip("198.51.100.7"), route: route)], snapshot: network, policy: InterfacePolicy())
            XCTAssertEqual(answer.addresses.first?.reachable, reachable, name)
            XCTAssertEqual(answer.unsatisfiedReason, reason, name)
        }
    }
}
