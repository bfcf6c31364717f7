import ReachabilityCore
import XCTest

final class SleepReportTests: XCTestCase {
    /// The journal's `woke after …` and `reachctl status`'s `Last wake:` say a sleep's length so.
    func testDurations() {
        let cases: [(seconds: Int64, said: String)] = [
            (0, "0s"), (-5, "0s"), (42, "42s"), (59, "59s"), (60, "1m00s"), (185, "3m05s"), (3599, "59m59s"),
            (3600, "1h00m"), (3660, "1h01m"), (25_920, "7h12m"), (25_959, "7h12m"), (90_000, "25h00m"),
        ]
        for (seconds, said) in cases {
            XCTAssertEqual(SleepReport.duration(.seconds(seconds)), said, "\(seconds) s")
        }
    }
}
