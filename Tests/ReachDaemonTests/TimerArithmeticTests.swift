import NIOCore
@testable import ReachabilityCore
import XCTest

/// Timer arithmetic on numbers a network sent (RFC 8908 `seconds-remaining`) saturates
/// instead of trapping: `{"captive": false, "seconds-remaining": 1e10}` once crashed reachd
/// with an arithmetic overflow in reachd's own conversion to NIO's `TimeAmount`, replaced
/// by NIO's `TimeAmount(_: Duration)`, which clamps.
final class TimerArithmeticTests: XCTestCase {
    func testTimeAmountFromDurationSaturates() {
        let cases: [(String, Duration, Int64)] = [
            ("zero", .zero, 0),
            ("one second", .seconds(1), 1_000_000_000),
            ("sub-nanosecond parts are dropped", .nanoseconds(1_500) + .nanoseconds(1) / 2, 1_500),
            ("a negative span", .milliseconds(-3), -3_000_000),
            ("1e10 s (the crash): the longest span", .seconds(10_000_000_000), .max),
            ("just past Int64 nanoseconds", .seconds(9_223_372_037), .max),
            ("just within", .seconds(9_223_372_035), 9_223_372_035_000_000_000),
            ("Int64.max seconds", .seconds(Int64.max), .max),
        ]
        for (name, duration, nanoseconds) in cases {
            XCTAssertEqual(TimeAmount(duration).nanoseconds, nanoseconds, name)
        }
    }

    func testSessionEndFromNetworkSecondsIsBounded() {
        let now = ContinuousClock.now
        let cases: [(String, Int, Duration)] = [
            ("a normal session", 32, .seconds(32)),
            ("none left", 0, .zero),
            ("negative (refused at parse, but not trusted here)", -5, .zero),
            ("1e10 s: a day", 10_000_000_000, ProbeSchedule.longestWait),
            ("Int.max: a day", .max, ProbeSchedule.longestWait),
            ("Int.min: now", .min, .zero),
        ]
        for (name, seconds, expected) in cases {
            XCTAssertEqual(ProbeSchedule.instant(seconds: seconds, after: now) - now, expected, name)
        }
    }

    /// An open session with an enormous remaining time arms a timer a day away at most,
    /// which NIO can schedule.
    func testHugeSessionArmsABoundedTimer() {
        let now = ContinuousClock.now
        var schedule = ProbeSchedule()
        guard case let .startProbe(round)? = schedule.pathChanged(eligible: true).last else { return XCTFail("no round") }
        let ends = ProbeSchedule.instant(seconds: .max, after: now)
        let actions = schedule.probeFinished(round: round, connectivity: .full, sessionEnds: ends, now: now)
        XCTAssertEqual(actions, [.armTimer(at: now + ProbeSchedule.longestWait - schedule.configuration.sessionMargin)])
        // Even an instant past any real clock converts without trapping.
        XCTAssertEqual(TimeAmount((now + .seconds(Int64.max)) - now).nanoseconds, .max)
    }

    func testRetryDelaysStayWithinTheLongestWait() {
        let schedule = ProbeSchedule(configuration: .init(initialDelay: .seconds(Int64.max / 4), maximumDelay: .seconds(Int64.max / 2)))
        XCTAssertEqual(schedule.delay(afterFailures: 0), ProbeSchedule.longestWait)
        XCTAssertEqual(schedule.delay(afterFailures: 40), ProbeSchedule.longestWait)
        let normal = ProbeSchedule()
        XCTAssertEqual((0..<12).map { normal.delay(afterFailures: $0) },
                       [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300].map { Duration.seconds($0) })
    }
}
