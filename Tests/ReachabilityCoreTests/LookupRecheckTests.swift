import ReachabilityCore
import XCTest

/// docs/DESIGN.md rule 6 as a table: removed routes, tracked routes and lookups in, suspects out;
/// then the state machine over sequences of evaluations.
final class LookupRecheckTests: XCTestCase {
    // The cast: eth0 (2) via 192.0.2.1, eth1 (8) via 198.51.100.1, tun0 (5) via 10.8.0.1.
    private static let viaEth0 = defaultRoute(.ipv4, dev: 2, via: "192.0.2.1")
    private static let viaEth0Metric200 = defaultRoute(.ipv4, dev: 2, via: "192.0.2.1", metric: 200)
    private static let viaEth0Table100 = defaultRoute(.ipv4, dev: 2, via: "192.0.2.1", table: 100)
    private static let viaEth1 = defaultRoute(.ipv4, dev: 8, via: "198.51.100.1")
    private static let viaTun0 = defaultRoute(.ipv4, dev: 5, via: "10.8.0.1")
    private static let onLinkEth0 = defaultRoute(.ipv4, dev: 2)
    private static let unreachableV4 = DefaultRoute(family: .ipv4, type: .unreachable)
    private static let unreachableV4Metric1 = DefaultRoute(family: .ipv4, type: .unreachable, metric: 1)
    private static let v6ViaEth0 = defaultRoute(.ipv6, dev: 2, via: "fe80::1", metric: 1024)
    private static let v6ViaEth1 = defaultRoute(.ipv6, dev: 8, via: "fe80::2", metric: 1024)
    private static let multipathV4 = DefaultRoute(family: .ipv4, nextHops: [
        NextHop(interfaceIndex: 2, gateway: ip("192.0.2.1")), NextHop(interfaceIndex: 8, gateway: ip("198.51.100.1")),
    ])

    /// A lookup answer through `dev` / `gateway`, from `table` (nil: the kernel did not say).
    private static func via(_ index: Int32, _ gateway: String?, table: UInt32? = 254, linkdown: Bool = false) -> RouteLookup {
        .route(RouteLookupResult(outputInterface: index, gateway: gateway.map { ip($0) }, isLinkDown: linkdown, table: table))
    }

    private static func kernel(tracked: [DefaultRoute], v4: RouteLookup? = nil, v6: RouteLookup? = nil) -> NetworkSnapshot {
        snapshot(links: [lo, eth0, eth1, tun0], defaults: tracked, v4: v4, v6: v6)
    }

    private struct Case {
        var name: String
        var removed: Set<DefaultRoute>
        var snapshot: NetworkSnapshot
        /// The removed routes a lookup still answers through, unexplained.
        var suspects: Set<DefaultRoute>
    }

