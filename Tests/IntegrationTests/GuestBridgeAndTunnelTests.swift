import Foundation
import Glibc
import ReachClient
import ReachProtocol
import ReachabilityCore
import TestSupport
import XCTest

/// Set-ups made the way container engines, overlays and wg-quick make them, with `ping`
/// inside the namespaces as the ground truth reachd's answer is held to.
final class GuestBridgeAndTunnelTests: DaemonTestCase {
    /// netavark's default: a bridge `podman0` NATing 10.88/16 for containers, each joining
    /// with a veth. Containers come and go; the host's path must not move.
    func testBridgeForContainersStaysOutOfThePathWhileContainersComeAndGo() async throws {
        try topology.configureIPv4()
        let host = topology.host
        try host.ip("link", "add", "podman0", "type", "bridge")
        try host.ip("addr", "add", "10.88.0.1/16", "dev", "podman0")
        try host.ip("link", "set", "podman0", "up")
        try host.exec(["sysctl", "-qw", "net.ipv4.ip_forward=1"])
        try requirePrerequisite(Command.exists("nft"), "nft is needed (scripts/bootstrap --test installs nftables)")
        try host.exec(["nft", "add table ip reachd-nat; add chain ip reachd-nat postrouting { type nat hook postrouting priority 100; }; "
            + "add rule ip reachd-nat postrouting ip saddr 10.88.0.0/16 oifname != \"podman0\" masquerade"])

        let (daemon, client) = try startDaemon()
        let recorder = PathRecorder(client: client)
        let first = await expectPath(recorder, "eth0 primary") { $0.status == .satisfied && $0.primaryInterface == "eth0" }
        XCTAssertEqual(first?.availableInterfaces, ["eth0"])
        let published = recorder.replies.count

        let cycles = 50
        for cycle in 0..<cycles {
            let container = try NetworkNamespace(prefix: "reachd-ctr")
            try host.ip("link", "add", "veth\(cycle)c", "type", "veth", "peer", "name", "eth0", "netns", container.name)
            try host.ip("link", "set", "veth\(cycle)c", "master", "podman0", "up")
            try container.ip("addr", "add", "10.88.0.\(cycle + 2)/16", "dev", "eth0")
            try container.ip("link", "set", "eth0", "up")
            try container.ip("route", "add", "default", "via", "10.88.0.1")
            // reachd saw the bridge gain carrier (it lists podman0 with it), and ignores it.
            let joined = try await waitForInterface("podman0", client) { $0.carrier }
            XCTAssertEqual(joined?.ignored, true, "podman0 is ignored by what it is")
            if cycle == 0 || cycle == cycles - 1 {
                // Ground truth: the container reaches the router through the bridge and NAT.
                let ping = try Command.run(["ip", "netns", "exec", container.name, "ping", "-c1", "-W2", "10.77.0.1"])
                XCTAssertEqual(ping.status, 0, "container \(cycle) pings the router: \(ping.stdout)\(ping.stderr)")
            }
            if cycle == cycles - 1 { print(try reachctl(["status", "--socket", daemon.socketPath]).stdout) }
            try host.ip("link", "del", "veth\(cycle)c")
            _ = try await waitForInterface("podman0", client) { !$0.carrier }
        }
        try await Task.sleep(for: .milliseconds(200))  // a late publication would land by now
        let changes = recorder.replies.dropFirst(published - 1).map(\.path.availableInterfaces)
        XCTAssertEqual(recorder.replies.count - published, 0, "published changes in \(cycles) container cycles: \(changes)")
        XCTAssertFalse(recorder.replies.contains { $0.path.availableInterfaces.contains("podman0") })
        let interfaces = try reachctl(["interfaces", "--socket", daemon.socketPath])
        print(interfaces.stdout)
    }

