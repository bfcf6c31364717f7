import Foundation
import Glibc
import LinuxSystem
import Logging
@testable import ReachDaemon
import TestSupport
import XCTest


/// The resolver watch re-reads only for events about entries on the way to its files:
/// `DirectoryWatch.parse` (the inotify records), `Events.mayConcern` and
/// `ResolverWatcher.relevantNames` (the decision), and both against a real inotify instance.
final class ResolverWatcherTests: XCTestCase {
    // MARK: inotify records

    /// One `inotify_event` as read(2) returns it: the 16-byte header, then the name padded
    /// with NULs to `length` bytes.
    private func record(_ name: String, length: Int? = nil, mask: UInt32 = 0x100) -> [UInt8] {
        let bytes = Array(name.utf8)
        let length = length ?? (bytes.isEmpty ? 0 : (bytes.count + 1 + 15) / 16 * 16)
        var header: [UInt8] = []
        for value in [UInt32(1), mask, 0, UInt32(length)] {
            header += withUnsafeBytes(of: value.littleEndian, Array.init)
        }
        return header + bytes + Array(repeating: 0, count: max(0, length - bytes.count))
    }

    func testInotifyRecordsAreReadIntoNamesAndUnnamedEvents() {
        let cases: [(String, [UInt8], DirectoryWatch.Events)] = [
            ("nothing read", [], DirectoryWatch.Events()),
            ("one named event", record("resolv.conf"), DirectoryWatch.Events(names: ["resolv.conf"])),
            ("two events, one name twice", record("a.log") + record("resolv.conf") + record("a.log"),
             DirectoryWatch.Events(names: ["a.log", "resolv.conf"])),
            ("a name that fills its padding exactly", record("0123456789abcdef", length: 16),
             DirectoryWatch.Events(names: ["0123456789abcdef"])),
            ("an event about the directory itself (IN_IGNORED)", record("", mask: 0x8000),
             DirectoryWatch.Events(unnamed: true)),
            ("a queue overflow, then a name", record("", mask: 0x4000) + record("x"),
             DirectoryWatch.Events(names: ["x"], unnamed: true)),
            ("a header cut short", record("a") + Array(record("b").prefix(10)),
             DirectoryWatch.Events(names: ["a"], unnamed: true)),
            ("a name cut short", Array(record("resolv.conf").prefix(20)), DirectoryWatch.Events(unnamed: true)),
        ]
        for (label, bytes, expected) in cases {
            var events = DirectoryWatch.Events()
            DirectoryWatch.parse(bytes[...], into: &events)
            XCTAssertEqual(events, expected, label)
        }
    }

    // MARK: The decision

    func testOnlyEventsAboutEntriesOnTheWayCountAsConcerningTheFiles() {
        let relevant: Set<String> = ["etc", "resolv.conf", "run", "systemd", "resolve"]
        let cases: [(String, DirectoryWatch.Events, Bool)] = [
            ("no events", DirectoryWatch.Events(), false),
            ("the file replaced", DirectoryWatch.Events(names: ["resolv.conf"]), true),
            ("a missing directory created", DirectoryWatch.Events(names: ["resolve"]), true),
            ("a log file beside it", DirectoryWatch.Events(names: ["reachd.log"]), false),
            ("a rename's temporary file alone", DirectoryWatch.Events(names: ["resolv.conf.tmp"]), false),
            ("unrelated files and the file", DirectoryWatch.Events(names: ["mtab", "resolv.conf"]), true),
            ("events were lost", DirectoryWatch.Events(names: ["mtab"], unnamed: true), true),
        ]
        for (label, events, expected) in cases {
            XCTAssertEqual(events.mayConcern(relevant), expected, label)
        }
    }

    func testAPathsNameIsItsLastComponent() {
        let cases: [(String, String)] = [
            ("/run/reachd/io.reachd.Reachability", "io.reachd.Reachability"), ("/c", "c"), ("c", "c"), ("a/b", "b"),
        ]
        for (path, name) in cases {
            XCTAssertEqual(FileSystem.name(of: path), name, path)
        }
    }

    func testTheRelevantNamesFollowSymbolicLinks() throws {
        let base = try temporaryDirectory("reachd-resolver-names")
        try FileManager.default.createDirectory(atPath: base + "/etc", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: base + "/run/first", withIntermediateDirectories: true)
        try "".write(toFile: base + "/run/first/stub.conf", atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: base + "/etc/resolv.conf", withDestinationPath: "../run/first/stub.conf")

        let chain = [base + "/etc/resolv.conf", base + "/missing/upstream.conf"].flatMap(ResolverWatcher.chain(of:))
        let names = ResolverWatcher.relevantNames(along: chain)
        for name in ["etc", "resolv.conf", "run", "first", "stub.conf", "missing", "upstream.conf"] {
            XCTAssertTrue(names.contains(name), "\(name) in \(names.sorted())")
        }
        XCTAssertFalse(names.contains("other.log"))
    }

    // MARK: Against the kernel

    func testARealWatchNamesWhatChangedAndTheResolverIgnoresTheRest() throws {
        let directory = try temporaryDirectory("reachd-resolver-watch")
        let resolvConf = directory + "/resolv.conf"
        // resolv.conf is a hard link to a file in a directory nobody watches, so the test can
        // change what it reads without an event that names it.
        try FileManager.default.createDirectory(atPath: directory + "/unwatched", withIntermediateDirectories: true)
        let otherName = directory + "/unwatched/content"
        try "# no servers\n".write(toFile: otherName, atomically: false, encoding: .utf8)
        XCTAssertEqual(link(otherName, resolvConf), 0)
        let resolver = ResolverWatcher(
            resolvConfPath: resolvConf, resolvedUpstreamPath: directory + "/absent/resolv.conf", logger: Logger(label: "test")
        )
        let watch = try XCTUnwrap(resolver.watch)
        XCTAssertFalse(resolver.hasNameserver)

        // A server now, written through the other name; then a log file written beside
        // resolv.conf: named, and of no concern, so the file is not read again.
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: otherName))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data("nameserver 192.0.2.1\n".utf8))
        try handle.close()
        try "a line\n".write(toFile: directory + "/reachd.log", atomically: false, encoding: .utf8)
        XCTAssertFalse(resolver.handleEvents(), "an unrelated file is no reason to read resolv.conf")
        XCTAssertFalse(resolver.hasNameserver)

        // resolv.conf replaced by rename, as managers do: read again.
        try "nameserver 192.0.2.53\n".write(toFile: resolvConf, atomically: true, encoding: .utf8)
        XCTAssertTrue(resolver.handleEvents(), "the new file is read")
        XCTAssertTrue(resolver.hasNameserver)

        // What the kernel reports, read directly.
        try "again\n".write(toFile: directory + "/other.log", atomically: false, encoding: .utf8)
        XCTAssertEqual(watch.drain(), DirectoryWatch.Events(names: ["other.log"]))
        XCTAssertEqual(watch.drain(), DirectoryWatch.Events(), "drained")
    }
}
