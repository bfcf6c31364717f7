import ReachSystemd
import XCTest

/// At most one line of a kind per interval, with a count of what was held back.
final class LogLimiterTests: XCTestCase {
    func testOneLinePerKindAndInterval() {
        var limiter = LogLimiter(interval: .seconds(60))
        let start = ContinuousClock.now
        let steps: [(kind: String, after: Duration, allowed: Bool, suppressed: Int)] = [
            ("malformed", .zero, true, 0),
            ("malformed", .seconds(1), false, 0),
            ("malformed", .seconds(2), false, 0),
            ("limit", .seconds(2), true, 0),          // another kind is independent
            ("malformed", .seconds(61), true, 2),     // the next line says how many were held back
            ("malformed", .seconds(62), false, 0),
            ("limit", .seconds(200), true, 0),
        ]
        for (index, step) in steps.enumerated() {
            let (allowed, suppressed) = limiter.allow(step.kind, now: start + step.after)
            XCTAssertEqual(allowed, step.allowed, "step \(index)")
            XCTAssertEqual(suppressed, step.suppressed, "step \(index)")
        }
    }
}
