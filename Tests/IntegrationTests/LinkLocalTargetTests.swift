import Foundation
import ReachClient
import ReachProtocol
import ReachabilityCore
import TestSupport
import XCTest

/// "Can I reach this host?" where the path says no or looks away: a container behind an
/// ignored bridge, 169.254/16 and fe80:: neighbours, and a router's own address reached
/// from a host whose only usable address is link-local. Each answer is held against
/// `ping` from the same namespace: the kernel's own ground truth.
final class LinkLocalTargetTests: DaemonTestCase {
    private var container: NetworkNamespace?

    override func tearDown() {
        container = nil
        super.tearDown()
    }

    /// Whether `ping -c1 -W1` from `namespace` gets an answer (three tries: a neighbour is
    /// resolved on the first).
    private func pings(_ address: String, from namespace: NetworkNamespace, family: String = "-4") throws -> Bool {
        for _ in 0..<3 {
            let ping = try Command.run(["ip", "netns", "exec", namespace.name, "ping", family, "-c1", "-W1", address])
            if ping.status == 0 { return true }
        }
        return false
    }

    /// `reachctl check TARGET`, printed for the log.
    private func check(_ target: String, _ daemon: DaemonProcess) throws -> ProcessResult {
        let result = try reachctl(["check", target, "--socket", daemon.socketPath])
        print("$ reachctl check \(UntrustedText.escaped(target))  (exit \(result.status))\n\(result.stdout)\(result.stderr)")
        return result
    }

