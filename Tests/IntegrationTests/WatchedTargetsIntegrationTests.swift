import Foundation
import ReachClient
import ReachProtocol
import ReachabilityCore
import TestSupport
import XCTest

/// `[targets] watch` on a real kernel: targets the configuration names are watched from
/// start-up on, followed through a route deletion and a reload, and each answer is held
/// against a ping from the same namespace to the same address.
final class WatchedTargetsIntegrationTests: DaemonTestCase {
    private var textfiles = ""

    private func writeConfig(_ path: String, watch: String) throws {
        try "[targets]\nwatch = [\(watch)]\n[metrics]\ntextfile-directory = \"\(textfiles)\"\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Whether one ping from the host namespace gets an answer (the ground truth).
    private func pings(_ address: String) throws -> Bool {
        try Command.run(["ip", "netns", "exec", topology.host.name, "ping", "-n", "-c", "1", "-W", "1", address]).status == 0
    }

    /// reachd's metrics through `reachctl metrics`, as Prometheus' parser reads them, the
    /// target series only.
    private func targetSamples(_ socket: String) throws -> Set<String> {
        let result = try reachctl(["metrics", "--socket", socket])
        XCTAssertEqual(result.status, 0, result.stderr)
        return try PrometheusTools.samples(result.stdout).filter { $0.hasPrefix("reachd_target_") && !$0.hasPrefix("# ") }
    }

    /// Polls the target series until they are `expected` (5 s at most); returns the last read.
    private func waitForSamples(_ socket: String, _ expected: Set<String>) async throws -> Set<String> {
        var samples: Set<String> = []
        for _ in 0..<50 {
            samples = try targetSamples(socket)
            if samples == expected { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTAssertEqual(samples, expected)
        return samples
    }

    func testConfiguredTargetsFollowRoutesAndReloads() async throws {
        try requirePrerequisite(try Command.run(["python3", "-c", "import prometheus_client"]).status == 0,
                                "python3 prometheus_client not available (pip install prometheus-client)")
        try requirePrerequisite(Command.exists("ping"), "ping not available (apt-get install iputils-ping)")
        try topology.configureIPv4(defaultRoute: false)
        // Two hosts behind the router, each reached by a route of its own; db.test is the first by name.
        try topology.router.ipBatch(["addr add 198.51.100.7/32 dev lo", "addr add 203.0.113.9/32 dev lo"])
        try topology.host.ipBatch(["route add 198.51.100.7/32 via 10.77.0.1 dev eth0", "route add 203.0.113.9/32 via 10.77.0.1 dev eth0"])
        try topology.hostFiles(hosts: "127.0.0.1 localhost\n198.51.100.7 db.test\n", nsswitch: "hosts: files\n")
        let config = try temporaryDirectory("reachd-config") + "/reachd.toml"
        textfiles = try temporaryDirectory("reachd-textfile")
        try writeConfig(config, watch: #""db.test", "198.51.100.7", { target = "198.51.100.7", uid = 65534 }"#)
        let (daemon, client) = try startDaemon(extraArguments: ["--config", config])

        // Reachable from the start, by metrics, by status, and by a ping.
        XCTAssertTrue(try pings("198.51.100.7"), "ground truth: the target answers")
        let reachableSeries: Set<String> = [
            #"reachd_target_reachable{target="db.test"} 1"#, #"reachd_target_reachable{target="198.51.100.7"} 1"#,
            #"reachd_target_reachable{target="198.51.100.7",uid="65534"} 1"#,
            #"reachd_target_info{interface="eth0",target="db.test",unsatisfied_reason=""} 1"#,
            #"reachd_target_info{interface="eth0",target="198.51.100.7",unsatisfied_reason=""} 1"#,
            #"reachd_target_info{interface="eth0",target="198.51.100.7",uid="65534",unsatisfied_reason=""} 1"#,
        ]
        _ = try await waitForSamples(daemon.socketPath, reachableSeries)
        let watched = try await client.statusWithTargets().targets
        XCTAssertEqual(watched?.map(\.target), ["db.test", "198.51.100.7", "198.51.100.7"])
        XCTAssertEqual(watched?.map(\.uid), [nil, nil, 65534])
        XCTAssertEqual(watched?.compactMap(\.path?.status), [.satisfied, .satisfied, .satisfied])
        let status = try reachctl(["status", "--socket", daemon.socketPath])
        XCTAssertEqual(status.status, 0, status.stderr)
        print("reachctl status, targets reachable:\n\(status.stdout)")
        XCTAssertTrue(status.stdout.contains("""
            Targets:      db.test: satisfied via eth0
                          198.51.100.7: satisfied via eth0
                          198.51.100.7 (uid 65534): satisfied via eth0
            """), status.stdout)

        // The route goes: every answer says noRoute, and so does the kernel to a ping.
        try topology.host.ip("route", "del", "198.51.100.7/32")
        let unreachable = try await waitForSamples(daemon.socketPath, [
            #"reachd_target_reachable{target="db.test"} 0"#, #"reachd_target_reachable{target="198.51.100.7"} 0"#,
            #"reachd_target_reachable{target="198.51.100.7",uid="65534"} 0"#,
            #"reachd_target_info{interface="",target="db.test",unsatisfied_reason="noRoute"} 1"#,
            #"reachd_target_info{interface="",target="198.51.100.7",unsatisfied_reason="noRoute"} 1"#,
            #"reachd_target_info{interface="",target="198.51.100.7",uid="65534",unsatisfied_reason="noRoute"} 1"#,
        ])
        print("target series after the route was deleted:\n\(unreachable.sorted().joined(separator: "\n"))")
        XCTAssertFalse(try pings("198.51.100.7"), "ground truth: no route, no answer")
        // The textfile is rewritten for a target's change too (the host's path did not change).
        let textfile = try String(contentsOfFile: textfiles + "/reachd.prom", encoding: .utf8)
        XCTAssertTrue(textfile.contains(#"reachd_target_reachable{target="198.51.100.7"} 0"#), textfile)
        XCTAssertTrue(daemon.log.contains("target 198.51.100.7: unsatisfied (noRoute)"), daemon.log)
        XCTAssertTrue(daemon.log.contains("target db.test: satisfied via eth0"), "the first answer is logged too")
        let hostPath = try await client.status()
        XCTAssertEqual(hostPath.sequence, 1, "nothing was published for the host's own path")

        // A reload drops 198.51.100.7 and adds 203.0.113.9, without a restart.
        let instance = hostPath.instance
        try writeConfig(config, watch: #""db.test", "203.0.113.9""#)
        let reload = try reachctl(["reload", "--socket", daemon.socketPath])
        XCTAssertEqual(reload.status, 0, reload.stderr)
        _ = try await waitForSamples(daemon.socketPath, [
            #"reachd_target_reachable{target="db.test"} 0"#, #"reachd_target_reachable{target="203.0.113.9"} 1"#,
            #"reachd_target_info{interface="",target="db.test",unsatisfied_reason="noRoute"} 1"#,
            #"reachd_target_info{interface="eth0",target="203.0.113.9",unsatisfied_reason=""} 1"#,
        ])
        XCTAssertTrue(try pings("203.0.113.9"), "ground truth: the added target answers")
        let after = try await client.statusWithTargets()
        XCTAssertEqual(after.status.instance, instance, "the same daemon run")
        XCTAssertEqual(after.targets?.map(\.target), ["db.test", "203.0.113.9"])
        let reloaded = try reachctl(["status", "--socket", daemon.socketPath])
        print("reachctl status after the reload:\n\(reloaded.stdout)")
        XCTAssertTrue(reloaded.stdout.contains("Targets:      db.test: unsatisfied (noRoute)\n              203.0.113.9: satisfied via eth0"),
                      reloaded.stdout)
        // A client's target stream is not counted among the configuration's, nor they among subscribers.
        let metrics = try reachctl(["metrics", "--socket", daemon.socketPath]).stdout
        XCTAssertTrue(metrics.contains("reachd_subscribers 0"), metrics)
    }
}
