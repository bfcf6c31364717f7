import ReachabilityCore
import XCTest

/// The target verdict, case by case: each address's FIB answer judged like the host's path,
/// IPv6 first, never optimistic for a name that did not resolve.
final class TargetDerivationTests: XCTestCase {
    struct Case {
        var name: String
        var links: [Link] = [lo, eth0, wlan0]
        var addresses: [InterfaceAddress] = loAddresses + [addr(2, "10.0.0.2"), addr(2, "2001:db8:1::2"), addr(3, "192.168.1.10")]
        var policy = InterfacePolicy()
        var lookups: [(String, RouteLookup)]
        var status: PathStatus
        var reason: UnsatisfiedReason?
        var reachability: ReachabilityStatus
        var flags: ReachabilityFlags = []
        var primary: String?
        /// Per address, in the answer's order: reachable or the reason.
        var verdicts: [String]
    }

    static let cases: [Case] = [
        Case(name: "via the default route's gateway", lookups: [("192.0.2.7", routeVia(2, gateway: "10.0.0.1", source: "10.0.0.2"))],
             status: .satisfied, reachability: .reachableViaWired, flags: [.reachable], primary: "eth0",
             verdicts: ["192.0.2.7 reachable eth0 via 10.0.0.1 from 10.0.0.2"]),
        Case(name: "on-link: isDirect", lookups: [("10.0.0.9", routeVia(2, source: "10.0.0.2"))],
             status: .satisfied, reachability: .reachableViaWired, flags: [.reachable, .isDirect], primary: "eth0",
             verdicts: ["10.0.0.9 reachable eth0 on-link from 10.0.0.2"]),
        Case(name: "this host's own address: isLocalAddress, via lo", lookups: [("10.0.0.2", routeVia(1, source: "10.0.0.2", type: .local))],
             status: .satisfied, reachability: .reachableViaOther, flags: [.reachable, .isLocalAddress, .isDirect], primary: "lo",
             verdicts: ["10.0.0.2 reachable lo on-link from 10.0.0.2"]),
        Case(name: "blackholed host route while the host is fine", lookups: [("192.0.2.66", lookupFailure(.blackholeRoute))],
             status: .unsatisfied, reason: .blackholeRoute, reachability: .notReachable, verdicts: ["192.0.2.66 blackholeRoute"]),
        Case(name: "unreachable and prohibit", lookups: [("192.0.2.1", lookupFailure(.unreachableRoute)), ("192.0.2.2", lookupFailure(.prohibitedRoute))],
             status: .unsatisfied, reason: .unreachableRoute, reachability: .notReachable,
             verdicts: ["192.0.2.1 unreachableRoute", "192.0.2.2 prohibitedRoute"]),
        Case(name: "no route at all", lookups: [("198.51.100.1", lookupFailure(.noRoute))],
             status: .unsatisfied, reason: .noRoute, reachability: .notReachable, verdicts: ["198.51.100.1 noRoute"]),
        Case(name: "route through an unplugged cable", links: [lo, link(2, "eth0", carrier: false, oper: .down)],
             lookups: [("192.0.2.7", routeVia(2, gateway: "10.0.0.1"))],
             status: .unsatisfied, reason: .noCarrier, reachability: .notReachable, verdicts: ["192.0.2.7 noCarrier eth0 via 10.0.0.1"]),
        Case(name: "route through an interface without a usable address", addresses: loAddresses + [addr(2, "fe80::2")],
             lookups: [("192.0.2.7", routeVia(2, gateway: "10.0.0.1"))],
             status: .unsatisfied, reason: .noAddress, reachability: .notReachable, verdicts: ["192.0.2.7 noAddress eth0 via 10.0.0.1"]),
        // Ignoring is for the path: a host behind an ignored interface is still reachable.
        Case(name: "route through an ignored interface", policy: InterfacePolicy(ignoredPatterns: ["eth*"]),
             lookups: [("192.0.2.7", routeVia(2, gateway: "10.0.0.1", source: "10.0.0.2"))],
             status: .satisfied, reachability: .reachableViaWired, flags: [.reachable], primary: "eth0",
             verdicts: ["192.0.2.7 reachable eth0 via 10.0.0.1 from 10.0.0.2 (ignored for the path)"]),
        Case(name: "a container on docker0 (ignored by name, and a host-internal bridge)",
             links: [lo, eth0, docker0], addresses: loAddresses + [addr(2, "10.0.0.2"), addr(7, "172.17.0.1", 16)],
             lookups: [("172.17.0.2", routeVia(7, source: "172.17.0.1"))],
             status: .satisfied, reachability: .reachableViaWired, flags: [.reachable, .isDirect], primary: "docker0",
             verdicts: ["172.17.0.2 reachable docker0 on-link from 172.17.0.1 (ignored for the path)"]),
        Case(name: "a 169.254 peer from a 169.254 address", addresses: loAddresses + [addr(2, "169.254.7.2", 16)],
             lookups: [("169.254.7.1", routeVia(2, source: "169.254.7.2"))],
             status: .satisfied, reachability: .reachableViaWired, flags: [.reachable, .isDirect], primary: "eth0",
             verdicts: ["169.254.7.1 reachable eth0 on-link from 169.254.7.2"]),
        Case(name: "a 169.254 source goes nowhere beyond the link", addresses: loAddresses + [addr(2, "169.254.7.2", 16)],
             lookups: [("192.0.2.7", routeVia(2, gateway: "169.254.7.1", source: "169.254.7.2"))],
             status: .unsatisfied, reason: .noAddress, reachability: .notReachable, verdicts: ["192.0.2.7 noAddress eth0 via 169.254.7.1"]),
        Case(name: "an fe80 neighbour on its interface", addresses: loAddresses + [addr(2, "fe80::a")],
             lookups: [("fe80::b%eth0", routeVia(2, source: "fe80::a"))],
             status: .satisfied, reachability: .reachableViaWired, flags: [.reachable, .isDirect], primary: "eth0",
             verdicts: ["fe80::b%eth0 reachable eth0 on-link from fe80::a"]),
        Case(name: "an fe80 neighbour on an interface that does not exist", addresses: loAddresses + [addr(2, "fe80::a")],
             lookups: [("fe80::b%nosuch0", lookupFailure(.lookupFailed("no interface named nosuch0")))],
             status: .unsatisfied, reason: .noInterface, reachability: .notReachable, verdicts: ["fe80::b%nosuch0 noInterface"]),
        Case(name: "a scope may be an interface index", addresses: loAddresses + [addr(2, "fe80::a")],
             lookups: [("fe80::b%2", routeVia(2, source: "fe80::a"))],
             status: .satisfied, reachability: .reachableViaWired, flags: [.reachable, .isDirect], primary: "eth0",
             verdicts: ["fe80::b%2 reachable eth0 on-link from fe80::a"]),
        Case(name: "an unscoped fe80 address names no link", addresses: loAddresses + [addr(2, "fe80::a")],
             lookups: [("fe80::b", routeVia(2, source: "fe80::a")), ("192.0.2.7", lookupFailure(.noRoute))],
             status: .unsatisfied, reason: .noRoute, reachability: .notReachable, verdicts: ["fe80::b noInterface", "192.0.2.7 noRoute"]),
        Case(name: "only link-local and a tentative global: the router's own address on the link",
             addresses: loAddresses + [addr(2, "fe80::a"), addr(2, "2001:db8:1::2", flags: [.tentative, .permanent])],
             lookups: [("2001:db8:1::1", routeVia(2, source: "fe80::a"))],
             status: .satisfied, reachability: .reachableViaWired, flags: [.reachable, .isDirect], primary: "eth0",
             verdicts: ["2001:db8:1::1 reachable eth0 on-link from fe80::a"]),
        Case(name: "a tentative source is never used nor shown",
             addresses: loAddresses + [addr(2, "2001:db8:1::2", flags: [.tentative])],
             lookups: [("2001:db8:1::1", routeVia(2, source: "2001:db8:1::2"))],
             status: .unsatisfied, reason: .noAddress, reachability: .notReachable, verdicts: ["2001:db8:1::1 noAddress eth0 on-link"]),
        Case(name: "IPv6 first when both work", lookups: [("192.0.2.7", routeVia(3, gateway: "192.168.1.1")), ("2001:db8::7", routeVia(2, gateway: "fe80::1"))],
             status: .satisfied, reachability: .reachableViaWired, flags: [.reachable], primary: "eth0",
             verdicts: ["2001:db8::7 reachable eth0 via fe80::1", "192.0.2.7 reachable wlan0 via 192.168.1.1"]),
        Case(name: "IPv4 when IPv6 is blackholed", lookups: [("2001:db8::7", lookupFailure(.blackholeRoute)), ("192.0.2.7", routeVia(3, gateway: "192.168.1.1"))],
             status: .satisfied, reachability: .reachableViaWiFi, flags: [.reachable], primary: "wlan0",
             verdicts: ["2001:db8::7 blackholeRoute", "192.0.2.7 reachable wlan0 via 192.168.1.1"]),
        Case(name: "the most specific reason explains a target none of whose addresses works",
             links: [lo, link(2, "eth0", up: false), wlan0],
             lookups: [("2001:db8::7", lookupFailure(.noRoute)), ("192.0.2.7", routeVia(2, gateway: "10.0.0.1"))],
             status: .unsatisfied, reason: .interfaceDown, reachability: .notReachable,
             verdicts: ["2001:db8::7 noRoute", "192.0.2.7 interfaceDown eth0 via 10.0.0.1"]),
        Case(name: "dormant interface: requires a connection", links: [lo, link(2, "eth0", oper: .dormant)],
             lookups: [("192.0.2.7", routeVia(2, gateway: "10.0.0.1"))],
             status: .requiresConnection, reason: .connectionRequired, reachability: .notReachable,
             flags: [.reachable, .connectionRequired], primary: "eth0", verdicts: ["192.0.2.7 reachable eth0 via 10.0.0.1"]),
        Case(name: "cellular: isWWAN", links: [lo, wwan0], addresses: loAddresses + [addr(4, "100.64.0.2", 30)],
             lookups: [("192.0.2.7", routeVia(4))],
             status: .satisfied, reachability: .reachableViaWWAN, flags: [.reachable, .isWWAN], primary: "wwan0",
             verdicts: ["192.0.2.7 reachable wwan0 on-link"]),
        Case(name: "a name with no address is not found, never optimistic", lookups: [],
             status: .unsatisfied, reason: .nameNotFound, reachability: .notReachable, verdicts: []),
    ]

