import Foundation
import Glibc
import LinuxSystem
import Logging
@testable import ReachDaemon
import TestSupport
import XCTest


/// The resolver watch re-reads only for events about entries on the way to its files or
/// writes to the files themselves: `DirectoryWatch.parse` (the inotify records),
/// `Events.mayConcern`, `ResolverWatcher.relevantNames` and `response(to:along:)` (the
/// decisions), and both against a real inotify instance.
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
            ("a watched file rewritten in place (IN_CLOSE_WRITE, no name)", record("", mask: 0x8), DirectoryWatch.Events(rewritten: true)),
            ("a file in a watched directory rewritten (named)", record("resolv.conf", mask: 0x8),
             DirectoryWatch.Events(names: ["resolv.conf"])),
            ("a watched file's links or mode changed (IN_ATTRIB)", record("", mask: 0x4), DirectoryWatch.Events(unnamed: true)),
            ("a watched file removed (IN_DELETE_SELF, then IN_IGNORED)", record("", mask: 0x400) + record("", mask: 0x8000),
             DirectoryWatch.Events(unnamed: true)),
            ("a watched file moved (IN_MOVE_SELF)", record("", mask: 0x800), DirectoryWatch.Events(unnamed: true)),
            ("rewritten, then a queue overflow", record("", mask: 0x8) + record("", mask: 0x4000),
             DirectoryWatch.Events(unnamed: true, rewritten: true)),
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

    func testARewriteInPlaceIsReadAndAChangeOnTheWayIsFollowed() {
        let relevant: Set<String> = ["etc", "resolv.conf", "run", "systemd", "resolve"]
        let cases: [(String, DirectoryWatch.Events, ResolverWatcher.Response)] = [
            ("no events", DirectoryWatch.Events(), .ignore),
            ("a log file beside it", DirectoryWatch.Events(names: ["reachd.log"]), .ignore),
            ("written through a bind mount or another name", DirectoryWatch.Events(rewritten: true), .reread),
            ("rewritten, and a log file beside it", DirectoryWatch.Events(names: ["reachd.log"], rewritten: true), .reread),
            ("replaced by rename", DirectoryWatch.Events(names: ["resolv.conf"]), .follow),
            ("written in place, its directory watched too", DirectoryWatch.Events(names: ["resolv.conf"], rewritten: true), .follow),
            ("a link on the way re-pointed", DirectoryWatch.Events(names: ["resolve"]), .follow),
            ("the file removed or its mode changed", DirectoryWatch.Events(unnamed: true), .follow),
            ("events were lost", DirectoryWatch.Events(names: ["mtab"], unnamed: true, rewritten: true), .follow),
        ]
        for (label, events, expected) in cases {
            XCTAssertEqual(ResolverWatcher.response(to: events, along: relevant), expected, label)
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
        // resolv.conf is a hard link to a file in a directory nobody watches: a write through
        // that name reaches only the inode, as one through a bind mount does.
        try FileManager.default.createDirectory(atPath: directory + "/unwatched", withIntermediateDirectories: true)
        let otherName = directory + "/unwatched/content"
        try "# no servers\n".write(toFile: otherName, atomically: false, encoding: .utf8)
        XCTAssertEqual(link(otherName, resolvConf), 0)
        let resolver = ResolverWatcher(
            resolvConfPath: resolvConf, resolvedUpstreamPath: directory + "/absent/resolv.conf", logger: Logger(label: "test")
        )
        let watch = try XCTUnwrap(resolver.watch)
        XCTAssertFalse(resolver.hasNameserver)

        // A server now, written in place through the other name: seen on the file's inode.
        try rewrite(otherName, "nameserver 192.0.2.1\n")
        XCTAssertTrue(resolver.handleEvents(), "a write through another name is read")
        XCTAssertTrue(resolver.hasNameserver)

        // A log file written beside resolv.conf: named, and of no concern, so the file is not
        // read again (the content changed meanwhile without an event, to tell).
        try "a line\n".write(toFile: directory + "/reachd.log", atomically: false, encoding: .utf8)
        XCTAssertFalse(resolver.handleEvents(), "an unrelated file is no reason to read resolv.conf")
        try rewrite(otherName, "# no servers\n")
        XCTAssertTrue(resolver.handleEvents())
        XCTAssertFalse(resolver.hasNameserver)

        // resolv.conf replaced by rename, as managers do: read again, and the watch moves to
        // the new file; the old one (still linked) no longer counts.
        try "nameserver 192.0.2.53\n".write(toFile: resolvConf, atomically: true, encoding: .utf8)
        XCTAssertTrue(resolver.handleEvents(), "the new file is read")
        XCTAssertTrue(resolver.hasNameserver)
        _ = resolver.handleEvents()  // the dropped watch's IN_IGNORED
        try rewrite(otherName, "nameserver 192.0.2.1\n")
        XCTAssertEqual(watch.drain(), DirectoryWatch.Events(), "the replaced file is no longer watched")
        try rewrite(resolvConf, "# none\n")
        XCTAssertTrue(resolver.handleEvents(), "the new file is watched")
        XCTAssertFalse(resolver.hasNameserver)

        // What the kernel reports, read directly.
        try "again\n".write(toFile: directory + "/other.log", atomically: false, encoding: .utf8)
        XCTAssertEqual(watch.drain(), DirectoryWatch.Events(names: ["other.log"]))
        XCTAssertEqual(watch.drain(), DirectoryWatch.Events(), "drained")
    }

    /// A symbolic link re-pointed back and forth between two files: the file watch follows
    /// it, the file left behind wakes nobody, and the watches stay one per directory and file.
    func testARepointedLinksOldFileIsNoLongerWatched() throws {
        let base = try temporaryDirectory("reachd-resolver-relink")
        for directory in ["etc", "run/a", "run/b"] {
            try FileManager.default.createDirectory(atPath: base + "/" + directory, withIntermediateDirectories: true)
        }
        try "nameserver 192.0.2.1\n".write(toFile: base + "/run/a/resolv.conf", atomically: false, encoding: .utf8)
        try "# none\n".write(toFile: base + "/run/b/resolv.conf", atomically: false, encoding: .utf8)
        let link = base + "/etc/resolv.conf"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: base + "/run/a/resolv.conf")
        let resolver = ResolverWatcher(resolvConfPath: link, resolvedUpstreamPath: base + "/absent/upstream", logger: Logger(label: "test"))
        let watch = try XCTUnwrap(resolver.watch)
        XCTAssertTrue(resolver.hasNameserver)
        // /etc, /run/a and the file; the absent upstream's nearest ancestor (base).
        XCTAssertEqual(resolver.watches.count, 4)

        for round in 0..<3 {
            let (now, left) = round % 2 == 0 ? ("b", "a") : ("a", "b")
            try FileManager.default.createSymbolicLink(atPath: link + ".new", withDestinationPath: base + "/run/\(now)/resolv.conf")
            XCTAssertEqual(rename(link + ".new", link), 0)
            XCTAssertTrue(resolver.handleEvents(), "round \(round): the new target is read")
            XCTAssertEqual(resolver.hasNameserver, now == "a")
            _ = resolver.handleEvents()  // the dropped watches' IN_IGNORED

            // The file left behind, written in place: no event at all (neither it nor its
            // directory is watched any more).
            try rewrite(base + "/run/\(left)/resolv.conf", "# rewritten while left behind\n")
            XCTAssertEqual(watch.drain(), DirectoryWatch.Events(), "round \(round): the file left behind is not watched")
            try rewrite(base + "/run/\(left)/resolv.conf", left == "a" ? "nameserver 192.0.2.1\n" : "# none\n")
            _ = watch.drain()

            // The new target, written in place: read.
            try rewrite(base + "/run/\(now)/resolv.conf", now == "a" ? "# none\n" : "nameserver 192.0.2.9\n")
            XCTAssertTrue(resolver.handleEvents(), "round \(round): the new target's rewrite is read")
            XCTAssertEqual(resolver.hasNameserver, now == "b")
            try rewrite(base + "/run/\(now)/resolv.conf", now == "a" ? "nameserver 192.0.2.1\n" : "# none\n")
            XCTAssertTrue(resolver.handleEvents())
            XCTAssertEqual(resolver.watches.count, 4, "round \(round): /etc, /run/\(now), its file, base")
        }
    }

    /// Truncates `path` and writes `text` in place, as `cat >` does.
    private func rewrite(_ path: String, _ text: String) throws {
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(text.utf8))
        try handle.close()
    }
}
