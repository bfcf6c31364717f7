import Foundation
import Glibc
import ReachClient
import ReachProtocol
import ReachabilityCore
import TestSupport
import XCTest

/// `supportsDNS` when resolv.conf is rewritten in place where reachd's directory watch cannot
/// see it: through the bind mount `ip netns exec` puts over /etc/resolv.conf (as Docker,
/// podman and nspawn do), or through another name of the same file. The ground truth is a
/// name resolved in the host namespace through the server the file names (a stub in the
/// router namespace), and the file's own content.
final class ResolverBindMountTests: DaemonTestCase {
    private var stub: Process?

    override func tearDown() {
        // SIGKILL: the stub inherits a signal mask that holds SIGTERM.
        if let stub { kill(stub.processIdentifier, SIGKILL) }
        stub?.waitUntilExit()
        stub = nil
        super.tearDown()
    }

    /// reachd runs under `ip netns exec`, reading /etc/resolv.conf, which is the bind-mounted
    /// /etc/netns/HOST/resolv.conf; another `ip netns exec` writes it the way dhclient-script
    /// does (`cat >`, the same inode), adding the nameserver line and then removing it.
    func testInPlaceWritesThroughTheNamespacesBindMountAreFollowed() async throws {
        try topology.configureIPv4()
        try topology.hostFiles(hosts: "127.0.0.1 localhost\n", nsswitch: "hosts: files dns\n", resolvConf: "# no nameserver yet\n")
        stub = try topology.launchRouterServer("dns_stub.py", ["10.77.0.1", "answer"])
        let (daemon, client) = try startDaemon(extraArguments: ["--resolv-conf", "/etc/resolv.conf"])
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "no nameserver at start") { $0.status == .satisfied && !$0.supportsDNS }
        XCTAssertNil(try resolved("bind.test"), "no server configured: the name does not resolve")
        let original = try inode()
        print("before: \(try statusLine(daemon, "DNS")); \(try checkLine(daemon, "bind.test"))")

        try writeInNamespace("nameserver 10.77.0.1\n")
        XCTAssertEqual(try inode(), original, "written in place, not replaced")
        XCTAssertEqual(try topology.host.exec(["cat", "/etc/resolv.conf"]), "nameserver 10.77.0.1\n", "what reachd reads")
        XCTAssertEqual(try resolved("bind.test"), "10.77.0.1", "the name resolves through the server the file names")
        _ = await expectPath(recorder, "the nameserver written through the bind mount") { $0.supportsDNS }
        let added = try statusLine(daemon, "DNS")
        XCTAssertEqual(added, "DNS: yes")
        let check = try checkLine(daemon, "bind.test")
        XCTAssertTrue(check.hasPrefix("bind.test: reachable"), check)
        print("after adding the nameserver: \(added); \(check)")

