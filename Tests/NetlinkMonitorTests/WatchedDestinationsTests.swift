@testable import NetlinkMonitor
import ReachabilityCore
import XCTest

/// What the route-event filter watches besides gateways (`WatchedDestinations`), and when it
/// must be refitted.
final class WatchedDestinationsTests: XCTestCase {
    func testDestinations() {
        let target = IPAddress("2001:4860:4860::8888")!
        let wellKnown = NAT64Prefix("64:ff9b::/96", source: .routerAdvertisement)!
        let local = NAT64Prefix("2001:db8:64::/96", source: .dns64)!
        let cases: [(String, Set<IPAddress>, [Int32: [NAT64Prefix]], Set<IPAddress>)] = [
            ("nothing watched: the lookup targets", [], [:], [target]),
            ("watched addresses", [.v4(192, 0, 2, 1), IPAddress("2001:db8::1")!], [:],
             [target, .v4(192, 0, 2, 1), IPAddress("2001:db8::1")!]),
            ("an IPv4 address under each link's prefix", [.v4(192, 0, 2, 1)], [2: [wellKnown], 3: [local]],
             [target, .v4(192, 0, 2, 1), IPAddress("64:ff9b::c000:201")!, IPAddress("2001:db8:64::c000:201")!]),
            ("no IPv6 address is synthesized", [IPAddress("2001:db8::1")!], [2: [wellKnown]],
             [target, IPAddress("2001:db8::1")!]),
        ]
        for (name, addresses, prefixes, expected) in cases {
            var watched = WatchedDestinations()
            _ = watched.watch(addresses)
            _ = watched.follow(prefixes)
            XCTAssertEqual(watched.destinations(lookupTargets: [target]), expected, name)
        }
    }

    func testWhenToRefit() {
        let prefix = NAT64Prefix("64:ff9b::/96", source: .routerAdvertisement)!
        var watched = WatchedDestinations()
        let steps: [(String, (inout WatchedDestinations) -> Bool, Bool)] = [
            ("the same nothing", { $0.watch([]) }, false),
            ("an address", { $0.watch([.v4(192, 0, 2, 1)]) }, true),
            ("the same address", { $0.watch([.v4(192, 0, 2, 1)]) }, false),
            ("no prefixes, as before", { $0.follow([:]) }, false),
            ("a link's prefix", { $0.follow([2: [prefix]]) }, true),
            ("the same prefix", { $0.follow([2: [prefix]]) }, false),
            ("on another link", { $0.follow([3: [prefix]]) }, true),
            ("no address", { $0.watch([]) }, true),
        ]
        for (name, step, refit) in steps {
            XCTAssertEqual(step(&watched), refit, name)
        }
    }
}
