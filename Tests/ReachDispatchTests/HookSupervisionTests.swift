import ReachDispatch
import XCTest

/// A hook's deadline and the cutting of its output into log lines.
final class HookSupervisionTests: XCTestCase {
    func testDeadlineTermsThenKills() {
        var deadline = HookDeadline(timeout: .seconds(30), grace: .seconds(5))
        let steps: [(Duration, HookDeadline.Action, HookDeadline.Stage)] = [
            (.zero, .wait(.seconds(30)), .running),
            (.seconds(29), .wait(.seconds(1)), .running),
            (.seconds(30), .terminate, .terminated),
            (.seconds(31), .wait(.seconds(4)), .terminated),
            (.seconds(35), .kill, .killed),
            (.seconds(99), .wait(.milliseconds(100)), .killed),
        ]
        for (elapsed, action, stage) in steps {
            XCTAssertEqual(deadline.step(elapsed: elapsed), action, "\(elapsed)")
            XCTAssertEqual(deadline.stage, stage, "\(elapsed)")
        }
        // No grace: SIGKILL on the step after SIGTERM.
        var hurried = HookDeadline(timeout: .seconds(1), grace: .zero)
        XCTAssertEqual(hurried.step(elapsed: .seconds(2)), .terminate)
        XCTAssertEqual(hurried.step(elapsed: .seconds(2)), .kill)
    }

    func testOutputLines() {
        var lines = HookOutputLines(limit: 8)
        XCTAssertEqual(lines.feed(Array("one\ntw".utf8)), ["one"])
        XCTAssertEqual(lines.feed(Array("o\n\n".utf8)), ["two", ""])
        // A line never ended is cut at the limit, so memory stays bounded.
        XCTAssertEqual(lines.feed(Array("0123456789".utf8)), ["01234567"])
        XCTAssertEqual(lines.finish(), ["89"])
        XCTAssertEqual(lines.finish(), [])
        // Control characters and broken UTF-8 are shown, never passed on.
        var hostile = HookOutputLines()
        XCTAssertEqual(hostile.feed([0x1B, 0x5B, 0x32, 0x4A, 0xFF, 0x0A]), ["\\x1b[2J\u{FFFD}"])
    }

    func testOutcomeDescriptions() {
        XCTAssertEqual(HookOutcome.exited(0).description, "exited with status 0")
        XCTAssertEqual(HookOutcome.signalled(9, timedOut: true).description, "killed by signal 9 at its timeout")
        XCTAssertEqual(HookOutcome.signalled(11, timedOut: false).description, "killed by signal 11")
    }
}
