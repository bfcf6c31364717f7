@testable import ReachabilityCore
import XCTest

/// `Optional<ContinuousClock.Instant>.earlier(than:)`: nil is no timer, never the earliest.
final class DeadlineTests: XCTestCase {
    func testTheEarlierOfTwoDeadlines() {
        let now = ContinuousClock.now
        let soon = now + .milliseconds(5)
        let rows: [(String, ContinuousClock.Instant?, ContinuousClock.Instant?, ContinuousClock.Instant?)] = [
            ("no timer at all", nil, nil, nil),
            ("only the first", now, nil, now),
            ("only the second", nil, soon, soon),
            ("the first is earlier", now, soon, now),
            ("the second is earlier", soon, now, now),
            ("equal", soon, soon, soon),
        ]
        for (name, first, second, expected) in rows {
            XCTAssertEqual(first.earlier(than: second), expected, name)
        }
    }
}
