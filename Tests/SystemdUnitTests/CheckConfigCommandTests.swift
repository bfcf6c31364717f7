import Foundation
import ReachProtocol
import TestSupport
import XCTest

/// `reachd --check-config [PATH]` and refusing to start on a bad configuration.
final class CheckConfigCommandTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = URL(fileURLWithPath: try Paths.makeTemporaryDirectory("reachd-check"))
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    private var reachd: String { Paths.products.appendingPathComponent("reachd").path }

    private func write(_ name: String, _ text: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    func testCheckConfig() throws {
        try requireBuiltTools()
        let good = try write("good.toml", "[log]\nlevel = \"debug\"\n")
        let bad = try write("bad.toml", "[socket]\nmode = \"0644\"\n\n[sockte]\n[log]\nlevel = \"loud\"\n")
        let missing = directory.appendingPathComponent("missing.toml").path
        let shipped = Paths.repository.appendingPathComponent("config/reachd.toml").path
        let cases: [(name: String, arguments: [String], status: Int32, stdout: String, stderr: String)] = [
            ("good file", ["--check-config", good], 0, "\(good): ok\n", ""),
            ("shipped file", ["--check-config", shipped], 0, "\(shipped): ok\n", ""),
            ("path from --config", ["--config", good, "--check-config"], 0, "\(good): ok\n", ""),
            (
                "bad file", ["--check-config", bad], 1, "",
                "\(bad):4: unknown key \"sockte\" (did you mean \"socket\"?)\n"
                    + "\(bad):6: log.level: unknown log level \"loud\" (expected trace, debug, info, notice, warning, error, critical)\n"
            ),
            ("missing file", ["--check-config", missing], 1, "", "\(missing): no such configuration file\n"),
        ]
        for testCase in cases {
            let result = try Command.run([reachd] + testCase.arguments)
            XCTAssertEqual(result.status, testCase.status, testCase.name)
            XCTAssertEqual(result.stdout, testCase.stdout, testCase.name)
            XCTAssertEqual(result.stderr, testCase.stderr, testCase.name)
        }
    }

    /// Text that made TOMLKit's parser abort (exit 134, F9) is a located syntax error: exit 1.
    func testCheckConfigSurvivesParserCrashers() throws {
        try requireBuiltTools()
        let key = "Error while parsing key: expected bare key starting character or string delimiter, saw"
        let cases: [(name: String, text: String, stderr: String)] = [
            ("the typo from the issue", "[[[ broken\n", ":1:3: \(key) '['"),
            ("header cut short", "[log]\nlevel = \"info\"\n[\n", ":3:2: \(key) '\\n'"),
            ("'}' in an array", "[interfaces]\nignore = [\"eth*\", }\n", ":2:19: Error while parsing array: expected a value or ']', saw '}'"),
            ("date-time without an hour", "a = 1979-05-27T:\n", ":1:16: Error while parsing date-time: expected a 2-digit hour after 'T', saw ':'"),
            ("NUL", "[log]\nlevel = \"info\"\u{0}\n", ":2:15: NUL characters (U+0000) are not allowed in TOML"),
        ]
        for (index, testCase) in cases.enumerated() {
            let path = try write("crasher-\(index).toml", testCase.text)
            let result = try Command.run([reachd, "--check-config", path])
            XCTAssertEqual(result.status, 1, testCase.name)
            XCTAssertEqual(result.stdout, "", testCase.name)
            XCTAssertEqual(result.stderr, path + testCase.stderr + "\n", testCase.name)
        }
    }

    func testRefusesToStartWithABadConfiguration() throws {
        try requireBuiltTools()
        let bad = try write("bad.toml", "[netlink]\nreceive-buffer-size = 12\n")
        let socket = directory.appendingPathComponent("reachd.sock").path
        let result = try Command.run([reachd, "--config", bad, "--socket", socket], environment: ["JOURNAL_STREAM": ""])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(
            result.stderr.contains(" critical reachd: \(bad):2: netlink.receive-buffer-size: 12 is out of range"), result.stderr
        )
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket))

        let missing = try Command.run([reachd, "--config", directory.appendingPathComponent("none.toml").path, "--socket", socket])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("none.toml: no such configuration file"), missing.stderr)
    }

    /// Issue 23: `[probe] url = "http://x:99999/"` passed --check-config, then stopped reachd
    /// at its first probe (SocketAddress traps). Refused now, with the reason.
    func testCheckConfigRefusesUnusableProbeURLs() throws {
        try requireBuiltTools()
        let cases: [(key: String, value: String, message: String)] = [
            ("url", "http://x:99999/", "\"http://x:99999/\" is not a usable http:// or https:// URL: port 99999 is not in 1–65535"),
            ("url", "http://x:65536/", "\"http://x:65536/\" is not a usable http:// or https:// URL: port 65536 is not in 1–65535"),
            ("https-url", "https://x:0/", "\"https://x:0/\" is not a usable http:// or https:// URL: port 0 is not in 1–65535"),
            ("url", "http://user@x/", "\"http://user@x/\" is not a usable http:// or https:// URL: user information before the host"),
            ("url", "http://x/\\u001b[2J", "\"http://x/\\x1b[2J\" is not a usable http:// or https:// URL: character U+001B at byte 9 is not allowed in a URI"),
        ]
        for (index, testCase) in cases.enumerated() {
            let path = try write("url-\(index).toml", "[probe]\n\(testCase.key) = \"\(testCase.value)\"\n")
            let result = try Command.run([reachd, "--check-config", path])
            XCTAssertEqual(result.status, 1, testCase.value)
            XCTAssertEqual(result.stdout, "", testCase.value)
            XCTAssertEqual(result.stderr, "\(path):2: probe.\(testCase.key): \(testCase.message)\n", testCase.value)
        }
    }
}

/// Both binaries report the one version reachd has, the one `GetInfo` serves.
final class VersionTests: XCTestCase {
    func testBothBinariesPrintTheVersion() throws {
        try requireBuiltTools()
        for tool in ["reachd", "reachctl"] {
            let result = try Command.run([Paths.product(tool), "--version"])
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertEqual(result.stdout, ReachdVersion.string + "\n", tool)
        }
        XCTAssertEqual(ServiceInfo.reachd.version, ReachdVersion.string)
    }
}