        try writeInNamespace("# nameserver removed\n")
        XCTAssertEqual(try inode(), original, "written in place, not replaced")
        XCTAssertNil(try resolved("bind.test"), "no server configured again")
        _ = await expectPath(recorder, "the nameserver removed through the bind mount") { $0.status == .satisfied && !$0.supportsDNS }
        let removed = try statusLine(daemon, "DNS")
        XCTAssertEqual(removed, "DNS: no")
        print("after removing it: \(removed)")
    }

    /// A link re-pointed by rename, then its new target rewritten in place through another
    /// name (a hard link, as a bind mount's source is), then that target replaced by rename
    /// and the new file rewritten in place: every step is followed.
    func testRenamesAndLinkRetargetsAreFollowedAndSoAreInPlaceWritesAfterThem() async throws {
        try topology.configureIPv4()
        let base = try temporaryDirectory("reachd-resolv-bind")
        for directory in ["etc", "run/first", "run/second", "elsewhere"] {
            try FileManager.default.createDirectory(atPath: base + "/" + directory, withIntermediateDirectories: true)
        }
        let link = base + "/etc/resolv.conf"
        let second = base + "/run/second/resolv.conf"
        try "# no servers\n".write(toFile: base + "/run/first/resolv.conf", atomically: true, encoding: .utf8)
        try "nameserver 192.0.2.53\n".write(toFile: second, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: base + "/run/first/resolv.conf")
        let (_, client) = try startDaemon(extraArguments: ["--resolv-conf", link])
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "no server in the first target") { $0.status == .satisfied && !$0.supportsDNS }

        try FileManager.default.createSymbolicLink(atPath: link + ".new", withDestinationPath: second)
        XCTAssertEqual(rename(link + ".new", link), 0)
        _ = await expectPath(recorder, "the link re-pointed at a file with a server") { $0.supportsDNS }

        // The new target rewritten in place through a name in a directory nobody watches.
        XCTAssertEqual(Glibc.link(second, base + "/elsewhere/alias"), 0)
        try rewrite(base + "/elsewhere/alias", "# servers gone\n")
        XCTAssertEqual(try String(contentsOfFile: link, encoding: .utf8), "# servers gone\n")
        _ = await expectPath(recorder, "the new target rewritten through another name") { $0.status == .satisfied && !$0.supportsDNS }

        // The target replaced by rename, then the new file rewritten in place the same way.
        try "nameserver 192.0.2.54\n".write(toFile: second, atomically: true, encoding: .utf8)
        _ = await expectPath(recorder, "the target replaced by rename") { $0.supportsDNS }
        XCTAssertEqual(Glibc.link(second, base + "/elsewhere/alias2"), 0)
        try rewrite(base + "/elsewhere/alias2", "# gone again\n")
        _ = await expectPath(recorder, "the replacing file rewritten through another name") { $0.status == .satisfied && !$0.supportsDNS }
        // The replaced file, still linked elsewhere, no longer counts.
        try rewrite(base + "/elsewhere/alias", "nameserver 192.0.2.55\n")
        try await Task.sleep(for: .milliseconds(300))
        XCTAssertEqual(recorder.latest?.supportsDNS, false, "a file the link no longer leads to")
    }

    /// A process rewriting resolv.conf in a loop, a server on and off: reachd reads it at
    /// most once per rest of its watch, so the published answer changes a few times a second
    /// at most, and the last write is seen.
    func testAProcessRewritingTheFileInALoopIsCoalesced() async throws {
        try topology.configureIPv4()
        try topology.hostFiles(hosts: "127.0.0.1 localhost\n", nsswitch: "hosts: files dns\n", resolvConf: "# none\n")
        let (daemon, client) = try startDaemon(extraArguments: ["--resolv-conf", "/etc/resolv.conf"])
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "no nameserver at start") { $0.status == .satisfied && !$0.supportsDNS }
        let before = try await client.status().sequence

        let started = ContinuousClock.now
        let storm = try topology.host.exec(["sh", "-c", """
            i=0; while [ $i -lt 4000 ]; do
              printf 'nameserver 10.77.0.1\\n' > /etc/resolv.conf; printf '# none\\n' > /etc/resolv.conf; i=$((i+1))
            done; printf 'nameserver 10.77.0.1\\n' > /etc/resolv.conf; echo done
            """])
        let elapsed = ContinuousClock.now - started
        XCTAssertEqual(storm, "done\n")
        _ = await expectPath(recorder, "the last write is seen", timeout: 2) { $0.supportsDNS }
        let changes = try await client.status().sequence - before
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("8001 writes in \(seconds) s: \(changes) published changes")
        XCTAssertGreaterThan(changes, 0)
        // One read per 100 ms rest (each may flip the answer), plus the last one.
        XCTAssertLessThanOrEqual(Double(changes), seconds * 10 + 3, "reachd read the file about once per rest, not per write")
        XCTAssertTrue(daemon.process.isRunning)
    }

    // MARK: Helpers

    /// Writes `text` over /etc/resolv.conf in the host namespace's mount view (the bind
    /// mount `ip netns exec` makes), truncating it in place as `cat >` does.
    private func writeInNamespace(_ text: String) throws {
        _ = try topology.host.exec(["sh", "-c", "printf '\(text.replacingOccurrences(of: "\n", with: "\\n"))' > /etc/resolv.conf"])
    }

    /// The inode of the file bound over the namespace's /etc/resolv.conf.
    private func inode() throws -> String {
        try topology.host.exec(["stat", "-L", "-c", "%i", "/etc/resolv.conf"])
    }

    /// The IPv4 address `name` resolves to in the host namespace (its resolv.conf, its
    /// nsswitch.conf), or nil when it does not resolve.
    private func resolved(_ name: String) throws -> String? {
        let result = try Command.run(["ip", "netns", "exec", topology.host.name, "getent", "ahostsv4", name])
        guard result.status == 0 else { return nil }
        return result.stdout.split(separator: " ").first.map(String.init)
    }

    /// The line of `reachctl status` that starts with `label`, its padding squeezed.
    private func statusLine(_ daemon: DaemonProcess, _ label: String) throws -> String {
        let status = try reachctl(["status", "--socket", daemon.socketPath])
        let line = status.stdout.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(label + ":") }
        return line.map { $0.split(separator: " ").joined(separator: " ") } ?? "(no \(label) line in: \(status.stdout))"
    }

    /// What `reachctl check NAME` prints.
    private func checkLine(_ daemon: DaemonProcess, _ name: String) throws -> String {
        try reachctl(["check", name, "--socket", daemon.socketPath]).stdout.trimmingCharacters(in: .newlines)
    }

    /// Truncates `path` and writes `text` in place.
    private func rewrite(_ path: String, _ text: String) throws {
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(text.utf8))
        try handle.close()
    }
}