    func testDerivation() {
        for test in Self.cases {
            let snapshot = ReachabilityCoreTests.snapshot(links: test.links, addresses: test.addresses)
            let lookups = test.lookups.map { text, route in
                let parts = text.split(separator: "%", maxSplits: 1).map(String.init)
                return TargetLookup(address: ip(parts[0]), interface: parts.count == 2 ? parts[1] : nil, route: route)
            }
            let path = TargetDerivation.derive(lookups, snapshot: snapshot, policy: test.policy)
            XCTAssertEqual(path.status, test.status, test.name)
            XCTAssertEqual(path.unsatisfiedReason, test.reason, test.name)
            XCTAssertEqual(path.reachability, test.reachability, test.name)
            XCTAssertEqual(path.flags, test.flags, test.name)
            XCTAssertEqual(path.primaryInterface, test.primary, test.name)
            XCTAssertEqual(path.addresses.map(Self.describe), test.verdicts, test.name)
            // Invariants: satisfied iff some address is reachable and ready; a reason iff not satisfied.
            XCTAssertEqual(path.status == .satisfied, path.unsatisfiedReason == nil, test.name)
            XCTAssertEqual(path.flags.contains(.reachable), path.addresses.contains(where: \.reachable), test.name)
        }
    }

    /// The target's source rule: the kernel's choice when it can carry traffic, link-local
    /// only towards the link.
    func testSourceRule() {
        let held = [addr(2, "10.0.0.2"), addr(2, "169.254.7.2", 16), addr(2, "fe80::a"), addr(3, "192.168.1.10"),
                    addr(2, "2001:db8:1::2", flags: .tentative), addr(2, "2001:db8:1::3", flags: [.tentative, .optimistic]),
                    addr(2, "2001:db8:1::4", flags: [.tentative, .dadFailed]), addr(3, "fe80::c", scope: .link),
                    addr(1, "127.0.0.1", 8)]
        let cases: [(String, destination: String, onLink: Bool, out: Int32, preferred: String?, TargetSource.Choice)] = [
            ("a global preferred source", "192.0.2.7", false, 2, "10.0.0.2", .preferred(ip("10.0.0.2"))),
            ("weak host: the source on another interface", "192.0.2.7", false, 2, "192.168.1.10", .preferred(ip("192.168.1.10"))),
            ("a source the snapshot does not hold", "192.0.2.7", false, 2, "10.9.9.9", .none),
            ("169.254 to a 169.254 peer", "169.254.7.1", true, 2, "169.254.7.2", .preferred(ip("169.254.7.2"))),
            ("169.254 to an on-link global", "10.0.0.9", true, 2, "169.254.7.2", .preferred(ip("169.254.7.2"))),
            ("169.254 via a gateway", "192.0.2.7", false, 2, "169.254.7.2", .none),
            ("fe80 to a link-local destination behind a gateway", "fe80::b", false, 2, "fe80::a", .preferred(ip("fe80::a"))),
            ("fe80 to an on-link global", "2001:db8:1::1", true, 2, "fe80::a", .preferred(ip("fe80::a"))),
            ("fe80 via a gateway", "2001:db8:9::1", false, 2, "fe80::a", .none),
            ("tentative", "2001:db8:1::1", true, 2, "2001:db8:1::2", .none),
            ("optimistic", "2001:db8:1::1", true, 2, "2001:db8:1::3", .preferred(ip("2001:db8:1::3"))),
            ("DAD failed", "2001:db8:1::1", true, 2, "2001:db8:1::4", .none),
            ("loopback never carries a route out", "192.0.2.7", false, 2, "127.0.0.1", .none),
            ("no preferred source: the interface's global address", "192.0.2.7", false, 2, nil, .interfaceAddress),
            ("no preferred source: the interface's link-scope address towards the link", "2001:db8:1::1", true, 3, nil, .interfaceAddress),
            ("no preferred source: only a link-scope address, via a gateway", "2001:db8:9::1", false, 3, nil, .none),
            ("no preferred source: an optimistic address counts", "2001:db8:9::1", false, 2, nil, .interfaceAddress),
        ]
        for (name, destination, onLink, out, preferred, expected) in cases {
            let choice = TargetSource.choose(for: ip(destination), onLink: onLink, outputInterface: out, preferred: preferred.map { ip($0) }, addresses: held)
            XCTAssertEqual(choice, expected, name)
        }
    }

