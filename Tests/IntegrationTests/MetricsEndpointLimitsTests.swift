import Foundation
import TestSupport
import XCTest

/// Slow connections must not keep a scraper from the metrics endpoint. A peer (one source
/// address on TCP, one uid on a Unix socket) holds connections that send their request head
/// one byte every half second and reconnect whenever reachd ends them; a scraper scrapes
/// meanwhile, each scrape with a 2 s timeout. At a cap, a new connection evicts the peer's
/// oldest one still sending its head, so the slow ones cut each other and never the scraper,
/// even from the scraper's own address (docs/performance.md, "The metrics endpoint under slow clients").
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
        // The pressure was real: three times the per-peer cap kept coming back, and the cap cut them.
        XCTAssertGreaterThan(outcome["slow_connections"] ?? 0, 12, "\(outcome)")
        XCTAssertGreaterThan(outcome["counted_per_peer"] ?? 0, 0, "evictions count under the per-peer cap: \(outcome)")
        let log = daemon?.log ?? ""
        XCTAssertTrue(
            log.contains("closed a metrics connection of 127.0.0.2 still sending its request head, to admit one of 127.0.0.2: limit on metrics connections per peer reached"),
            "evictions are logged: \(log.suffix(2000))"
        )
    }

    /// Slow connections below the cap are evicted by nobody: the head deadline cuts them.
    func testSlowHeadsBelowTheCapAreCutAtTheDeadline() throws {
        try topology.configureIPv4()
        try topology.host.ip("link", "set", "lo", "up")
        try start(listen: "127.0.0.1:9799")
        let outcome = try run(["tcp", "127.0.0.1:9799", "127.0.0.2", "3", "20", "5"])
        XCTAssertEqual(outcome["ok"], 20, "every scrape succeeds: \(outcome)")
        // Held until the 3 s deadline, not cut sooner and not let go on.
        XCTAssertGreaterThan(outcome["longest_held"] ?? 0, 2, "\(outcome)")
        XCTAssertLessThan(outcome["longest_held"] ?? .infinity, 5, "\(outcome)")
        XCTAssertGreaterThan(outcome["counted_head_deadline"] ?? 0, 0, "\(outcome)")
        XCTAssertEqual(outcome["counted_per_peer"], 0, "three of a cap of four: \(outcome)")
        let log = daemon?.log ?? ""
        XCTAssertTrue(log.contains("closed a metrics connection of 127.0.0.2: no request within"), "slow heads are cut: \(log.suffix(2000))")
        XCTAssertFalse(log.contains("still sending its request head"), "nobody was evicted: \(log.suffix(2000))")
    }

    /// 127.0.0.1 is every local program's address, so slow connections from it share the
    /// scraper's peer: eight of them (twice the per-peer cap) dribble their heads and
    /// reconnect whenever cut, while a scraper from 127.0.0.1 (Prometheus, node_exporter)
    /// scrapes 20 times in 20 s.
    func testSlowConnectionsFromTheScrapersOwnAddressLeaveItServed() throws {
        try topology.configureIPv4()
        try topology.host.ip("link", "set", "lo", "up")
        try start(listen: "127.0.0.1:9799")
        let outcome = try run(["tcp", "127.0.0.1:9799", "127.0.0.1", "8", "20", "20"])
        XCTAssertGreaterThanOrEqual(outcome["ok"] ?? 0, 19, "a new connection evicts a slow one instead of being refused: \(outcome)")
        // The pressure was real: the slow ones kept coming back, and the cap cut them to make room.
        XCTAssertGreaterThan(outcome["slow_connections"] ?? 0, 8, "\(outcome)")
        XCTAssertGreaterThan(outcome["counted_per_peer"] ?? 0, 0, "\(outcome)")
        XCTAssertTrue(
            (daemon?.log ?? "").contains("closed a metrics connection of 127.0.0.1 still sending its request head, to admit one of 127.0.0.1"),
            "evictions are logged"
        )
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
        XCTAssertGreaterThan(outcome["counted_per_peer"] ?? 0, 0, "the slow user met its cap: \(outcome)")
        XCTAssertTrue((daemon?.log ?? "").contains("closed a metrics connection of uid 65534 still sending its request head"), "the slow user's connections were evicted")
    }
}
