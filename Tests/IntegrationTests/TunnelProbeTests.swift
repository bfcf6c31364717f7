import Foundation
import ReachClient
import ReachProtocol
import ReachabilityCore
import TestSupport
import XCTest

/// Connectivity checks over the interface the path really uses, on a real kernel: an
/// OpenVPN 2.6 tunnel with `redirect-gateway def1` (two /1 routes through tun0, no default
/// route), `reachctl probe` when nothing can be checked, and a `full` verdict that is checked
/// again so a lost upstream is noticed.
///
/// Three namespaces: `host` (reachd, the OpenVPN client), `router` (the OpenVPN server on
/// its veth, forwarding) and `upstream` behind it (`probe_server.py` on 10.66.0.2, named
/// `probe.test` in the host's `/etc/netns/NAME/hosts`). Nothing leaves them.
final class TunnelProbeTests: DaemonTestCase {
    private var upstream: NetworkNamespace!
    private var work: String!
    private var processes: [Process] = []
    private var state: String { work + "/state.json" }

    override func setUpWithError() throws {
        try super.setUpWithError()
        work = try temporaryDirectory("reachd-tunnel")
        try topology.hostFiles(hosts: "127.0.0.1 localhost\n10.66.0.2 probe.test\n", nsswitch: "hosts: files\n")
        upstream = try NetworkNamespace(prefix: "reachd-upstream")
        try sh("ip", "link", "add", "up0", "netns", topology.router.name, "type", "veth", "peer", "name", "up0", "netns", upstream.name)
        try topology.router.ip("link", "set", "up0", "up")
        try upstream.ip("link", "set", "up0", "up")
        try topology.router.ip("addr", "add", "10.66.0.1/24", "dev", "up0")
        try topology.router.ip("addr", "add", "2001:db8:66::1/64", "dev", "up0", "nodad")
        try upstream.ip("addr", "add", "10.66.0.2/24", "dev", "up0")
        try upstream.ip("addr", "add", "2001:db8:66::2/64", "dev", "up0", "nodad")
        try topology.router.exec(["sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"])
        try #"{"http": "204"}"#.write(toFile: state, atomically: true, encoding: .utf8)
        let ready = Pipe()
        let server = try Command.launch(
            ["ip", "netns", "exec", upstream.name, "python3", Paths.repository.appendingPathComponent("Tests/Fixtures/probe_server.py").path, state],
            stdout: ready
        )
        processes.append(server)
        XCTAssertTrue(String(decoding: ready.fileHandleForReading.availableData, as: UTF8.self).hasPrefix("ready"), "probe_server.py started")
    }

    override func tearDown() {
        // Children of the test runner have SIGTERM blocked; OpenVPN's tun0 goes with it.
        for process in processes where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        processes = []
        super.tearDown()
        upstream = nil
    }

    // MARK: Helpers

    private func configuration(_ text: String) throws -> String {
        let path = work + "/reachd-\(UUID().uuidString.prefix(6)).toml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private static func probing(_ extra: String = "") -> String {
        """
        [probe]
        url = "http://probe.test/generate_204"
        timeout = 2
        initial-delay = 1
        maximum-delay = 2
        families = ["ipv4"]
        \(extra)
        """
    }

    /// Ground truth: the HTTP status `probe_server.py` at `address` answers a GET sent from
    /// the host namespace over `device` (`SO_BINDTODEVICE`), or nil when no answer comes.
    private func httpStatus(_ address: String, over device: String) throws -> Int? {
        let script = """
            import socket, sys
            family = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
            s = socket.socket(family, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, sys.argv[2].encode())
            s.settimeout(2)
            try:
                s.connect((sys.argv[1], 80))
                s.sendall(b"GET /generate_204 HTTP/1.1\\r\\nHost: probe.test\\r\\nConnection: close\\r\\n\\r\\n")
                print(s.recv(64).split()[1].decode())
            except OSError as error:
                print("none", error)
            """
        let answer = try topology.host.exec(["python3", "-c", script, address, device])
        return Int(answer.split(whereSeparator: \.isWhitespace).first.map(String.init) ?? "")
    }