    /// A vxlan keeps its own carrier when the device under it loses the cable; reachd
    /// follows the underlay (`dev eth1`) and says the overlay cannot carry traffic.
    func testVxlanPathFollowsItsUnderlayCarrier() async throws {
        try topology.addPair(hostName: "eth1", routerName: "eth1", prefix: "10.78.0")
        for (namespace, remote, address) in [(topology.host, "10.78.0.1", "10.9.0.2/24"), (topology.router, "10.78.0.2", "10.9.0.1/24")] {
            try namespace.ip("link", "add", "vx0", "type", "vxlan", "id", "42", "dev", "eth1", "remote", remote, "dstport", "4789")
            try namespace.ip("addr", "add", address, "dev", "vx0")
            try namespace.ip("link", "set", "vx0", "up")
        }
        try topology.host.ip("route", "add", "default", "via", "10.9.0.1", "dev", "vx0")
        let (daemon, client) = try startDaemon()
        let recorder = PathRecorder(client: client)
        let up = await expectPath(recorder, "path over vx0") { $0.status == .satisfied && $0.primaryInterface == "vx0" }
        XCTAssertEqual(up?.primaryInterfaceType, .other, "an overlay is not wired ethernet")
        XCTAssertEqual(up?.reachability, .reachableViaOther)
        XCTAssertEqual(try ping("10.9.0.1").status, 0, "ground truth: the far end of the overlay answers")

        try topology.router.ip("link", "set", "eth1", "down")  // the host's eth1 loses carrier
        let down = await expectPath(recorder, "underlay lost carrier") { $0.status == .unsatisfied }
        XCTAssertEqual(down?.unsatisfiedReason, .noCarrier)
        let overlay = try await interface("vx0", from: client)
        XCTAssertEqual(overlay?.carrier, true, "the kernel leaves the overlay's carrier on")
        XCTAssertNotEqual(try ping("10.9.0.1").status, 0, "ground truth: nothing crosses the overlay now")
        print(try reachctl(["status", "--socket", daemon.socketPath]).stdout)

        try topology.router.ip("link", "set", "eth1", "up")
        _ = await expectPath(recorder, "underlay back", timeout: 10) { $0.status == .satisfied && $0.primaryInterface == "vx0" }
        XCTAssertEqual(try ping("10.9.0.1", wait: 3).status, 0, "ground truth: the overlay carries traffic again")
    }

    /// wg-quick's full tunnel, on a tun device (this kernel has no wireguard): the default
    /// route in table 51820, `not fwmark` and `suppress_prefixlength 0` rules. The far end
    /// of a point-to-point tunnel is not on this host's link: never `isDirect`.
    func testPointToPointTunnelIsNotDirect() async throws {
        try topology.configureIPv4()
        let host = topology.host
        try host.ip("tuntap", "add", "dev", "wg0", "mode", "tun")
        let peer = try Command.launch(
            ["ip", "netns", "exec", host.name, "python3", Paths.repository.appendingPathComponent("Tests/Fixtures/tun_echo.py").path, "wg0"],
            stdout: Pipe()
        )
        defer { kill(peer.processIdentifier, SIGKILL); peer.waitUntilExit() }
        try host.ip("addr", "add", "10.66.0.2/32", "dev", "wg0")
        try host.ip("link", "set", "wg0", "up")
        try host.ip("-4", "route", "add", "0.0.0.0/0", "dev", "wg0", "table", "51820")
        try host.ip("-4", "rule", "add", "not", "fwmark", "51820", "table", "51820")
        try host.ip("-4", "rule", "add", "table", "main", "suppress_prefixlength", "0")

        let (daemon, client) = try startDaemon()
        let recorder = PathRecorder(client: client)
        let path = await expectPath(recorder, "path over wg0", timeout: 8) { $0.status == .satisfied && $0.primaryInterface == "wg0" }
        XCTAssertEqual(path?.flags.names, ["reachable"], "no gateway, but across a tunnel: not direct")
        XCTAssertEqual(path?.primaryInterfaceType, .other)
        XCTAssertEqual(try ping("10.66.0.1").status, 0, "ground truth: the tunnel's far end answers")

        let target = try await client.checkTarget(XCTUnwrap(Target(host: "10.66.0.1")))
        XCTAssertEqual(target.path.status, .satisfied)
        XCTAssertEqual(target.path.primaryInterface, "wg0")
        XCTAssertFalse(target.path.flags.contains(.isDirect), "a host across the tunnel is not on this link")
        let onLink = try await client.checkTarget(XCTUnwrap(Target(host: "10.77.0.1")))
        XCTAssertTrue(onLink.path.flags.contains(.isDirect), "the router on eth0's own subnet is")
        print(try reachctl(["status", "--socket", daemon.socketPath]).stdout)
    }

    // MARK: - Helpers

    /// `ping -c1` from the host namespace.
    private func ping(_ address: String, wait: Int = 1) throws -> ProcessResult {
        try Command.run(["ip", "netns", "exec", topology.host.name, "ping", "-c1", "-W\(wait)", address])
    }

    /// Polls the daemon's interface list until `name` satisfies `predicate` (5 s at most).
    private func waitForInterface(
        _ name: String, _ client: ReachabilityClient, file: StaticString = #filePath, line: UInt = #line,
        _ predicate: (InterfaceDescription) -> Bool
    ) async throws -> InterfaceDescription? {
        var listed: InterfaceDescription?
        for _ in 0..<500 {
            listed = try await interface(name, from: client)
            if let listed, predicate(listed) { return listed }
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTFail("\(name) never reached the expected state; last listed: \(String(describing: listed))", file: file, line: line)
        return listed
    }
}
