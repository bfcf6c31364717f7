@testable import NetlinkMonitor
import ReachabilityCore
import XCTest

/// Which gateways' entries the monitor reads, which filter it installs for them, and which
/// neighbour events are news (`GatewayFollowing`), without a kernel.
final class GatewayFollowingTests: XCTestCase {
    private static let a = GatewayKey(interfaceIndex: 2, address: .v4(10, 0, 0, 1))
    private static let b = GatewayKey(interfaceIndex: 3, address: IPAddress("fe80::1")!)

    /// Runs `follow(used:)`'s rounds as `NetlinkMonitor` does; each read answers the next of
    /// `reads` for that key (the last one repeats; none: the kernel did not say).
    private static func follow(
        _ following: inout GatewayFollowing, used: Set<GatewayKey>, reads: [GatewayKey: [NeighbourState?]]
    ) -> [GatewayFollowing.Step] {
        var served: [GatewayKey: Int] = [:]
        var step = following.follow(used: used)
        var steps = [step]
        while case let .refit(unread) = step {
            for key in unread {
                guard let answers = reads[key], !answers.isEmpty else { continue }
                let index = min(served[key, default: 0], answers.count - 1)
                served[key] = index + 1
                following.record(key, answers[index], now: 100)
            }
            step = following.nextStep()
            steps.append(step)
        }
        return steps
    }

    func testRounds() {
        typealias Step = GatewayFollowing.Step
        let (a, b) = (Self.a, Self.b)
        struct Case {
            var name: String
            /// Followed before, with what each read answered then.
            var before: (used: Set<GatewayKey>, reads: [GatewayKey: [NeighbourState?]])?
            var forgetFilter = false
            var used: Set<GatewayKey>
            var reads: [GatewayKey: [NeighbourState?]]
            var steps: [Step]
            var filter: [GatewayKey: RouteEventFilter.GatewayEvents]
            var usedStates: [GatewayKey: NeighbourState]
        }
        let cases: [Case] = [
            Case(name: "nothing to follow", used: [], reads: [:], steps: [.fitted], filter: [:], usedStates: [:]),
            Case(name: "a new gateway that answers: read, then only failures pass", used: [a], reads: [a: [.reachable]],
                 steps: [.refit(read: [a]), .refit(read: []), .fitted], filter: [a: .failures], usedStates: [a: .reachable]),
            Case(name: "a new gateway without an entry: everything passes", used: [a], reads: [a: [nil]],
                 steps: [.refit(read: [a]), .fitted], filter: [a: .all], usedStates: [:]),
            Case(name: "a new failed gateway: everything passes", used: [a], reads: [a: [.failed]],
                 steps: [.refit(read: [a]), .fitted], filter: [a: .all], usedStates: [a: .failed]),
            Case(name: "the kernel did not say: nothing known, everything passes", used: [a], reads: [:],
                 steps: [.refit(read: [a]), .fitted], filter: [a: .all], usedStates: [:]),
            Case(name: "already fitted: no read, no install", before: ([a], [a: [.stale]]), used: [a], reads: [:],
                 steps: [.fitted], filter: [a: .failures], usedStates: [a: .stale]),
            Case(name: "after a resync every entry is read again", before: ([a], [a: [.stale]]), forgetFilter: true,
                 used: [a], reads: [a: [.reachable]], steps: [.refit(read: [a]), .fitted], filter: [a: .failures],
                 usedStates: [a: .reachable]),
            Case(name: "an entry that keeps turning: every event passes after three rounds", before: ([a], [a: [.stale]]),
                 forgetFilter: true, used: [a], reads: [a: [.failed, .reachable]],
                 steps: [.refit(read: [a]), .refit(read: [a]), .refit(read: []), .keepAll], filter: [a: .all],
                 usedStates: [a: .reachable]),
            Case(name: "a gateway no route uses stays followed, not reported", before: ([a], [a: [.stale]]),
                 used: [b], reads: [b: [.delay]], steps: [.refit(read: [b]), .refit(read: []), .fitted],
                 filter: [a: .failures, b: .failures], usedStates: [b: .delay]),
        ]
        for test in cases {
            var following = GatewayFollowing()
            if let before = test.before { _ = Self.follow(&following, used: before.used, reads: before.reads) }
            if test.forgetFilter { following.forgetFilter() }
            XCTAssertEqual(Self.follow(&following, used: test.used, reads: test.reads), test.steps, test.name)
            XCTAssertEqual(following.filter, test.filter, test.name)
            XCTAssertEqual(following.usedEntries.mapValues(\.state), test.usedStates, test.name)
        }
    }

    func testGatewaysNoRouteUsesAreDroppedOverTheLimit() {
        var following = GatewayFollowing()
        let many = Set((1...(GatewayNeighbours.retainedLimit + 1)).map { GatewayKey(interfaceIndex: 5, address: .v4(10, 0, 5, UInt8($0))) })
        _ = Self.follow(&following, used: many, reads: Dictionary(uniqueKeysWithValues: many.map { ($0, [NeighbourState.reachable]) }))
        XCTAssertEqual(Set(following.filter.keys), many)
        XCTAssertEqual(Self.follow(&following, used: [Self.a], reads: [Self.a: [.reachable]]),
                       [.refit(read: [Self.a]), .refit(read: []), .fitted])
        XCTAssertEqual(Set(following.filter.keys), [Self.a], "more left over than the limit: none kept")
        XCTAssertEqual(Set(following.entries.keys), [Self.a])
    }

    func testWhichEventsAreNews() {
        let (a, b) = (Self.a, Self.b)
        let unfollowed = GatewayKey(interfaceIndex: 4, address: .v4(192, 0, 2, 1))
        // a is used and answers; b is followed but no route uses it any more.
        let cases: [(String, GatewayKey, NeighbourState?, news: Bool, kept: NeighbourState?)] = [
            ("the same state again", a, .reachable, false, .reachable),
            ("failed", a, .failed, true, .failed),
            ("gone", a, nil, true, nil),
            ("a gateway no route uses: kept, no news", b, .failed, false, .failed),
            ("a neighbour not followed", unfollowed, .failed, false, nil),
        ]
        for (name, key, reported, news, kept) in cases {
            var following = GatewayFollowing()
            _ = Self.follow(&following, used: [a, b], reads: [a: [.reachable], b: [.reachable]])
            _ = Self.follow(&following, used: [a], reads: [:])
            XCTAssertEqual(following.event(key, reported, now: 200), news, name)
            XCTAssertEqual(following.entries[key]?.state, kept, name)
        }
    }

    func testSinceMovesOnlyBetweenFailedAndNot() {
        let cases: [(String, [NeighbourState?], state: NeighbourState?, since: Int?)] = [
            ("first seen", [.reachable], .reachable, 1),
            ("answering states share one since", [.reachable, .stale, .delay, .probe], .probe, 1),
            ("failed starts a new since", [.reachable, .stale, .failed], .failed, 3),
            ("a retry after failed is still failed", [.reachable, .failed, .incomplete], .failed, 2),
            ("back from failed", [.failed, .incomplete, .reachable], .reachable, 3),
            ("gone: nothing known", [.reachable, nil], nil, nil),
            ("gone and back", [.reachable, nil, .stale], .stale, 3),
        ]
        for (name, reports, state, since) in cases {
            var following = GatewayFollowing()
            for (time, reported) in reports.enumerated() { following.record(Self.a, reported, now: time + 1) }
            XCTAssertEqual(following.entries[Self.a]?.state, state, name)
            XCTAssertEqual(following.entries[Self.a]?.since, since, name)
        }
    }
}
