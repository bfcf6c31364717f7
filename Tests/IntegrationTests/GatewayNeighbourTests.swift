import Foundation
import Glibc
import ReachClient
import ReachProtocol
import ReachabilityCore
import TestSupport
import XCTest

/// The gateway's neighbour entry on a real kernel: host, router and a server behind the
/// router, traffic only between them, `ping` as the ground truth reachd's answer is held to.
/// The host's neighbour timers are shortened so the kernel finds a dead gateway in seconds
/// instead of up to a minute; reachd's part is what follows the kernel's verdict.
final class GatewayNeighbourTests: DaemonTestCase {
    private var server: NetworkNamespace?
    private var traffic: Process?

    override func tearDown() {
        if let traffic, traffic.isRunning { traffic.terminate(); traffic.waitUntilExit() }
        traffic = nil
        server = nil
        super.tearDown()
    }

    /// The router kills its gateway address while the host pings the server: the kernel marks
    /// the entry FAILED, reachd says gatewayUnreachable (still listing eth0), and satisfied
    /// again once the address is back and the kernel resolves it.
    func testDeadGatewayWhileTrafficFlowsIsUnreachableThenRestored() async throws {
        try topology.configureIPv4()
        try addServer()
        XCTAssertTrue(try pings("10.78.0.2", attempts: 3), "ground truth: the server answers through the router")
        let (daemon, client) = try startDaemon()
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "satisfied through the router") { $0.status == .satisfied && $0.gateways == ["10.77.0.1"] }
        try startTraffic(to: "10.78.0.2")
        // Ground truth: the kernel's own notification (with traffic the entry is FAILED only
        // for a moment before the next packet retries it).
        let monitor = Pipe()
        let neighbours = try Command.launch(["ip", "-n", topology.host.name, "monitor", "neigh"], stdout: monitor)
        // SIGTERM does not end `ip monitor` started from the test runner; SIGKILL does.
        defer { kill(neighbours.processIdentifier, SIGKILL); neighbours.waitUntilExit() }
        let events = LineReader(monitor)

        try topology.router.ip("addr", "del", "10.77.0.1/24", "dev", "eth0")
        var failedAt: Date?
        while failedAt == nil, let line = events.next(timeout: .seconds(15)) {
            if line.hasPrefix("10.77.0.1 "), line.contains("FAILED") { failedAt = Date() }
        }
        XCTAssertNotNil(failedAt, "ip monitor neigh showed 10.77.0.1 FAILED")
        let broken = await expectPath(recorder, "gateway unreachable", timeout: 5) { $0.status == .unsatisfied }
        print("gatewayUnreachable \(String(format: "%.3f", Date().timeIntervalSince(failedAt ?? Date()))) s after ip monitor neigh showed FAILED")
        XCTAssertEqual(broken?.unsatisfiedReason, .gatewayUnreachable)
        XCTAssertEqual(broken?.availableInterfaces, ["eth0"], "the interface that remains is still listed")
        XCTAssertEqual(broken?.gateways, ["10.77.0.1"])
        XCTAssertFalse(try pings("10.78.0.2"), "ground truth: nothing gets through the dead gateway")
        let status = try reachctl(["status", "--socket", daemon.socketPath]).stdout
        print(status)
        XCTAssertTrue(status.contains("gateway 10.77.0.1 unreachable"), status)
        let interfaces = try reachctl(["interfaces", "--socket", daemon.socketPath]).stdout
        print(interfaces)
        XCTAssertTrue(interfaces.contains("gateway 10.77.0.1 FAILED since"), interfaces)
        let listed = try await interface("eth0", from: client)
        XCTAssertEqual(listed?.gateways?.map(\.state), [.failed])
        XCTAssertEqual(listed?.gateways?.first?.address, "10.77.0.1")

