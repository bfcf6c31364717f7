import Foundation
import Glibc
import ReachClient
import ReachProtocol
import ReachabilityCore
import Synchronization
import TestSupport
import XCTest

/// NAT64 on a real kernel: the router namespace runs radvd (the IPv6 prefix and default
/// route) and tayga (the translator, to an IPv4-only server namespace behind it); PREF64
/// comes in a crafted RA (`send_ra.py --pref64`: radvd 2.19 cannot announce one). Every
/// answer reachd gives through NAT64 is held against a TCP connection from the host to the
/// address reachd named, which the IPv4 server answers with the peer it saw.
///
/// The prefix is a network-specific /64 (RFC 6052's u octet between the IPv4 address's
/// third and fourth bytes, synthesized by reachd and by tayga independently): tayga, as RFC
/// 6052 asks, refuses 64:ff9b::/96 for documentation addresses such as 192.0.2.1.
final class NAT64IntegrationTests: DaemonTestCase {
    private static let serverAddress = "192.0.2.1"
    private static let port = "8064"
    private static let prefix = "2001:db8:64:ff::/64"
    private static let synthesized = "2001:db8:64:ff:c0:2:100:0"

    private var server: NetworkNamespace!
    private var directory: String!
    private var launched: [Process] = []

    override func setUpWithError() throws {
        try super.setUpWithError()
        try requirePrerequisite(Command.exists("radvd"), "radvd is needed (scripts/bootstrap --test installs it)")
        try requirePrerequisite(Command.exists("tayga"), "tayga is needed (scripts/bootstrap --test installs it)")
        directory = try Paths.makeTemporaryDirectory("reachd-nat64")
        let router = topology.router
        _ = try router.exec(["sysctl", "-qw", "net.ipv6.conf.all.forwarding=1", "net.ipv4.ip_forward=1"])

        // The IPv4-only server, behind the router's srv0.
        server = try NetworkNamespace(prefix: "reachd-v4only")
        try sh("ip", "link", "add", "srv0", "netns", router.name, "type", "veth", "peer", "name", "eth0", "netns", server.name)
        try router.ip("link", "set", "srv0", "up")
        try router.ip("addr", "add", "192.0.2.254/24", "dev", "srv0")
        try server.ip("link", "set", "eth0", "up")
        try server.ip("addr", "add", "\(Self.serverAddress)/24", "dev", "eth0")
        try server.ip("route", "add", "default", "via", "192.0.2.254")
        let ready = Pipe()
        launched.append(try Command.launch(
            ["ip", "netns", "exec", server.name, "python3", Paths.repository.appendingPathComponent("Tests/Fixtures/ipv4_server.py").path,
             Self.serverAddress, Self.port], stdout: ready
        ))
        XCTAssertTrue(String(decoding: ready.fileHandleForReading.availableData, as: UTF8.self).hasPrefix("ready"), "the IPv4 server listens")

        // tayga: the prefix to IPv4, the host's IPv6 addresses mapped into 192.168.255.0/24.
        let tayga = directory + "/tayga.conf"
        try """
            tun-device nat64
            ipv4-addr 192.168.255.1
            ipv6-addr fd64::1
            prefix \(Self.prefix)
            dynamic-pool 192.168.255.0/24
            data-dir \(directory!)
            """.write(toFile: tayga, atomically: true, encoding: .utf8)
        _ = try router.exec(["tayga", "--config", tayga, "--mktun"])
        try router.ip("link", "set", "nat64", "up")
        try router.ip("route", "add", "192.168.255.0/24", "dev", "nat64")
        try router.ip("route", "add", Self.prefix, "dev", "nat64")
        launched.append(try Command.launch(["ip", "netns", "exec", router.name, "tayga", "--config", tayga, "--nodetach"]))

    }

    /// Starts radvd in the router: the IPv6 prefix (SLAAC) and a default route, nothing about
    /// NAT64. Once both ends' link-local addresses are past DAD, so its first RA is taken.
    private func startRadvd() async throws {
        try await topology.waitForLinkLocal()
        let radvd = directory + "/radvd.conf"
        try """
            interface eth0 {
                AdvSendAdvert on;
                MinRtrAdvInterval 3;
                MaxRtrAdvInterval 10;
                prefix fd77::/64 { AdvOnLink on; AdvAutonomous on; };
            };
            """.write(toFile: radvd, atomically: true, encoding: .utf8)
        launched.append(try Command.launch(["ip", "netns", "exec", topology.router.name, "radvd", "--nodaemon", "--config", radvd,
                                            "--pidfile", directory + "/radvd.pid", "--logmethod", "stderr"]))
    }