    private let cases: [Case] = [
        Case(name: "the core case: the only default deleted, the lookup still answers through it",
             removed: [viaEth0], snapshot: kernel(tracked: [], v4: via(2, "192.0.2.1")),
             suspects: [viaEth0]),
        Case(name: "deleted and gone: no route",
             removed: [viaEth0], snapshot: kernel(tracked: [], v4: .failure(.noRoute)),
             suspects: []),
        Case(name: "deleted, the next default takes over",
             removed: [viaEth0], snapshot: kernel(tracked: [viaEth1], v4: via(8, "198.51.100.1")),
             suspects: []),
        Case(name: "deleted, the lookup still sees it although another default is tracked",
             removed: [viaEth0], snapshot: kernel(tracked: [viaEth1], v4: via(2, "192.0.2.1")),
             suspects: [viaEth0]),
        Case(name: "split VPN routes (0/1 + 128/1, untracked) answer through tun0: not the deleted route",
             removed: [viaEth0], snapshot: kernel(tracked: [], v4: via(5, "10.8.0.1")),
             suspects: []),
        Case(name: "split routes through the same gateway answer exactly like the deleted default: suspect (bounded)",
             removed: [viaTun0], snapshot: kernel(tracked: [], v4: via(5, "10.8.0.1")),
             suspects: [viaTun0]),
        Case(name: "two defaults through the same gateway, one deleted: the other explains the answer",
             removed: [viaEth0], snapshot: kernel(tracked: [viaEth0Metric200], v4: via(2, "192.0.2.1")),
             suspects: []),
        Case(name: "same gateway left in another table, but the answer names the deleted one's table",
             removed: [viaEth0], snapshot: kernel(tracked: [viaEth0Table100], v4: via(2, "192.0.2.1", table: 254)),
             suspects: [viaEth0]),
        Case(name: "same gateway left in another table, and the answer comes from there",
             removed: [viaEth0], snapshot: kernel(tracked: [viaEth0Table100], v4: via(2, "192.0.2.1", table: 100)),
             suspects: []),
        Case(name: "an answer without a table matches on next hop alone",
             removed: [viaEth0], snapshot: kernel(tracked: [], v4: via(2, "192.0.2.1", table: nil)),
             suspects: [viaEth0]),
        Case(name: "deleted and re-added in the same batch: tracked again, trusted",
             removed: [viaEth0], snapshot: kernel(tracked: [viaEth0], v4: via(2, "192.0.2.1")),
             suspects: []),
        Case(name: "the linkdown flag does not make a route another one",
             removed: [viaEth0], snapshot: kernel(tracked: [defaultRoute(.ipv4, dev: 2, via: "192.0.2.1", linkdown: true)],
                                                  v4: via(2, "192.0.2.1", linkdown: true)),
             suspects: []),
        Case(name: "replaced (kernels before 5.6 notify first): the lookup still answers through the old route",
             removed: [viaEth0], snapshot: kernel(tracked: [viaEth1], v4: via(2, "192.0.2.1")),
             suspects: [viaEth0]),
        Case(name: "an on-link default: no gateway on either side",
             removed: [onLinkEth0], snapshot: kernel(tracked: [], v4: via(2, nil)),
             suspects: [onLinkEth0]),
        Case(name: "a deleted multipath default, answered through one of its hops",
             removed: [multipathV4], snapshot: kernel(tracked: [], v4: via(8, "198.51.100.1")),
             suspects: [multipathV4]),
        Case(name: "a deleted unreachable default still answering EHOSTUNREACH",
             removed: [unreachableV4], snapshot: kernel(tracked: [viaEth0], v4: .failure(.unreachableRoute)),
             suspects: [unreachableV4]),
        Case(name: "another unreachable default is still tracked: it explains EHOSTUNREACH",
             removed: [unreachableV4], snapshot: kernel(tracked: [unreachableV4Metric1], v4: .failure(.unreachableRoute)),
             suspects: []),
        Case(name: "a deleted unreachable default, now a blackhole answers: not the deleted route",
             removed: [unreachableV4], snapshot: kernel(tracked: [], v4: .failure(.blackholeRoute)),
             suspects: []),
        Case(name: "a failed lookup is never explained by a route, nor suspect",
             removed: [viaEth0], snapshot: kernel(tracked: [], v4: .failure(.lookupFailed("EBADF"))),
             suspects: []),
        Case(name: "families do not mix: a deleted IPv6 default says nothing about the IPv4 answer",
             removed: [v6ViaEth0], snapshot: kernel(tracked: [viaEth0], v4: via(2, "192.0.2.1"), v6: .failure(.noRoute)),
             suspects: []),
        Case(name: "an IPv6 sibling deleted, the lookup answers through the remaining one",
             removed: [v6ViaEth0], snapshot: kernel(tracked: [v6ViaEth1], v6: via(8, "fe80::2")),
             suspects: []),
        Case(name: "only the family whose answer is unexplained counts",
             removed: [viaEth0, v6ViaEth0], snapshot: kernel(tracked: [v6ViaEth0], v4: via(2, "192.0.2.1"), v6: via(2, "fe80::1")),
             suspects: [viaEth0]),
        Case(name: "nothing removed, nothing suspect, whatever the lookups say",
             removed: [], snapshot: kernel(tracked: [], v4: via(5, "10.8.0.1")),
             suspects: []),
    ]

    func testSuspectsTable() {
        for entry in cases {
            XCTAssertEqual(LookupRecheck.unexplained(entry.removed, in: entry.snapshot), entry.suspects, entry.name)
        }
    }

    // MARK: The state machine

    private static let schedule = LookupRecheck.schedule