    /// Starts OpenVPN 2.6 as the Debian package runs it: a static-key point-to-point tunnel,
    /// the server on the router's veth, the client in the host with `redirect-gateway def1`
    /// and IPv6 2000::/4 through the tunnel. Returns the server once the client's routes are
    /// in place.
    @discardableResult
    private func startOpenVPN() async throws -> Process {
        try requirePrerequisite(Command.exists("openvpn"), "openvpn is needed (scripts/bootstrap --test installs it)")
        let key = work + "/static.key"
        _ = try runCommand(["openvpn", "--genkey", "secret", key])
        let common = ["--dev", "tun0", "--proto", "udp", "--port", "1194", "--cipher", "AES-256-CBC", "--verb", "3"]
        let server = common + ["--local", "10.77.0.1", "--secret", key, "0", "--ifconfig", "10.8.0.1", "10.8.0.2",
                               "--ifconfig-ipv6", "fd08::1", "fd08::2", "--log", work + "/server.log"]
        let client = common + ["--remote", "10.77.0.1", "--secret", key, "1", "--ifconfig", "10.8.0.2", "10.8.0.1",
                               "--ifconfig-ipv6", "fd08::2", "fd08::1", "--redirect-gateway", "def1", "--route-ipv6", "2000::/4",
                               "--log", work + "/client.log"]
        let serverProcess = try Command.launch(["ip", "netns", "exec", topology.router.name, "openvpn"] + server)
        processes.append(serverProcess)
        processes.append(try Command.launch(["ip", "netns", "exec", topology.host.name, "openvpn"] + client))
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            let log = (try? String(contentsOfFile: work + "/client.log", encoding: .utf8)) ?? ""
            if log.contains("Initialization Sequence Completed") { return serverProcess }
            try await Task.sleep(for: .milliseconds(100))
        }
        let logs = ["server.log", "client.log"].map { (try? String(contentsOfFile: work + "/" + $0, encoding: .utf8)) ?? "" }
        throw CommandFailed(command: "openvpn", status: 0, stderr: "no tunnel within 15 s:\n" + logs.joined(separator: "\n"))
    }

    // MARK: OpenVPN def1

    /// `redirect-gateway def1`: 0.0.0.0/1 and 128.0.0.0/1 via 10.8.0.1 make tun0 the path's
    /// interface without a default route through it. tun0 is probed (only the tunnel reaches
    /// probe.test: the upstream has no route back to eth0's subnet), connectivity is `full`,
    /// `reachctl probe --interface tun0` checks it; nothing across the tunnel is `isDirect`.
    func testOpenVPNDef1TunnelIsProbed() async throws {
        try topology.configureIPv4()
        try upstream.ip("route", "add", "10.8.0.0/24", "via", "10.66.0.1")
        try upstream.ip("-6", "route", "add", "fd08::/64", "via", "2001:db8:66::1")
        try await startOpenVPN()
        let routes = try topology.host.ip("route", "show")
        XCTAssertTrue(routes.contains("0.0.0.0/1 via 10.8.0.1 dev tun0") && routes.contains("128.0.0.0/1 via 10.8.0.1 dev tun0"), routes)
        XCTAssertEqual(try httpStatus("10.66.0.2", over: "tun0"), 204, "ground truth: the probe server answers through the tunnel")
        XCTAssertNil(try httpStatus("10.66.0.2", over: "eth0"), "ground truth: and not through eth0")
        XCTAssertEqual(try httpStatus("2001:db8:66::2", over: "tun0"), 204, "ground truth: IPv6 through the tunnel too")

        let (daemon, client) = try startDaemon(extraArguments: ["--config", try configuration(Self.probing())])
        let recorder = PathRecorder(client: client)
        let path = await expectPath(recorder, "tun0 carries the path and is probed full", timeout: 10) {
            $0.primaryInterface == "tun0" && $0.connectivity == .full
        }
        XCTAssertEqual(path?.gateways, ["10.8.0.1"])
        XCTAssertEqual(path?.flags.contains(.isDirect), false, "a path through a gateway is not direct")
        let tun0 = try await interface("tun0", from: client)
        XCTAssertEqual(tun0?.ipv4Connectivity, .full)
        var eth0: Connectivity?
        for _ in 0..<80 where eth0 != .limited {  // its check waits out the 2 s timeout
            eth0 = try await interface("eth0", from: client)?.ipv4Connectivity
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTAssertEqual(eth0, .limited, "eth0's own default route does not reach the server")

        let status = try reachctl(["status", "--socket", daemon.socketPath])
        print("reachctl status:\n\(status.stdout)")
        XCTAssertTrue(status.stdout.contains("Connectivity: full\n"), status.stdout)
        let probed = try reachctl(["probe", "--socket", daemon.socketPath, "--interface", "tun0"])
        XCTAssertEqual(probed.status, 0, probed.stderr)
        XCTAssertEqual(probed.stdout, "tun0: IPv4 full, IPv6 unknown\n")

        // Across the tunnel, IPv4 via 10.8.0.1 and IPv6 on-link in 2000::/4: never isDirect.
        for (address, gateway) in [("10.66.0.2", "10.8.0.1"), ("2001:db8:66::2", nil)] {
            let checked = try reachctl(["check", "--socket", daemon.socketPath, address])
            print("reachctl check \(address):\n\(checked.stdout)")
            XCTAssertEqual(checked.status, 0, checked.stdout + checked.stderr)
            let reply = try await client.checkTarget(.address(try XCTUnwrap(IPAddress(address))))
            XCTAssertEqual(reply.path.primaryInterface, "tun0", address)
            XCTAssertTrue(reply.path.flags.contains(.reachable), address)
            XCTAssertFalse(reply.path.flags.contains(.isDirect), "\(address) is across a point-to-point tunnel: \(reply.path.flags)")
            XCTAssertEqual(reply.path.addresses.first?.gateway, gateway, address)
        }
    }

    /// The VPN server dies after `full`: the client keeps tun0 and its routes, so nothing
    /// the kernel reports changes; the re-check (here every 2 s) finds no answer through
    /// the tunnel and connectivity leaves `full`, as the ground truth does.
    func testDeadVPNServerIsNoticed() async throws {
        try topology.configureIPv4()
        try upstream.ip("route", "add", "10.8.0.0/24", "via", "10.66.0.1")
        let server = try await startOpenVPN()
        let (_, client) = try startDaemon(extraArguments: ["--config", try configuration(Self.probing("recheck-interval = 2"))])
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "full through tun0", timeout: 10) { $0.primaryInterface == "tun0" && $0.connectivity == .full }

        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
        XCTAssertNil(try httpStatus("10.66.0.2", over: "tun0"), "ground truth: nothing answers through the tunnel")
        XCTAssertTrue(try topology.host.ip("route", "show").contains("0.0.0.0/1 via 10.8.0.1 dev tun0"), "the client keeps its routes")
        let lost = await expectPath(recorder, "the re-check notices", timeout: 10) { $0.connectivity != .full }
        XCTAssertEqual(lost?.connectivity, .limited)
        XCTAssertEqual(lost?.primaryInterface, "tun0", "the route is still there; only the internet behind it is not")
    }

    // MARK: Nothing to check

    /// `reachctl probe` says plainly why nothing was checked and exits 69 (EX_UNAVAILABLE):
    /// probing not configured; no interface with a route to the internet (the ground truth
    /// cannot reach the server either); an interface that carries no such route, or none
    /// of that name. The interface that does carry one is checked (exit 0).
    func testProbeSaysWhyNothingWasChecked() async throws {
        try topology.configureIPv4(defaultRoute: false)
        try upstream.ip("route", "add", "default", "via", "10.66.0.1")
        XCTAssertNil(try httpStatus("10.66.0.2", over: "eth0"), "ground truth: no route to the server")

        let (unconfigured, _) = try startDaemon()
        let disabled = try reachctl(["probe", "--socket", unconfigured.socketPath])
        XCTAssertEqual(disabled.status, 69, disabled.stdout + disabled.stderr)
        XCTAssertEqual(disabled.stdout, "")
        XCTAssertTrue(disabled.stderr.contains("probing is not configured"), disabled.stderr)
        unconfigured.terminate()

        let (daemon, _) = try startDaemon(extraArguments: ["--config", try configuration(Self.probing())])
        let none = try reachctl(["probe", "--socket", daemon.socketPath])
        XCTAssertEqual(none.status, 69, none.stdout + none.stderr)
        XCTAssertEqual(none.stdout, "")
        XCTAssertTrue(none.stderr.contains("nothing was checked: no interface has a usable route to the internet"), none.stderr)

        try topology.host.ip("route", "add", "default", "via", "10.77.0.1", "dev", "eth0")
        try topology.addPair(hostName: "eth1", routerName: "eth1", prefix: "10.78.0")
        XCTAssertEqual(try httpStatus("10.66.0.2", over: "eth0"), 204, "ground truth: eth0 reaches the server")
        XCTAssertNil(try httpStatus("10.66.0.2", over: "eth1"), "ground truth: eth1 does not")
        var checked = try reachctl(["probe", "--socket", daemon.socketPath, "--interface", "eth0"])
        for _ in 0..<20 where checked.status != 0 {  // the new route reaches the loop
            try await Task.sleep(for: .milliseconds(100))
            checked = try reachctl(["probe", "--socket", daemon.socketPath, "--interface", "eth0"])
        }
        XCTAssertEqual(checked.status, 0, checked.stderr)
        XCTAssertEqual(checked.stdout, "eth0: IPv4 full, IPv6 unknown\n")

        let eth1 = try reachctl(["probe", "--socket", daemon.socketPath, "--interface", "eth1"])
        XCTAssertEqual(eth1.status, 69, eth1.stdout + eth1.stderr)
        XCTAssertEqual(eth1.stdout, "")
        XCTAssertTrue(eth1.stderr.contains("eth1 was not checked: it carries no usable route to the internet"), eth1.stderr)
        let missing = try reachctl(["probe", "--socket", daemon.socketPath, "--interface", "nosuch0"])
        XCTAssertEqual(missing.status, 69, missing.stdout + missing.stderr)
        XCTAssertTrue(missing.stderr.contains("there is no interface named nosuch0"), missing.stderr)
    }

    // MARK: Checked again once full

    /// With probing on and no `recheck-interval`, a `full` interface is checked again
    /// 300 s later (NetworkManager's interval), not never: the round's log line says when.
    func testFullIsCheckedAgainByDefault() async throws {
        try topology.configureIPv4()
        try upstream.ip("route", "add", "default", "via", "10.66.0.1")
        XCTAssertEqual(try httpStatus("10.66.0.2", over: "eth0"), 204, "ground truth: the upstream answers")
        let (daemon, client) = try startDaemon(extraArguments: ["--config", try configuration(Self.probing())])
        _ = await expectPath(PathRecorder(client: client), "validated") { $0.connectivity == .full }
        let line = daemon.log.split(separator: "\n").first { $0.contains("probe round: full") }.map(String.init) ?? ""
        let seconds = line.firstMatch(of: /next="?in (\d+) s/).flatMap { Int($0.1) }
        XCTAssertNotNil(seconds, "the round says when it checks next: \(line)")
        if let seconds { XCTAssertTrue((298...300).contains(seconds), "next check in \(seconds) s: \(line)") }
    }

    /// The router stops forwarding after `full`: the next re-check (here every 2 s) finds
    /// no answer and connectivity leaves `full`, as the ground truth does; forwarding back,
    /// the next round is `full` again.
    func testLostUpstreamIsNoticed() async throws {
        try topology.configureIPv4()
        try upstream.ip("route", "add", "default", "via", "10.66.0.1")
        let (_, client) = try startDaemon(extraArguments: ["--config", try configuration(Self.probing("recheck-interval = 2"))])
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "validated") { $0.connectivity == .full }
        XCTAssertEqual(try httpStatus("10.66.0.2", over: "eth0"), 204)

        try topology.router.exec(["sysctl", "-qw", "net.ipv4.ip_forward=0"])
        XCTAssertNil(try httpStatus("10.66.0.2", over: "eth0"), "ground truth: the upstream is gone")
        let lost = await expectPath(recorder, "the re-check notices", timeout: 10) { $0.connectivity != .full }
        XCTAssertEqual(lost?.connectivity, .limited)
        XCTAssertEqual(lost?.status, .satisfied, "the route is still there; only the internet behind it is not")

        try topology.router.exec(["sysctl", "-qw", "net.ipv4.ip_forward=1"])
        XCTAssertEqual(try httpStatus("10.66.0.2", over: "eth0"), 204, "ground truth: back")
        _ = await expectPath(recorder, "back to full", timeout: 10) { $0.connectivity == .full }
    }
}
