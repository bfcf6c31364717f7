import Foundation
import TestSupport
import XCTest

/// Slow connections from one peer must not keep a scraper from the
/// metrics endpoint. One peer (one source address on TCP, one uid on a Unix socket) holds
/// 12 connections that send their request head one byte every half second and reconnect
/// whenever reachd ends them; a scraper (another peer) scrapes 20 times in 5 s meanwhile,
/// each with a 2 s timeout, and every scrape succeeds. (Before: at most 8 connections in
/// all, each kept 10 s, so the slow peer held every slot; 3 of 29 scrapes succeeded.)
final class MetricsEndpointLimitsTests: DaemonTestCase {
    private func run(_ arguments: [String]) throws -> [String: Double] {
        let script = Paths.repository.appendingPathComponent("Tests/Fixtures/slow_metrics_clients.py").path
        let result = try Command.run(["ip", "netns", "exec", topology.host.name, "python3", script] + arguments)
        XCTAssertEqual(result.status, 0, result.stderr)
        print("slow clients \(arguments): \(result.stdout)")
        let line = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        return (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Double]) ?? [:]
    }

    private func start(listen: String) throws {
        let config = try temporaryDirectory("reachd-config") + "/reachd.toml"
        try "[metrics]\nlisten = \"\(listen)\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        _ = try startDaemon(extraArguments: ["--config", config])
    }

    func testSlowPeerOverTCPLeavesTheScraperServed() throws {
        try topology.configureIPv4()
        try topology.host.ip("link", "set", "lo", "up")
        try start(listen: "127.0.0.1:9799")
        // The slow peer comes from 127.0.0.2 (any 127/8 address is the loopback's), the scraper from 127.0.0.1.
        let outcome = try run(["tcp", "127.0.0.1:9799", "127.0.0.2", "12", "20", "5"])
        XCTAssertEqual(outcome["ok"], 20, "every scrape succeeds: \(outcome)")
        XCTAssertEqual(outcome["failed"], 0, "\(outcome)")
        // The pressure was real: the slow peer got connections and held them until the head deadline.
        XCTAssertGreaterThan(outcome["longest_held"] ?? 0, 2, "\(outcome)")
        let log = daemon?.log ?? ""
        XCTAssertTrue(log.contains("metrics connections per peer"), "refusals are logged: \(log.suffix(2000))")
        XCTAssertTrue(log.contains("no request within"), "slow heads are cut: \(log.suffix(2000))")
    }

    func testSlowUserOverUnixSocketLeavesTheScraperServed() throws {
        try topology.configureIPv4()
        let directory = try temporaryDirectory("reachd-metrics-socket")
        // The slow peer runs as nobody (65534): it must reach the socket (mode 0666) through the directory.
        XCTAssertEqual(chmod(directory, 0o755), 0)
        try start(listen: directory + "/metrics.sock")
        let outcome = try run(["unix", directory + "/metrics.sock", "65534", "12", "20", "5"])
        XCTAssertEqual(outcome["ok"], 20, "every scrape succeeds: \(outcome)")
        XCTAssertEqual(outcome["failed"], 0, "\(outcome)")
        XCTAssertTrue((daemon?.log ?? "").contains("metrics connections per peer"), "the slow user met its cap")
    }
}