    func testScheduleIsShortBoundedAndGrowing() {
        XCTAssertEqual(Self.schedule, [1, 2, 4, 8, 16, 32].map { .milliseconds($0) })
        XCTAssertLessThan(Self.schedule.reduce(.zero, +), .milliseconds(100), "settles within tens of milliseconds")
        XCTAssertEqual(Self.schedule, Self.schedule.sorted())
    }

    func testStaleAnswerIsLookedAtAgainUntilTheKernelCatchesUp() {
        var recheck = LookupRecheck()
        let stale = Self.kernel(tracked: [], v4: Self.via(2, "192.0.2.1"))
        XCTAssertEqual(recheck.evaluate(removed: [Self.viaEth0], snapshot: stale), .lookAgain(after: .milliseconds(1)))
        XCTAssertEqual(recheck.evaluate(removed: [], snapshot: stale), .lookAgain(after: .milliseconds(2)))
        XCTAssertEqual(recheck.evaluate(removed: [], snapshot: Self.kernel(tracked: [], v4: .failure(.noRoute))), .trusted)
        XCTAssertEqual(recheck.suspects, [])
        XCTAssertEqual(recheck.attempts, 0)
        XCTAssertEqual(recheck.evaluate(removed: [], snapshot: stale), .trusted, "nothing carried over once confirmed")
    }

    func testALegitimateAnswerIsRecheckedAtMostTheScheduleThenSettled() {
        // Split routes through the very gateway of the deleted default: indistinguishable.
        var recheck = LookupRecheck()
        let answer = Self.kernel(tracked: [], v4: Self.via(5, "10.8.0.1"))
        var verdicts = [recheck.evaluate(removed: [Self.viaTun0], snapshot: answer)]
        for _ in 0..<10 { verdicts.append(recheck.evaluate(removed: [], snapshot: answer)) }
        XCTAssertEqual(verdicts, Self.schedule.map { .lookAgain(after: $0) } + [.gaveUp] + Array(repeating: .trusted, count: 4))
    }

    func testAnUnrelatedEventDoesNotSettleAStaleAnswer() {
        var recheck = LookupRecheck()
        let stale = Self.kernel(tracked: [], v4: Self.via(2, "192.0.2.1"))
        XCTAssertEqual(recheck.evaluate(removed: [Self.viaEth0], snapshot: stale), .lookAgain(after: .milliseconds(1)))
        // An address event arrives before the recheck: no removal in it, same stale lookup.
        XCTAssertEqual(recheck.evaluate(removed: [], snapshot: stale), .lookAgain(after: .milliseconds(2)))
        XCTAssertEqual(recheck.suspects, [Self.viaEth0])
    }

    func testReaddedInALaterBatchIsTrusted() {
        var recheck = LookupRecheck()
        XCTAssertEqual(recheck.evaluate(removed: [Self.viaEth0], snapshot: Self.kernel(tracked: [], v4: Self.via(2, "192.0.2.1"))),
                       .lookAgain(after: .milliseconds(1)))
        XCTAssertEqual(recheck.evaluate(removed: [], snapshot: Self.kernel(tracked: [Self.viaEth0], v4: Self.via(2, "192.0.2.1"))), .trusted)
        XCTAssertEqual(recheck.suspects, [])
    }

    func testANewRemovalStillSeenStartsTheScheduleOver() {
        var recheck = LookupRecheck()
        let stale = Self.kernel(tracked: [], v4: Self.via(2, "192.0.2.1"))
        _ = recheck.evaluate(removed: [Self.viaEth0], snapshot: stale)
        _ = recheck.evaluate(removed: [], snapshot: stale)
        _ = recheck.evaluate(removed: [], snapshot: stale)
        XCTAssertEqual(recheck.attempts, 3)
        XCTAssertEqual(recheck.evaluate(removed: [Self.viaEth0], snapshot: stale), .lookAgain(after: .milliseconds(1)))
        // A removal the lookups no longer see does not.
        _ = recheck.evaluate(removed: [], snapshot: stale)
        XCTAssertEqual(recheck.evaluate(removed: [Self.viaEth1], snapshot: stale), .lookAgain(after: .milliseconds(4)))
    }

    func testAnEmptyScheduleNeverRechecks() {
        var recheck = LookupRecheck(schedule: [])
        XCTAssertEqual(recheck.evaluate(removed: [Self.viaEth0], snapshot: Self.kernel(tracked: [], v4: Self.via(2, "192.0.2.1"))), .gaveUp)
    }
}
