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
        Case(name: "route through an ignored interface", policy: InterfacePolicy(ignoredPatterns: ["eth*"]),
             lookups: [("192.0.2.7", routeVia(2, gateway: "10.0.0.1"))],
             status: .unsatisfied, reason: .interfaceIgnored, reachability: .notReachable, verdicts: ["192.0.2.7 interfaceIgnored eth0 via 10.0.0.1"]),
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
            let lookups = test.lookups.map { TargetLookup(address: ip($0.0), route: $0.1) }
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
        return words.joined(separator: " ")
    }
}
