import Foundation
import ReachClient
import ReachProtocol
import TestSupport
import XCTest

/// `reachctl probe` on a daemon with the shipped configuration says why nothing was
/// checked and what to do; doing what the hint says (the key it names, then a restart) makes
/// the next `reachctl probe` check, as the probe server in the router namespace sees.
final class ErrorAdviceIntegrationTests: DaemonTestCase {
    private var server: Process?

    override func tearDown() {
        if let server {
            kill(server.processIdentifier, SIGKILL)  // children of the test runner have SIGTERM blocked
            server.waitUntilExit()
        }
        super.tearDown()
    }

    func testProbeOnTheShippedConfigurationSaysWhatToSet() throws {
        try topology.configureIPv4()
        try topology.hostFiles(hosts: "127.0.0.1 localhost\n10.77.0.1 probe.test\n", nsswitch: "hosts: files\n")
        let work = try temporaryDirectory("reachd-advice")
        let state = work + "/state.json"
        try #"{"http": "204"}"#.write(toFile: state, atomically: true, encoding: .utf8)
        server = try topology.launchRouterServer("probe_server.py", [state])

        // The configuration a default install has.
        let config = work + "/reachd.toml"
        let shipped = try String(contentsOf: Paths.repository.appendingPathComponent("config/reachd.toml"), encoding: .utf8)
        try shipped.write(toFile: config, atomically: true, encoding: .utf8)
        let (daemon, _) = try startDaemon(extraArguments: ["--config", config])

        let refused = try reachctl(["probe", "--socket", daemon.socketPath])
        print("reachctl probe (shipped configuration), exit \(refused.status):\n\(refused.stderr)", terminator: "")
        XCTAssertEqual(refused.status, 69, "EX_UNAVAILABLE, as before: \(refused.stderr)")
        let lines = refused.stderr.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "reachctl: nothing was checked: probing is not configured: the [probe] table of /etc/reachd/reachd.toml sets no url or https-url")
        let hint = try XCTUnwrap(lines.dropFirst().first, refused.stderr)
        XCTAssertTrue(hint.hasPrefix("reachctl: hint: set url = \"http://HOST/generate_204\""), hint)
        XCTAssertTrue(hint.contains("then run: systemctl restart reachd"), hint)
        XCTAssertTrue(readRequests(state).isEmpty, "nothing was sent while probing was off")

        // What the hint says: the key in [probe], then a restart (a reload keeps [probe] as it was).
        let key = try XCTUnwrap(hint.split(separator: " ").dropFirst(3).first, hint)  // "reachctl: hint: set url = …"
        try (shipped.replacingOccurrences(of: "[probe]\n", with: "[probe]\n\(key) = \"http://probe.test/generate_204\"\nfamilies = [\"ipv4\"]\n"))
            .write(toFile: config, atomically: true, encoding: .utf8)
        let reload = try reachctl(["reload", "--socket", daemon.socketPath])
        XCTAssertEqual(reload.status, 0, reload.stderr)
        XCTAssertEqual(try reachctl(["probe", "--socket", daemon.socketPath]).status, 69, "a reload does not turn probing on")
        _ = daemon.terminate()
        let (restarted, _) = try startDaemon(extraArguments: ["--config", config])
        let checked = try reachctl(["probe", "--socket", restarted.socketPath])
        XCTAssertEqual(checked.status, 0, checked.stderr)
        XCTAssertTrue(checked.stdout.contains("eth0: IPv4 full"), checked.stdout)
        XCTAssertTrue(readRequests(state).contains("http /generate_204"), "the probe server saw no check: \(readRequests(state))")
    }

    /// The requests the probe server logged, as "scheme path" lines.
    private func readRequests(_ state: String) -> [String] {
        let text = (try? String(contentsOfFile: state + ".log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { $0.split(separator: " ").dropFirst().joined(separator: " ") }
    }
}
