import LinuxSystem
import XCTest

/// `BootClockTimer`, the engine's waits on CLOCK_BOOTTIME.
final class DeadlineTimerTests: XCTestCase {
    /// The engine's deadline timer: rounded up, never zero (zero disarms).
    func testDeadlineTimerWaitRoundsUp() {
        let now = ContinuousClock().now
        let cases: [(Duration, Int, Int)] = [
            (.zero, 0, 1), (.seconds(-1), 0, 1), (.nanoseconds(1), 0, 1), (Duration(secondsComponent: 0, attosecondsComponent: 1), 0, 1), (.milliseconds(5), 0, 5_000_000),
            (.microseconds(5_001), 0, 5_001_000), (.seconds(3) + .nanoseconds(7), 3, 7), (Duration(secondsComponent: 1, attosecondsComponent: 999_999_999_999_999_999), 2, 0),
        ]
        for (offset, seconds, nanoseconds) in cases {
            let wait = BootClockTimer.wait(from: now, to: now + offset)
            XCTAssertEqual([wait.seconds, wait.nanoseconds], [seconds, nanoseconds], "\(offset)")
        }
    }

    /// The timer on the real kernel: readable once its deadline passed (at once for a passed
    /// one), not before; disarmed, never.
    func testDeadlineTimerFires() throws {
        let clock = ContinuousClock()
        let timer = try BootClockTimer()
        var polls = PollSet([timer.descriptor])
        try timer.arm(at: clock.now + .milliseconds(30), now: clock.now)
        XCTAssertEqual(try polls.wait(timeoutMilliseconds: 0), [false], "not before its deadline")
        let started = clock.now
        XCTAssertEqual(try polls.wait(timeoutMilliseconds: 2000), [true])
        XCTAssertGreaterThanOrEqual(clock.now - started, .milliseconds(20))
        timer.acknowledge()
        XCTAssertEqual(try polls.wait(timeoutMilliseconds: 0), [false], "acknowledged")
        try timer.arm(at: clock.now - .seconds(1), now: clock.now)
        XCTAssertEqual(try polls.wait(timeoutMilliseconds: 100), [true], "a passed deadline fires at once")
        timer.acknowledge()
        try timer.arm(at: clock.now + .milliseconds(10), now: clock.now)
        try timer.arm(at: nil, now: clock.now)
        XCTAssertEqual(try polls.wait(timeoutMilliseconds: 50), [false], "disarmed")
    }
}
