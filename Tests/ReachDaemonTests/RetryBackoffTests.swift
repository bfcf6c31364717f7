@testable import ReachDaemon
import XCTest


final class RetryBackoffTests: XCTestCase {
    func testDelaysDoubleToTheCapThenGiveUp() {
        var backoff = RetryBackoff(initial: .milliseconds(100), maximum: .seconds(1), attempts: 6)
        let delays = (0..<7).map { _ in backoff.failed() }
        XCTAssertEqual(delays, [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1), .seconds(1), nil])
    }

    func testSuccessStartsOver() {
        var backoff = RetryBackoff(initial: .milliseconds(100), maximum: .seconds(1), attempts: 2)
        XCTAssertEqual(backoff.failed(), .milliseconds(100))
        XCTAssertEqual(backoff.failed(), .milliseconds(200))
        backoff.succeeded()
        XCTAssertEqual(backoff.failed(), .milliseconds(100))
    }

    func testNetlinkScheduleIsBounded() {
        var backoff = RetryBackoff.netlinkResync
        var total = Duration.zero
        while let delay = backoff.failed() { total += delay }
        XCTAssertEqual(backoff.failures, 11)
        XCTAssertLessThan(total, .seconds(60), "gives up within a minute, so systemd restarts reachd")
        XCTAssertGreaterThan(total, .seconds(10), "but not before retrying for a while")
    }
}
