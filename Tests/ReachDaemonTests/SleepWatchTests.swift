import LinuxSystem
@testable import ReachDaemon
import XCTest

/// `SleepWatch` as a table: logind's signals and the engine's looks at the time asleep since
/// boot, in order, and what each decided.
final class SleepWatchTests: XCTestCase {
    private enum Input { case logind(Bool, asleep: Int), looked(asleep: Int) }

    func testSleepWatch() {
        let hours7 = 7 * 3600 + 12 * 60
        // (name, time asleep at start in seconds, inputs, the actions after each)
        let rows: [(String, Int, [Input], [[SleepWatch.Action]])] = [
            ("awake and nothing slept: nothing", 0, [.looked(asleep: 0), .looked(asleep: 0)], [[], []]),
            ("a sleep before reachd started is no wake", 3600, [.looked(asleep: 3600)], [[]]),
            ("logind: pause, then the wake with its length", 0, [.logind(true, asleep: 0), .logind(false, asleep: hours7)],
             [[.pause], [.woke(after: .seconds(hours7))]]),
            ("the clocks see the wake before logind says it: reported once", 0,
             [.logind(true, asleep: 0), .looked(asleep: 600), .logind(false, asleep: 600)], [[.pause], [.woke(after: .seconds(600))], []]),
            ("no logind: the jump alone is a wake, reported once", 10, [.looked(asleep: 10), .looked(asleep: 70), .looked(asleep: 70)],
             [[], [.woke(after: .seconds(60))], []]),
            ("less than a second is no sleep", 0, [.looked(asleep: 0)], [[]]),
            ("an aborted suspend wakes too: the paused work starts again", 0, [.logind(true, asleep: 0), .logind(false, asleep: 0)],
             [[.pause], [.woke(after: .zero)]]),
            ("a repeated PrepareForSleep(true) pauses once", 0, [.logind(true, asleep: 0), .logind(true, asleep: 0)], [[.pause], []]),
            ("a wake signal with no sleep before it: the clocks decide", 0,
             [.logind(false, asleep: 0), .logind(false, asleep: 30)], [[], [.woke(after: .seconds(30))]]),
            ("a sleep nobody reported, then logind's next: the wake first", 0, [.logind(true, asleep: 90)],
             [[.woke(after: .seconds(90)), .pause]]),
        ]
        for (name, start, inputs, expected) in rows {
            var watch = SleepWatch(asleepSinceBoot: .seconds(start))
            var seen: [[SleepWatch.Action]] = []
            for input in inputs {
                switch input {
                case let .logind(sleeping, asleep): seen.append(watch.logind(sleeping: sleeping, asleep: .seconds(asleep)))
                case let .looked(asleep): seen.append(watch.looked(asleep: .seconds(asleep)))
                }
            }
            XCTAssertEqual(seen, expected, name)
        }
    }

    /// The time asleep since boot never runs backwards and is what the clocks say.
    func testSuspendClockReadsTheTwoClocks() {
        let first = SuspendClock.asleepSinceBoot()
        let second = SuspendClock.asleepSinceBoot()
        XCTAssertGreaterThanOrEqual(first, .zero)
        XCTAssertLessThan(abs((second - first).components.seconds), 1, "no sleep between two looks")
    }
}
