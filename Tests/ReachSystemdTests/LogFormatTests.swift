import Logging
import ReachSystemd
import XCTest

final class LogFormatTests: XCTestCase {
    func testSyslogPriorities() {
        let expected: [(Logger.Level, Int)] = [
            (.trace, 7), (.debug, 7), (.info, 6), (.notice, 5), (.warning, 4), (.error, 3), (.critical, 2),
        ]
        for (level, priority) in expected { XCTAssertEqual(LogFormat.syslogPriority(level), priority, "\(level)") }
    }

    func testLines() {
        let cases: [(name: String, style: LogOutputStyle, level: Logger.Level, metadata: Logger.Metadata, message: String, time: Int, expected: String)] = [
            ("journal info", .journal, .info, [:], "path changed: satisfied", 1_795_239_000, "<6>path changed: satisfied\n"),
            ("journal critical", .journal, .critical, [:], "cannot start", 0, "<2>cannot start\n"),
            ("journal debug", .journal, .debug, [:], "drained 3", 0, "<7>drained 3\n"),
            ("journal: a newline never makes a second record", .journal, .error, [:], "bad config:\n  line 3", 0, #"<3>bad config:\n  line 3"# + "\n"),
            ("journal metadata", .journal, .warning, ["b": "2", "a": "1"], "slow", 0, "<4>slow a=1 b=2\n"),
            ("plain info", .plain, .info, [:], "path changed: satisfied", 1_795_239_000, "2026-11-21T05:30:00Z info reachd: path changed: satisfied\n"),
            ("plain notice", .plain, .notice, [:], "hello", 0, "1970-01-01T00:00:00Z notice reachd: hello\n"),
            (
                "plain metadata, quoted when needed", .plain, .error,
                ["interface": "eth0", "reason": "no carrier", "empty": "", "list": ["a", "b"]], "down", 951_827_696,
                "2000-02-29T12:34:56Z error reachd: down empty=\"\" interface=eth0 list=[a,b] reason=\"no carrier\"\n"
            ),
        ]
        for testCase in cases {
            let line = LogFormat.format(
                style: testCase.style, level: testCase.level, label: "reachd", message: testCase.message,
                metadata: testCase.metadata, secondsSinceEpoch: testCase.time
            )
            XCTAssertEqual(line, testCase.expected, testCase.name)
        }
    }

    func testTimestamps() {
        let cases: [(Int, String)] = [
            (0, "1970-01-01T00:00:00Z"),
            (-1, "1969-12-31T23:59:59Z"),
            (951_827_696, "2000-02-29T12:34:56Z"),
            (1_795_239_000, "2026-11-21T05:30:00Z"),
            (4_102_444_800, "2100-01-01T00:00:00Z"),
        ]
        for (seconds, text) in cases { XCTAssertEqual(LogFormat.timestamp(seconds), text) }
    }

    func testJournalStreamDetection() {
        let cases: [(value: String?, device: UInt64, inode: UInt64, expected: Bool)] = [
            ("8:12345", 8, 12345, true),
            ("8:12345", 8, 12346, false),
            ("9:12345", 8, 12345, false),
            (nil, 8, 12345, false),
            ("", 8, 12345, false),
            ("8", 8, 12345, false),
            ("8:12345:1", 8, 12345, false),
            ("x:y", 8, 12345, false),
        ]
        for testCase in cases {
            XCTAssertEqual(
                JournalStream.matches(testCase.value, device: testCase.device, inode: testCase.inode), testCase.expected,
                "\(testCase.value ?? "nil")"
            )
        }
    }

    func testHandlerWritesAndSharesItsLevel() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        defer { close(fds[0]) }
        let levelSwitch = LogLevelSwitch(.info)
        var logger = Logger(label: "reachd") { label in
            ReachdLogHandler(label: label, style: .journal, levelSwitch: levelSwitch, fileDescriptor: fds[1])
        }
        logger.debug("hidden")
        logger.info("shown", metadata: ["k": "v"])
        levelSwitch.level = .debug
        logger.debug("now shown")
        logger.logLevel = .error
        XCTAssertEqual(levelSwitch.level, .error)
        logger.warning("hidden again")
        close(fds[1])

        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fds[0], &buffer, buffer.count)
            if count <= 0 { break }
            output += buffer[0..<count]
        }
        XCTAssertEqual(String(decoding: output, as: UTF8.self), "<6>shown k=v\n<7>now shown\n")
    }
}
