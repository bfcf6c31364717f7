import Foundation
import Glibc
import TestSupport
import XCTest

/// A reload accepted a configuration the next start refuses (a pinned
/// certificate that is a FIFO; a metrics `listen` on reachd's own socket path). It is refused
/// now: the running configuration is kept, and `STATUS=` and the log say why.
final class ReloadStartChecksTests: DaemonTestCase {
    func testReloadRefusesWhatTheStartWouldRefuse() async throws {
        try topology.configureIPv4()
        let directory = try temporaryDirectory("reachd-config")
        let config = directory + "/reachd.toml"
        XCTAssertEqual(mkfifo(directory + "/fifo", 0o600), 0)
        try "[log]\nlevel = \"info\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let (daemon, client) = try startDaemon(extraArguments: ["--config", config])
        let bad: [(text: String, reason: String)] = [
            (
                "[probe]\nhttps-url = \"https://probe.example/\"\n[probe.trust]\npinning = \"certificate\"\npinned-certificates = [\"\(directory)/fifo\"]\n",
                "[probe.trust] pinned-certificates: \(directory)/fifo: not a regular file (a FIFO, device or socket)"
            ),
            ("[metrics]\nlisten = \"\(daemon.socketPath)\"\n", "[metrics] listen: \(daemon.socketPath) is reachd's own Varlink socket"),
        ]
        for (text, reason) in bad {
            try text.write(toFile: config, atomically: true, encoding: .utf8)
            kill(daemon.process.processIdentifier, SIGHUP)
            XCTAssertTrue(daemon.notify.waitUntil(timeout: 5) { $0.contains("STATUS=config reload failed: \(reason)") }, "\(daemon.notify.lines)")
            XCTAssertTrue(daemon.process.isRunning)
            XCTAssertTrue(daemon.log.contains("configuration reload refused"), daemon.log)
            let status = try await client.status()
            XCTAssertEqual(status.path.status, .satisfied, "reachd still answers on its socket")
        }
        // Over Varlink too: `reachctl reload` fails with the reason.
        let reloaded = try reachctl(["reload", "--socket", daemon.socketPath])
        XCTAssertEqual(reloaded.status, 1)
        XCTAssertTrue((reloaded.stdout + reloaded.stderr).contains("is reachd's own Varlink socket"), reloaded.stdout + reloaded.stderr)
    }
}