    /// A container on docker0 (a bridge reachd ignores by name and as a host-internal
    /// bridge): the path leaves docker0 out, but the container is reachable through it.
    func testContainerBehindAnIgnoredBridge() async throws {
        try requirePrerequisite(Command.exists("ping"), "ping (iputils-ping)")
        try topology.configureIPv4()
        let container = try NetworkNamespace(prefix: "reachd-ctr")
        self.container = container
        try topology.host.ipBatch([
            "link add docker0 type bridge", "addr add 172.17.0.1/16 dev docker0", "link set docker0 up",
        ])
        try sh("ip", "link", "add", "vethc0", "netns", topology.host.name, "type", "veth", "peer", "name", "eth0", "netns", container.name)
        try topology.host.ip("link", "set", "vethc0", "master", "docker0", "up")
        try container.ipBatch(["addr add 172.17.0.2/16 dev eth0", "link set eth0 up", "route add default via 172.17.0.1"])
        XCTAssertTrue(try pings("172.17.0.2", from: topology.host), "ground truth: the host pings the container")

        let (daemon, client) = try startDaemon()
        let status = try reachctl(["status", "--socket", daemon.socketPath])
        print("$ reachctl status\n\(status.stdout)")
        let host = try await client.status().path
        XCTAssertEqual(host.primaryInterface, "eth0")
        XCTAssertFalse(host.availableInterfaces.contains("docker0"), "docker0 stays out of the path: \(host.availableInterfaces)")

        let result = try check("172.17.0.2", daemon)
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.hasPrefix("172.17.0.2: reachable via docker0 (wiredEthernet, ignored for the path) [reachable, isDirect]"), result.stdout)
        let path = try await client.checkTarget(.address(IPAddress("172.17.0.2")!)).path
        XCTAssertEqual(path.addresses.first?.source, "172.17.0.1")
        XCTAssertEqual(path.addresses.first?.ignoredForPath, true)
        let viaEth0 = try await client.checkTarget(.address(IPAddress("10.77.0.1")!)).path
        XCTAssertEqual(viaEth0.addresses.first?.ignoredForPath, nil, "eth0 carries the path")
    }

    /// A host with only 169.254.7.2/16 reaches its 169.254.7.1 peer on the link.
    func testIPv4LinkLocalPeer() async throws {
        try requirePrerequisite(Command.exists("ping"), "ping (iputils-ping)")
        try topology.host.ip("addr", "add", "169.254.7.2/16", "dev", "eth0")
        try topology.router.ip("addr", "add", "169.254.7.1/16", "dev", "eth0")
        XCTAssertTrue(try pings("169.254.7.1", from: topology.host), "ground truth: the peer answers")

        let (daemon, client) = try startDaemon()
        let result = try check("169.254.7.1", daemon)
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        let path = try await client.checkTarget(.address(IPAddress("169.254.7.1")!)).path
        XCTAssertEqual(path.status, .satisfied)
        XCTAssertEqual(path.flags, [.reachable, .isDirect])
        XCTAssertEqual(path.primaryInterface, "eth0")
        XCTAssertEqual(path.addresses.first?.source, "169.254.7.2")
        // The same source goes nowhere beyond the link: no route there, nor an answer.
        try topology.host.ip("route", "add", "198.51.100.0/24", "via", "169.254.7.1")
        let beyond = try await client.checkTarget(.address(IPAddress("198.51.100.7")!)).path
        XCTAssertEqual(beyond.unsatisfiedReason, .noAddress)
        XCTAssertFalse(try pings("198.51.100.7", from: topology.host), "ground truth: nothing answers beyond the link")
    }

    /// The router's link-local address, scoped to the host's eth0, as ping takes it; through
    /// reachctl and the client library. The lookup goes out of the named interface, not the
    /// first with a link-local route. A scope naming no interface and an address without
    /// one get plain answers.
    func testScopedIPv6Neighbour() async throws {
        try requirePrerequisite(Command.exists("ping"), "ping (iputils-ping)")
        try topology.addPair(hostName: "eth1", routerName: "eth1", prefix: "10.78.0", hostAddress: false)
        try await topology.waitForLinkLocal()
        let neighbour = try linkLocalAddress(of: topology.router)
        let second = try linkLocalAddress(of: topology.router, device: "eth1")
        XCTAssertTrue(try pings("\(neighbour)%eth0", from: topology.host, family: "-6"), "ground truth: the neighbour answers")
        XCTAssertTrue(try pings("\(second)%eth1", from: topology.host, family: "-6"), "ground truth: so does the one on eth1")

        let (daemon, client) = try startDaemon()
        let result = try check("\(neighbour)%eth0", daemon)
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.hasPrefix("\(neighbour)%eth0: reachable via eth0 (wiredEthernet) [reachable, isDirect]"), result.stdout)

        let onSecond = try check("\(second)%eth1", daemon)
        XCTAssertEqual(onSecond.status, 0, onSecond.stdout + onSecond.stderr)
        XCTAssertTrue(onSecond.stdout.hasPrefix("\(second)%eth1: reachable via eth1 (wiredEthernet)"), onSecond.stdout)

        let reply = try await client.checkTarget(.scopedAddress(IPAddress(neighbour)!, interface: "eth0"))
        XCTAssertEqual(reply.target, "\(neighbour)%eth0")
        XCTAssertEqual(reply.path.status, .satisfied)
        XCTAssertEqual(reply.path.addresses.first?.address, "\(neighbour)%eth0")
        XCTAssertEqual(reply.path.addresses.first?.source, try linkLocalAddress(of: topology.host))
        var answers = client.subscribe(target: try XCTUnwrap(Target(host: "\(neighbour)%eth0"))).makeAsyncIterator()
        let first = try await answers.next()
        XCTAssertEqual(first?.path.status, .satisfied)
        // The neighbour's link goes away: the stream follows (the scope no longer names an interface).
        try topology.host.ip("link", "set", "eth0", "down")
        let down = try await answers.next()
        XCTAssertEqual(down?.path.status, .unsatisfied)

        let unknown = try check("\(neighbour)%nosuch0", daemon)
        XCTAssertEqual(unknown.status, 1)
        XCTAssertTrue(unknown.stdout.hasPrefix("\(neighbour)%nosuch0: not reachable: noInterface"), unknown.stdout)
        XCTAssertNotEqual(try Command.run(["ip", "netns", "exec", topology.host.name, "ping", "-6", "-c1", "-W1", "\(neighbour)%nosuch0"]).status, 0)

        let unscoped = try check(neighbour, daemon)
        XCTAssertEqual(unscoped.status, 64)
        XCTAssertTrue(unscoped.stderr.contains("a link-local address without an interface: write \(neighbour)%INTERFACE"), unscoped.stderr)
        let hostile = try check("\(neighbour)%eth\u{1b}[2J", daemon)
        XCTAssertEqual(hostile.status, 64)
        XCTAssertFalse(hostile.stderr.contains("\u{1b}"), "an interface name from the command line is escaped")
    }

    /// A host whose only other address is still tentative (DAD running for 100 s) reaches
    /// the router's own address on the link from its link-local address, as the kernel
    /// would send it; the tentative address is never the source.
    func testRouterAddressFromALinkLocalSource() async throws {
        try requirePrerequisite(Command.exists("ping"), "ping (iputils-ping)")
        try await topology.waitForLinkLocal()
        try topology.host.exec(["sysctl", "-qw", "net.ipv6.conf.eth0.dad_transmits=100"])
        try topology.host.ip("addr", "add", "fd77::2/64", "dev", "eth0")
        XCTAssertTrue(try topology.host.ip("-6", "addr", "show", "dev", "eth0", "tentative").contains("fd77::2"), "fd77::2 is tentative")
        XCTAssertTrue(try pings("fd77::1", from: topology.host, family: "-6"), "ground truth: the router's address answers")
        let hostLinkLocal = try linkLocalAddress(of: topology.host)

        let (daemon, client) = try startDaemon()
        let result = try check("fd77::1", daemon)
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        let path = try await client.checkTarget(.address(IPAddress("fd77::1")!)).path
        XCTAssertEqual(path.status, .satisfied)
        XCTAssertEqual(path.flags, [.reachable, .isDirect])
        XCTAssertEqual(path.addresses.first?.source, hostLinkLocal)
        XCTAssertTrue(try topology.host.ip("-6", "addr", "show", "dev", "eth0", "tentative").contains("fd77::2"), "still tentative")
        let host = try await client.status().path
        XCTAssertEqual(host.status, .unsatisfied, "the host's path is unchanged: no usable address, no default route")
    }

    /// The link-local IPv6 address of `namespace`'s `device`.
    private func linkLocalAddress(of namespace: NetworkNamespace, device: String = "eth0") throws -> String {
        let shown = try namespace.ip("-6", "-o", "addr", "show", "dev", device, "scope", "link")
        guard let field = shown.split(separator: " ").first(where: { $0.hasPrefix("fe80:") }) else {
            throw CommandFailed(command: "ip -6 addr show dev eth0 scope link", status: 1, stderr: shown)
        }
        return String(field.prefix { $0 != "/" })
    }
}