    func testScopeNamesAnInterface() {
        let links = Dictionary(uniqueKeysWithValues: [lo, eth0, wlan0].map { ($0.index, $0) })
        let cases: [(String, Int32?)] = [("eth0", 2), ("wlan0", 3), ("3", 3), ("9", nil), ("nosuch0", nil), ("", nil), ("02x", nil)]
        for (scope, expected) in cases {
            XCTAssertEqual(TargetDerivation.interfaceIndex(named: scope, in: links), expected, scope)
        }
    }

    func testUnresolvedNamesKeepTheirReason() {
        for reason in [UnsatisfiedReason.nameNotFound, .noDNSServer, .resolutionFailed, .resolutionTimedOut] {
            let path = TargetDerivation.unresolved(reason)
            XCTAssertEqual(path, TargetPath(status: .unsatisfied, unsatisfiedReason: reason, reachability: .notReachable))
        }
    }

    private static func describe(_ address: TargetAddress) -> String {
        var words = [address.address, address.reachable ? "reachable" : (address.unsatisfiedReason?.rawValue ?? "?")]
        if let interface = address.interface { words += [interface, address.gateway.map { "via \($0)" } ?? "on-link"] }
        if let source = address.source { words += ["from \(source)"] }
        if address.ignoredForPath == true { words += ["(ignored for the path)"] }
        return words.joined(separator: " ")
    }
}
