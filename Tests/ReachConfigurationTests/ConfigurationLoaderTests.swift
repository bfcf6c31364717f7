import Glibc
import ReachConfiguration
import TestSupport
import XCTest

final class ConfigurationLoaderTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = URL(fileURLWithPath: try temporaryDirectory("reachd-config"))
    }

    private func write(_ name: String, _ text: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    func testMissingDefaultFileMeansDefaults() throws {
        let missing = directory.appendingPathComponent("reachd.toml").path
        let loaded = try ConfigurationLoader.load(explicitPath: nil, defaultPath: missing)
        XCTAssertEqual(loaded.configuration, ReachdConfiguration())
        XCTAssertEqual(loaded.source, .defaults)
    }

    func testDefaultFileIsRead() throws {
        let path = try write("reachd.toml", "[log]\nlevel = \"debug\"\n")
        let loaded = try ConfigurationLoader.load(explicitPath: nil, defaultPath: path)
        XCTAssertEqual(loaded.configuration.log.level, .debug)
        XCTAssertEqual(loaded.source, .file(path))
    }

    func testMissingExplicitFileIsAnError() {
        let missing = directory.appendingPathComponent("nope.toml").path
        XCTAssertThrowsError(try ConfigurationLoader.load(explicitPath: missing, defaultPath: "/nonexistent")) { error in
            XCTAssertEqual(error as? ConfigurationError, .notFound(path: missing))
            XCTAssertEqual("\(error)", "\(missing): no such configuration file")
        }
    }

    func testExplicitFileWinsOverTheDefault() throws {
        let fallback = try write("default.toml", "[log]\nlevel = \"error\"\n")
        let explicit = try write("explicit.toml", "[log]\nlevel = \"trace\"\n")
        XCTAssertEqual(try ConfigurationLoader.load(explicitPath: explicit, defaultPath: fallback).configuration.log.level, .trace)
    }

    func testInvalidFileNamesItsPath() throws {
        let path = try write("bad.toml", "[log]\nlevel = \"loud\"\n")
        XCTAssertThrowsError(try ConfigurationLoader.load(explicitPath: path)) { error in
            XCTAssertTrue("\(error)".hasPrefix("\(path):2: log.level: "), "\(error)")
        }
    }

    func testUnreadableInputs() throws {
        let notUTF8 = directory.appendingPathComponent("binary.toml")
        try Data([0x5B, 0xFF, 0xFE, 0x5D]).write(to: notUTF8)
        // A FIFO nobody writes to: refused at once, never waited on.
        let fifo = directory.appendingPathComponent("fifo.toml").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let huge = directory.appendingPathComponent("huge.toml")
        try Data(repeating: UInt8(ascii: "#"), count: (1 << 20) + 1).write(to: huge)
        let cases: [(path: String, reason: String)] = [
            (directory.path, "not a regular file"),
            (fifo, "not a regular file"),
            (notUTF8.path, "not UTF-8 text"),
            (huge.path, "larger than 1 MiB"),
        ]
        for testCase in cases {
            XCTAssertThrowsError(try ConfigurationLoader.load(explicitPath: testCase.path)) { error in
                XCTAssertEqual(error as? ConfigurationError, .unreadable(path: testCase.path, reason: testCase.reason))
            }
        }
    }
}