    override func tearDown() {
        for process in launched where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        launched = []
        super.tearDown()
        server = nil
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// Sends the router's PREF64 for `lifetime` seconds (0 withdraws it).
    private func announcePrefix(lifetime: Int) throws {
        _ = try runCommand(["ip", "netns", "exec", topology.router.name, "python3",
                            Paths.repository.appendingPathComponent("Tests/Fixtures/send_ra.py").path, "eth0", "--pref64", Self.prefix, "\(lifetime)"])
    }

    /// Connects from the host namespace to `address` and returns the server's line.
    private func connect(to address: String) throws -> String {
        let script = "import socket, sys; s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5); print(s.recv(200).decode().strip())"
        return try runCommand(["ip", "netns", "exec", topology.host.name, "python3", "-c", script, address, Self.port])
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `reachctl ARGUMENTS` against the daemon, printed for the record.
    private func reachctlOutput(_ arguments: [String], socket: String, _ label: String) throws -> String {
        let result = try reachctl(arguments + ["--socket", socket])
        let output = result.stdout + result.stderr
        print("--- \(label): reachctl \(arguments.joined(separator: " "))\n\(output)---")
        return output
    }

    /// The IPv6-only host: 192.0.2.1 is not reachable until the router announces its PREF64;
    /// then it is reachable via NAT64 at 2001:db8:64:ff:c0:2:100:0, to which a TCP connection is
    /// answered by the IPv4 server (seeing tayga's pool address); when the prefix's 8 s
    /// lapse, the path and a SubscribeTarget stream go back to notReachable. A lifetime of
    /// zero withdraws a prefix at once.
    func testIPv6OnlyNetworkReachesIPv4ThroughNAT64() async throws {
        try await startRadvd()
        let (daemon, client) = try startDaemon()
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "IPv6 from radvd's RA", timeout: 20) { $0.supportsIPv6 && !$0.supportsIPv4 }
        let target = Target.address(IPAddress(Self.serverAddress)!)
        let answers = Mutex<[TargetPath]>([])
        let stream = Task {
            for try await reply in client.subscribe(target: target) { answers.withLock { $0.append(reply.path) } }
        }
        defer { stream.cancel() }

        let before = try await client.checkTarget(target).path
        XCTAssertEqual(before.status, .unsatisfied, "no IPv4 and no prefix: \(before)")
        XCTAssertNil(before.addresses.first?.viaNAT64)
        _ = try reachctlOutput(["check", Self.serverAddress], socket: daemon.socketPath, "before the prefix")

        try announcePrefix(lifetime: 8)
        let announced = ContinuousClock.now
        let path = await expectPath(recorder, "IPv4 via the announced prefix") { $0.ipv4ViaNAT64 != nil }
        XCTAssertEqual(path?.ipv4ViaNAT64, NAT64Prefix(Self.prefix, source: .routerAdvertisement))
        XCTAssertEqual(path?.nat64Prefixes?.map(\.description), [Self.prefix])
        XCTAssertEqual(path?.supportsIPv4, false, "supportsIPv4 stays native truth")

        let reply = try await client.checkTarget(target).path
        XCTAssertEqual(reply.status, .satisfied, "\(reply)")
        let address = try XCTUnwrap(reply.addresses.first)
        XCTAssertEqual(address.address, Self.serverAddress)
        XCTAssertEqual(address.family, .ipv4)
        XCTAssertEqual(address.viaNAT64, Self.synthesized)
        XCTAssertEqual(address.nat64Prefix, Self.prefix)
        XCTAssertEqual(address.interface, "eth0")
        // Ground truth: the address reachd named reaches the IPv4-only server, through tayga.
        let proof = try connect(to: try XCTUnwrap(address.viaNAT64))
        print("--- ground truth: connect to \(Self.synthesized) port \(Self.port): \(proof)")
        XCTAssertTrue(proof.hasPrefix("ipv4-server \(Self.serverAddress):\(Self.port) saw 192.168.255."), proof)

        let status = try reachctlOutput(["status"], socket: daemon.socketPath, "with the prefix")
        XCTAssertTrue(status.contains("IPv4:") && status.contains("no (reachable through NAT64 \(Self.prefix))"), status)
        XCTAssertTrue(status.contains("NAT64:") && status.contains("\(Self.prefix) (routerAdvertisement)"), status)
        let check = try reachctlOutput(["check", Self.serverAddress], socket: daemon.socketPath, "with the prefix")
        XCTAssertTrue(check.contains("reachable via NAT64 \(Self.synthesized)"), check)
        let out = Pipe()
        let watch = try launchReachctl(["watch", "--socket", daemon.socketPath], stdout: out)
        launched.append(watch)
        let watched = LineReader(out).next(timeout: .seconds(5)) ?? ""
        print("--- with the prefix: reachctl watch\n\(watched)")
        XCTAssertTrue(watched.contains(" IPv6 IPv4-via-NAT64 \(Self.prefix) DNS"), watched)
        let interfaces = try reachctlOutput(["interfaces"], socket: daemon.socketPath, "with the prefix")
        XCTAssertTrue(interfaces.contains("eth0: NAT64 prefix \(Self.prefix) (routerAdvertisement)"), interfaces)
        // The status line (STATUS= and the log) says it too; STATUS= goes out after subscribers heard.
        let expected = ", IPv6, IPv4 via NAT64 \(Self.prefix), DNS"
        _ = daemon.notify.waitUntil(timeout: 2) { lines in lines.last { $0.hasPrefix("STATUS=") }?.hasSuffix(expected) == true }
        let line = try XCTUnwrap(daemon.notify.statuses.last)
        print("--- STATUS=\(line)")
        XCTAssertTrue(line.hasSuffix(expected), line)
        let metrics = try await client.metrics()
        XCTAssertTrue(metrics.contains("reachd_path_ipv4_via_nat64 1"), metrics)
        XCTAssertTrue(metrics.contains(#"reachd_interface_nat64_prefix{device="eth0",prefix="\#(Self.prefix)",source="routerAdvertisement"} 1"#), metrics)
        print("--- metrics:\n" + metrics.split(separator: "\n").filter { $0.contains("nat64") && !$0.hasPrefix("#") }.joined(separator: "\n"))
        let streamed = answers.withLock { $0.last }
        XCTAssertEqual(streamed?.addresses.first?.viaNAT64, Self.synthesized, "the stream follows the prefix")

        // The prefix lapses after its lifetime; no RA refreshes it (radvd does not send one).
        let lapsed = await expectPath(recorder, "the prefix lapsed", timeout: 15) { $0.ipv4ViaNAT64 == nil }
        let elapsed = ContinuousClock.now - announced
        XCTAssertNil(lapsed?.nat64Prefixes)
        XCTAssertGreaterThan(elapsed, .seconds(7), "not before its 8 s")
        XCTAssertLessThan(elapsed, .seconds(11), "at its expiry, not at a later wake-up")
        let after = try await client.checkTarget(target).path
        XCTAssertEqual(after.status, .unsatisfied, "\(after)")
        XCTAssertEqual(after.reachability, .notReachable)
        XCTAssertNil(after.addresses.first?.viaNAT64)
        try await waitForStream(answers, .unsatisfied, "the stream went back to notReachable")
        _ = try reachctlOutput(["status"], socket: daemon.socketPath, "after the prefix lapsed")
        _ = try reachctlOutput(["check", Self.serverAddress], socket: daemon.socketPath, "after the prefix lapsed")

        // A route for the prefix alone (no default route changes) is seen at once: the event
        // filter watches the synthesized address too. Held against the connection failing.
        try announcePrefix(lifetime: 600)
        _ = await expectPath(recorder, "announced again") { $0.ipv4ViaNAT64 != nil }
        try await waitForStream(answers, .satisfied, "the stream follows the new prefix")
        try topology.host.ip("-6", "route", "add", "unreachable", Self.prefix)
        try await waitForStream(answers, .unsatisfied, "an unreachable route for the prefix")
        XCTAssertThrowsError(try connect(to: Self.synthesized), "the kernel refuses the synthesized address too")
        try topology.host.ip("-6", "route", "del", "unreachable", Self.prefix)
        try await waitForStream(answers, .satisfied, "the route removed")
        XCTAssertTrue(try connect(to: Self.synthesized).hasPrefix("ipv4-server"))

        // A lifetime of zero withdraws it at once.
        let withdrawn = ContinuousClock.now
        try announcePrefix(lifetime: 0)
        _ = await expectPath(recorder, "withdrawn") { $0.ipv4ViaNAT64 == nil }
        XCTAssertLessThan(ContinuousClock.now - withdrawn, .seconds(3))
    }

    /// Waits up to 2 s for the SubscribeTarget stream's latest answer to have `status`.
    private func waitForStream(_ answers: borrowing Mutex<[TargetPath]>, _ status: PathStatus, _ what: String,
                               file: StaticString = #filePath, line: UInt = #line) async throws {
        let deadline = ContinuousClock.now + .seconds(2)
        while answers.withLock({ $0.last?.status }) != status && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        XCTAssertEqual(answers.withLock { $0.last?.status }, status, what, file: file, line: line)
    }

    /// A dual-stack network whose router also announces PREF64: IPv4 stays native (no
    /// ipv4ViaNAT64, no viaNAT64), and the server sees the host's own IPv4 address.
    func testDualStackNetworkKeepsNativeIPv4() async throws {
        try topology.configureIPv4()
        try await startRadvd()
        let (daemon, client) = try startDaemon()
        let recorder = PathRecorder(client: client)
        try announcePrefix(lifetime: 600)
        let path = await expectPath(recorder, "both families and the prefix", timeout: 20) {
            $0.supportsIPv4 && $0.supportsIPv6 && $0.nat64Prefixes != nil
        }
        XCTAssertNil(path?.ipv4ViaNAT64)
        let reply = try await client.checkTarget(.address(IPAddress(Self.serverAddress)!)).path
        XCTAssertEqual(reply.status, .satisfied, "\(reply)")
        XCTAssertNil(reply.addresses.first?.viaNAT64)
        XCTAssertEqual(reply.addresses.first?.source, "10.77.0.2")
        let proof = try connect(to: Self.serverAddress)
        XCTAssertEqual(proof, "ipv4-server \(Self.serverAddress):\(Self.port) saw 10.77.0.2")
        let status = try reachctlOutput(["status"], socket: daemon.socketPath, "dual-stack")
        XCTAssertFalse(status.contains("through NAT64"), status)
        XCTAssertFalse(try reachctlOutput(["check", Self.serverAddress], socket: daemon.socketPath, "dual-stack").contains("NAT64"))
    }
}