        try topology.router.ip("addr", "add", "10.77.0.1/24", "dev", "eth0")
        let restored = await expectPath(recorder, "restored", timeout: 10) { $0.status == .satisfied }
        XCTAssertEqual(restored?.gateways, ["10.77.0.1"])
        XCTAssertTrue(try pings("10.78.0.2", attempts: 3), "ground truth: the server answers again")
        print(try reachctl(["status", "--socket", daemon.socketPath]).stdout)
    }

    /// Two IPv6 routers (eth0 metric 100, eth2 metric 200); the first goes deaf to the host
    /// (an nftables ingress drop on its side of eth0, so nothing confirms or answers) while
    /// traffic flows. The kernel's lookup moves to the live router and reachd follows it at
    /// once, never saying unsatisfied.
    func testIPv6MovesToTheLiveRouterAndStaysSatisfied() async throws {
        try topology.configureIPv6(defaultRoute: false)
        try addServer()
        try topology.addPair(hostName: "eth2", routerName: "up2", prefix: "10.79.0", hostAddress: false)
        try topology.router.ip("addr", "add", "fd79::1/64", "dev", "up2", "nodad")
        try topology.host.ip("addr", "add", "fd79::2/64", "dev", "eth2", "nodad")
        try topology.host.ip("-6", "route", "add", "default", "via", "fd77::1", "dev", "eth0", "metric", "100")
        try topology.host.ip("-6", "route", "add", "default", "via", "fd79::1", "dev", "eth2", "metric", "200")
        try shortNeighbourTimers(on: "eth2")
        XCTAssertTrue(try pings("fd78::2", family: "-6", attempts: 3), "ground truth: the server answers through the first router")
        let (daemon, client) = try startDaemon()
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "through the first router") { $0.status == .satisfied && $0.primaryInterface == "eth0" }
        let published = recorder.replies.count
        try startTraffic(to: "fd78::2", family: "-6")

        try requirePrerequisite(Command.exists("nft"), "nft is needed (scripts/bootstrap --test installs nftables)")
        _ = try topology.router.exec(["nft", "add table netdev deaf; add chain netdev deaf in { type filter hook ingress device \"eth0\" priority 0; policy drop; }"])
        let moved = await expectPath(recorder, "through the second router", timeout: 15) { $0.primaryInterface == "eth2" }
        XCTAssertEqual(moved?.status, .satisfied)
        XCTAssertEqual(moved?.gateways, ["fd79::1"])
        XCTAssertTrue(try topology.host.ip("neigh", "show", "fd77::1", "dev", "eth0").contains("FAILED"), "the kernel gave up on the first router")
        XCTAssertTrue(try pings("fd78::2", family: "-6", attempts: 3), "ground truth: the server answers through the second router")
        let answers = recorder.replies.dropFirst(published - 1).map(\.path.status)
        XCTAssertFalse(answers.contains(.unsatisfied), "never unsatisfied while a router works: \(answers)")
        print(try reachctl(["status", "--socket", daemon.socketPath]).stdout)
    }

    /// No false alarm: an idle host's entry goes STALE, a first resolution is INCOMPLETE for a
    /// moment, and a PERMANENT entry is never resolved; the path stays satisfied throughout.
    func testIdleFirstResolutionAndPermanentEntriesRaiseNoAlarm() async throws {
        try topology.configureIPv4()
        try addServer()
        let (daemon, client) = try startDaemon()
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "satisfied") { $0.status == .satisfied }

        // Idle: resolved once, then no traffic of the test's for 5 s; the kernel's own
        // reconfirmations (REACHABLE, STALE, DELAY, PROBE) never make it FAILED.
        XCTAssertTrue(try pings("10.78.0.2", attempts: 3))
        var seen = Set<String>()
        for _ in 0..<50 {
            let shown = try topology.host.ip("neigh", "show", "10.77.0.1", "dev", "eth0")
            if let state = shown.split(whereSeparator: \.isWhitespace).last { seen.insert(String(state)) }
            try await Task.sleep(for: .milliseconds(100))
        }
        print("idle gateway entry states: \(seen.sorted())")
        XCTAssertFalse(seen.contains("FAILED"))
        // A first resolution: the entry is gone, the next packet makes it INCOMPLETE, then REACHABLE.
        try topology.host.ip("neigh", "flush", "dev", "eth0")
        XCTAssertTrue(try pings("10.78.0.2", attempts: 3), "ground truth: a first resolution succeeds")
        // PERMANENT: set by hand, never probed, nothing to watch.
        let mac = try topology.router.ip("-br", "link", "show", "eth0").split(separator: " ", omittingEmptySubsequences: true)[2]
        try topology.host.ip("neigh", "replace", "10.77.0.1", "lladdr", String(mac), "dev", "eth0", "nud", "permanent")
        XCTAssertTrue(try pings("10.78.0.2"), "ground truth: the permanent entry carries traffic")
        let listed = try await waitForGateway(client) { $0.state == .permanent }
        XCTAssertEqual(listed?.address, "10.77.0.1")

        try await Task.sleep(for: .seconds(1))
        let answers = recorder.replies.map(\.path.status)
        XCTAssertEqual(Set(answers), [.satisfied], "every answer: \(answers)")
        print(try reachctl(["interfaces", "--socket", daemon.socketPath]).stdout)
    }

    /// ARP churn of 500 other neighbours on the gateway's LAN, one `ip neigh` each, wakes
    /// reachd's engine a handful of times at most: the event filter drops it in the kernel.
    func testNeighbourChurnOnTheLANDoesNotWakeReachd() async throws {
        try topology.configureIPv4()
        try topology.host.ip("addr", "add", "10.80.0.2/16", "dev", "eth0")
        let (daemon, client) = try startDaemon()
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "satisfied") { $0.status == .satisfied }
        XCTAssertTrue(try pings("10.77.0.1"), "ground truth: the gateway answers")
        try await Task.sleep(for: .milliseconds(300))

        let pid = daemon.process.processIdentifier
        let before = try wakeUps(of: pid)
        let script = """
            for i in $(seq 0 499); do
              ip neigh replace 10.80.$((i / 250)).$((i % 250 + 3)) lladdr 02:00:00:00:$(printf %02x $((i / 256))):$(printf %02x $((i % 256))) dev eth0 nud reachable
            done
            for i in $(seq 0 499); do ip neigh del 10.80.$((i / 250)).$((i % 250 + 3)) dev eth0; done
            """
        let churn = try Command.run(["ip", "netns", "exec", topology.host.name, "sh", "-c", script])
        XCTAssertEqual(churn.status, 0, churn.stderr)
        try await Task.sleep(for: .milliseconds(300))
        let woken = try wakeUps(of: pid) - before
        print("engine wake-ups during 1000 neighbour changes: \(woken)")
        XCTAssertLessThanOrEqual(woken, 5, "the engine woke for neighbours it does not watch")
        XCTAssertTrue(try pings("10.77.0.1"))
        XCTAssertEqual(Set(recorder.replies.map(\.path.status)), [.satisfied])
    }

    // MARK: - Helpers

    /// A server namespace behind the router (10.78.0.2, fd78::2 on the router's `srv0`), the
    /// router forwarding both families, and the host's eth0 neighbour timers shortened.
    private func addServer() throws {
        let server = try NetworkNamespace(prefix: "reachd-server")
        self.server = server
        let router = topology.router
        try sh("ip", "link", "add", "srv0", "netns", router.name, "type", "veth", "peer", "name", "eth0", "netns", server.name)
        try router.ip("link", "set", "srv0", "up")
        try router.ip("addr", "add", "10.78.0.1/24", "dev", "srv0")
        try router.ip("addr", "add", "fd78::1/64", "dev", "srv0", "nodad")
        _ = try router.exec(["sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"])
        try server.ip("link", "set", "eth0", "up")
        try server.ip("addr", "add", "10.78.0.2/24", "dev", "eth0")
        try server.ip("addr", "add", "fd78::2/64", "dev", "eth0", "nodad")
        try server.ip("route", "add", "default", "via", "10.78.0.1")
        try server.ip("-6", "route", "add", "default", "via", "fd78::1")
        try shortNeighbourTimers(on: "eth0")
    }

    /// Reachable for 1 s, first probe after 1 s, probes 200 ms apart: a dead gateway is
    /// FAILED within a few seconds of traffic.
    private func shortNeighbourTimers(on interface: String) throws {
        for family in ["ipv4", "ipv6"] {
            _ = try topology.host.exec([
                "sysctl", "-qw", "net.\(family).neigh.\(interface).base_reachable_time_ms=1000",
                "net.\(family).neigh.\(interface).delay_first_probe_time=1", "net.\(family).neigh.\(interface).retrans_time_ms=200",
            ])
        }
    }

    /// `ping -i 0.2` from the host towards `address` until the test ends.
    private func startTraffic(to address: String, family: String = "-4") throws {
        traffic = try Command.launch(
            ["ip", "netns", "exec", topology.host.name, "ping", family, "-q", "-i", "0.2", address],
            stdout: FileHandle.nullDevice, stderr: FileHandle.nullDevice
        )
    }

    /// `ping -c1` from the host, up to `attempts` times (a first packet may be lost while the
    /// far side resolves its own neighbours): whether the address answered.
    private func pings(_ address: String, family: String = "-4", attempts: Int = 1) throws -> Bool {
        for _ in 0..<attempts where try Command.run(["ip", "netns", "exec", topology.host.name, "ping", family, "-c1", "-W1", address]).status == 0 {
            return true
        }
        return false
    }

    /// Polls the daemon's eth0 until its first gateway satisfies `predicate` (5 s at most).
    private func waitForGateway(
        _ client: ReachabilityClient, file: StaticString = #filePath, line: UInt = #line, _ predicate: (GatewayNeighbourDescription) -> Bool
    ) async throws -> GatewayNeighbourDescription? {
        var listed: GatewayNeighbourDescription?
        for _ in 0..<250 {
            listed = try await interface("eth0", from: client)?.gateways?.first
            if let listed, predicate(listed) { return listed }
            try await Task.sleep(for: .milliseconds(20))
        }
        XCTFail("eth0's gateway never reached the expected state: \(String(describing: listed))", file: file, line: line)
        return listed
    }

    /// The engine thread's voluntary context switches (reachd's main thread): one per wake-up
    /// from poll(2), give or take a lock.
    private func wakeUps(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/task/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("voluntary_ctxt_switches:") }),
              let count = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) else {
            throw CommandFailed(command: "read /proc/\(pid)/status", status: 0, stderr: status)
        }
        return count
    }
}
