import Foundation
import Glibc
import ReachClient
import ReachProtocol
import ReachabilityCore
import TestSupport
import XCTest

/// 464XLAT as clatd sets it up: an IPv6-only uplink, and a tun device (held open by
/// `tun_echo.py`, standing in for the translator) with 192.0.0.1/29 and the IPv4 default
/// route. reachd says IPv4 is provided by the CLAT and keeps the uplink primary.
final class CLATIntegrationTests: DaemonTestCase {
    func testTheUplinkStaysPrimaryAndIPv4IsProvidedByTheCLAT() async throws {
        try topology.configureIPv6()
        let host = topology.host
        try host.ip("tuntap", "add", "dev", "clat", "mode", "tun")
        let translator = try Command.launch(
            ["ip", "netns", "exec", host.name, "python3", Paths.repository.appendingPathComponent("Tests/Fixtures/tun_echo.py").path, "clat"],
            stdout: Pipe()
        )
        defer { kill(translator.processIdentifier, SIGKILL); translator.waitUntilExit() }
        try host.ip("addr", "add", "192.0.0.1/29", "dev", "clat")
        try host.ip("link", "set", "clat", "up")
        try host.ip("-4", "route", "add", "default", "dev", "clat")

        // No DNS64 query here: this test is about the CLAT alone.
        let configuration = try temporaryDirectory("reachd-clat") + "/reachd.toml"
        try "[nat64]\ndiscover-dns64 = false\n".write(toFile: configuration, atomically: true, encoding: .utf8)
        let (daemon, client) = try startDaemon(extraArguments: ["--config", configuration])
        let recorder = PathRecorder(client: client)
        let path = await expectPath(recorder, "IPv4 through the CLAT, eth0 primary", timeout: 8) {
            $0.status == .satisfied && $0.supportsIPv4 && $0.supportsIPv6 && $0.ipv4ProvidedBy == .clat
        }
        XCTAssertEqual(path?.primaryInterface, "eth0", "the uplink, not the CLAT's tun")
        XCTAssertEqual(path?.primaryInterfaceType, .wiredEthernet)
        XCTAssertEqual(path?.reachability, .reachableViaWired)
        XCTAssertEqual(path?.availableInterfaces, ["eth0", "clat"])
        let tun = try await interface("clat", from: client)
        XCTAssertEqual(tun?.type, .other, "a tun device is other")
        XCTAssertEqual(tun?.role, .clat)
        let uplinkRole = try await interface("eth0", from: client)?.role
        XCTAssertNil(uplinkRole)

        // Ground truth: the uplink carries traffic, and IPv4 goes into the CLAT's device.
        let uplink = try Command.run(["ip", "netns", "exec", host.name, "ping", "-6", "-c1", "-W2", "fd77::1"])
        XCTAssertEqual(uplink.status, 0, "the router answers over eth0: \(uplink.stdout)\(uplink.stderr)")
        let translated = try Command.run(["ip", "netns", "exec", host.name, "ping", "-4", "-c1", "-W2", "198.51.100.1"])
        XCTAssertEqual(translated.status, 0, "IPv4 leaves through the CLAT's tun (its far end answers): \(translated.stdout)\(translated.stderr)")
        let route = try host.ip("-4", "route", "get", "198.51.100.1")
        XCTAssertTrue(route.contains("dev clat"), route)

        let status = try reachctl(["status", "--socket", daemon.socketPath])
        XCTAssertTrue(status.stdout.contains("Primary:      eth0 (wiredEthernet)"), status.stdout)
        XCTAssertTrue(status.stdout.contains("IPv4:         yes (through a CLAT over eth0)"), status.stdout)
        for line in status.stdout.split(separator: "\n") where ["Status", "Reachability", "Primary", "IPv4", "IPv6", "Interfaces"].contains(where: line.hasPrefix) {
            print("reachctl status: \(line)")
        }
        let interfaces = try reachctl(["interfaces", "--socket", daemon.socketPath])
        XCTAssertTrue(interfaces.stdout.contains("clat: CLAT (464XLAT): provides IPv4, translated onto the IPv6 uplink"), interfaces.stdout)
        print(interfaces.stdout)

        // The CLAT stops: its route goes with the device, and IPv4 is gone.
        kill(translator.processIdentifier, SIGKILL)
        translator.waitUntilExit()
        _ = try? host.ip("link", "del", "clat")
        let after = await expectPath(recorder, "no IPv4 without the CLAT", timeout: 8) { !$0.supportsIPv4 && $0.ipv4ProvidedBy == nil }
        XCTAssertEqual(after?.primaryInterface, "eth0")
    }
}
