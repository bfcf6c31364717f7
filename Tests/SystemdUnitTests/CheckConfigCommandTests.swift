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

    /// Text that made TOMLKit's parser abort (exit 134) is a located syntax error: exit 1.
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

    /// `[probe] url = "http://x:99999/"` passed --check-config, then stopped reachd
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

extension CheckConfigCommandTests {
    /// These passed --check-config ("ok"), then reachd exited 1 at its
    /// next start (or, for `listen` on its own socket path, replaced its own socket). Now
    /// --check-config refuses each, naming the file, as the start does (one function checks
    /// for both; the reload too).
    func testCheckConfigChecksWhatTheStartChecks() throws {
        try requireBuiltTools()
        let d = directory.path
        XCTAssertEqual(mkfifo(d + "/fifo", 0o600), 0)
        try FileManager.default.createDirectory(atPath: d + "/directory", withIntermediateDirectories: false)
        XCTAssertTrue(FileManager.default.createFile(atPath: d + "/huge", contents: nil))
        XCTAssertEqual(truncate(d + "/huge", 1 << 30), 0)
        try FileManager.default.createSymbolicLink(atPath: d + "/loop", withDestinationPath: d + "/loop")
        try """
            -----BEGIN PRIVATE KEY-----
            MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgsYWUpmE7GxS/uBCY
            10j6tXDKJ6a5FYJ5BzK1ir2GQaShRANCAATvVDKKAidDRP5TCEMrnocqunkbvHdx
            bzdZqNFhub3Zyud4cYM7LGcBrP1xtVK6awH27LHVyb3wgTGJ8BNHMsxa
            -----END PRIVATE KEY-----

            """.write(toFile: d + "/key.pem", atomically: true, encoding: .utf8)
        try "".write(toFile: d + "/regular", atomically: true, encoding: .utf8)
        let socket = d + "/reachd.sock"
        func pinned(_ file: String) -> String {
            "[probe]\nhttps-url = \"https://probe.example/\"\n[probe.trust]\npinning = \"certificate\"\npinned-certificates = [\"\(file)\"]\n"
        }
        let cases: [(name: String, text: String, problem: String)] = [
            ("a FIFO", pinned(d + "/fifo"), "[probe.trust] pinned-certificates: \(d)/fifo: not a regular file (a FIFO, device or socket)"),
            ("/dev/zero", pinned("/dev/zero"), "[probe.trust] pinned-certificates: /dev/zero: not a regular file (a FIFO, device or socket)"),
            ("a directory", pinned(d + "/directory"), "[probe.trust] pinned-certificates: \(d)/directory: a directory, not a certificate file"),
            ("1 GiB", pinned(d + "/huge"), "[probe.trust] pinned-certificates: \(d)/huge: larger than 4 MiB"),
            ("a symlink loop", pinned(d + "/loop"), "[probe.trust] pinned-certificates: \(d)/loop: a loop of symbolic links"),
            ("missing", pinned(d + "/missing"), "[probe.trust] pinned-certificates: \(d)/missing: cannot read: No such file or directory"),
            ("a private key", pinned(d + "/key.pem"), "[probe.trust] pinned-certificates: \(d)/key.pem: no certificate in the PEM"),
            (
                "the API's pins too", "[captive-portal]\nfetch-api = true\n[captive-portal.trust]\npinning = \"certificate\"\npinned-certificates = [\"\(d)/fifo\"]\n",
                "[captive-portal.trust] pinned-certificates: \(d)/fifo: not a regular file (a FIFO, device or socket)"
            ),
            ("listen, missing directory", "[metrics]\nlisten = \"\(d)/none/m.sock\"\n", "[metrics] listen: \(d)/none/m.sock: the directory \(d)/none does not exist"),
            ("listen, a regular file", "[metrics]\nlisten = \"\(d)/regular\"\n", "[metrics] listen: \(d)/regular exists and is not a socket"),
            ("listen, unassigned", "[metrics]\nlisten = \"192.0.2.1:9799\"\n", "[metrics] listen: cannot bind 192.0.2.1:9799: no interface has this address"),
            ("listen, reachd's socket", "[metrics]\nlisten = \"\(socket)\"\n", "[metrics] listen: \(socket) is reachd's own Varlink socket"),
        ]
        for (index, testCase) in cases.enumerated() {
            let path = try write("start-\(index).toml", testCase.text)
            let result = try Command.run([reachd, "--check-config", path, "--socket", socket])
            XCTAssertEqual(result.status, 1, testCase.name)
            XCTAssertEqual(result.stdout, "", testCase.name)
            XCTAssertEqual(result.stderr, "\(path): \(testCase.problem)\n", testCase.name)
        }
        // The start refuses the same, with the same words, before it touches the network or the socket.
        let path = try write("start-fifo.toml", cases[0].text)
        let start = try Command.run([reachd, "--config", path, "--socket", socket], environment: ["JOURNAL_STREAM": ""])
        XCTAssertEqual(start.status, 1)
        XCTAssertTrue(start.stderr.contains(" critical reachd: \(cases[0].problem)"), start.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket))
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
