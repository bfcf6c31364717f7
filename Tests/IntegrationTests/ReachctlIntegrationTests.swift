import Foundation
import LinuxSystem
import ReachProtocol
import ReachabilityCore
import TestSupport
import XCTest

/// `reachctl` as a user runs it: output, JSON, exit codes, error lines.
final class ReachctlIntegrationTests: DaemonTestCase {
    /// One line saying why, then one hint saying what to start.
    func testNoDaemonIsOneLineAndAHintAndExitTwo() throws {
        let missing = try temporaryDirectory("reachd-none") + "/sock"
        for arguments in [["status", "--socket", missing], ["--socket", missing, "interfaces"], ["--socket", missing, "watch"]] {
            let result = try reachctl(arguments)
            XCTAssertEqual(result.status, 2, "\(arguments)")
            XCTAssertEqual(result.stdout, "")
            let lines = result.stderr.split(separator: "\n")
            XCTAssertEqual(lines.count, 2, "one line and a hint: \(result.stderr)")
            XCTAssertTrue(lines.first?.contains(missing) == true, "names the socket: \(result.stderr)")
            XCTAssertEqual(lines.last, "reachctl: hint: start reachd with --socket \(missing), or point reachctl at the socket reachd uses (--socket, $REACHD_SOCKET)")
        }
    }

    /// A socket this user may not reach is "permission denied", naming what refused: the
    /// directory it may not search, or the socket it may not write to. Never "no such socket".
    func testPermissionDeniedNamesWhatRefused() throws {
        try topology.configureIPv4()
        let (daemon, _) = try startDaemon()
        let directory = FileSystem.directory(containing: daemon.socketPath)
        defer { chmod(directory, 0o755); chmod(daemon.socketPath, 0o666) }
        let asNobody = { try Command.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                          Paths.product("reachctl"), "status", "--socket", daemon.socketPath], unset: ["REACHD_SOCKET"]) }
        // The hint reads the refusing path's real mode and owners, and names the setting.
        let cases: [(directoryMode: mode_t, socketMode: mode_t, expected: String, hint: String)] = [
            (0o700, 0o666, "permission denied (may not search \(directory))",
             "the directory \(directory) is rwx------ (0700) root:root: DirectoryMode=0755 in reachd.socket"),
            (0o755, 0o600, "permission denied (no write permission on the socket)",
             "the socket \(daemon.socketPath) is rw------- (0600) root:root: SocketMode=0666 in reachd.socket"),
        ]
        for test in cases {
            chmod(directory, test.directoryMode)
            chmod(daemon.socketPath, test.socketMode)
            let result = try asNobody()
            XCTAssertEqual(result.status, 2, result.stderr)
            let lines = result.stderr.split(separator: "\n").map(String.init)
            XCTAssertEqual(lines.count, 2, result.stderr)
            XCTAssertEqual(lines.first, "reachctl: cannot reach reachd at \(daemon.socketPath): \(test.expected)")
            XCTAssertTrue(lines.last?.hasPrefix("reachctl: hint: \(test.hint)") == true, result.stderr)
        }
    }

    func testStatusInterfacesAndJSON() throws {
        try topology.configureIPv4()
        let (daemon, _) = try startDaemon()
        let human = try reachctl(["--socket", daemon.socketPath])  // default subcommand: status
        XCTAssertEqual(human.status, 0, human.stderr)
        XCTAssertTrue(human.stdout.contains("Reachability: reachableViaWired"), human.stdout)
        XCTAssertTrue(human.stdout.contains("Primary:      eth0 (wiredEthernet)"), human.stdout)
        XCTAssertTrue(human.stdout.contains("Gateways:     10.77.0.1"), human.stdout)

        let json = try reachctl(["status", "--json", "--socket", daemon.socketPath])
        let reply = try JSONDecoder().decode(StatusReply.self, from: Data(json.stdout.utf8))
        XCTAssertEqual(reply.path.primaryInterface, "eth0")

        let filtered = try reachctl(["status", "--json", "--prohibit", "wiredEthernet", "--socket", daemon.socketPath])
        let filteredReply = try JSONDecoder().decode(StatusReply.self, from: Data(filtered.stdout.utf8))
        XCTAssertEqual(filteredReply.path.status, .unsatisfied)

        let interfaces = try reachctl(["interfaces", "--json", "--socket", daemon.socketPath])
        let list = try JSONDecoder().decode(ListInterfacesReply.self, from: Data(interfaces.stdout.utf8))
        XCTAssertEqual(Set(list.interfaces.map(\.name)), ["lo", "eth0"])

        let table = try reachctl(["interfaces", "--socket", daemon.socketPath])
        XCTAssertTrue(table.stdout.hasPrefix("INDEX  NAME"), table.stdout)
        XCTAssertTrue(table.stdout.contains("10.77.0.2/24"), table.stdout)

        let badType = try reachctl(["status", "--interface-type", "carrierPigeon", "--socket", daemon.socketPath])
        XCTAssertEqual(badType.status, 64, "usage error: \(badType.stderr)")
    }

    func testWatchPrintsALinePerChange() throws {
        try topology.configureIPv4()
        let (daemon, _) = try startDaemon()
        let out = Pipe()
        let process = try launchReachctl(["watch", "--json", "--socket", daemon.socketPath], stdout: out)
        // The first line (the path at once) before the change, however slow reachctl starts.
        var first = Data()
        while !first.contains(UInt8(ascii: "\n")) {
            let more = out.fileHandleForReading.availableData
            if more.isEmpty { break }  // reachctl ended
            first.append(more)
        }
        try topology.host.ip("route", "del", "default")
        usleep(300_000)
        daemon.terminate()  // watch ends when the daemon goes away
        process.waitUntilExit()
        first.append(out.fileHandleForReading.readDataToEndOfFile())
        let lines = String(decoding: first, as: UTF8.self).split(separator: "\n")
        XCTAssertEqual(lines.count, 2, "\(lines)")
        let replies = try lines.map { try JSONDecoder().decode(StatusReply.self, from: Data($0.utf8)) }
        XCTAssertEqual(replies.map(\.path.status), [.satisfied, .unsatisfied])
        XCTAssertEqual(replies.last?.changes?.contains(.status), true)
        XCTAssertEqual(process.terminationStatus, 1, "the daemon went away")
    }
}
