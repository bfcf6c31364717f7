import Foundation
import ReachabilityCore
import ReachProtocol
import TestSupport
import XCTest

/// NAT64 on the wire, read by a client nobody here wrote: the `varlink` Python package
/// checks every reply against the IDL it fetched, so a field the IDL does not declare, or
/// declares otherwise, fails here. The README's example prints the prefix.
final class NAT64WireTests: XCTestCase {
    /// eth0 with only IPv6 (a global address, a default route via fe80::1) and the
    /// router's PREF64 64:ff9b::/96.
    private static func ipv6OnlySnapshot() -> NetworkSnapshot {
        let lo = Link(index: 1, name: "lo", flags: [.up, .running, .loopback], operState: .unknown, carrier: true, hardwareType: ARPHardwareType.loopback)
        let eth = Link(index: 2, name: "eth0", flags: [.up, .running], operState: .up, carrier: true)
        var snapshot = NetworkSnapshot(
            links: [1: lo, 2: eth],
            addresses: [InterfaceAddress(interfaceIndex: 2, address: IPAddress("2001:db8:1::2")!, prefixLength: 64)],
            defaultRoutes: [DefaultRoute(family: .ipv6, metric: 1024, nextHops: [NextHop(interfaceIndex: 2, gateway: IPAddress("fe80::1"))])],
            lookups: [
                .ipv4: .failure(.noRoute),
                .ipv6: .route(RouteLookupResult(outputInterface: 2, gateway: IPAddress("fe80::1"))),
            ],
            hasNameserver: true
        )
        snapshot.nat64Prefixes = [2: [NAT64Prefix("64:ff9b::/96", source: .routerAdvertisement)!]]
        return snapshot
    }

    private static func python(_ arguments: [String], socket: String) throws -> (status: Int32, output: String) {
        let result = try Command.run(["python3"] + arguments, environment: ["REACHD_SOCKET": socket])
        return (result.status, result.stdout + result.stderr)
    }

    func testPythonClientReadsNAT64Fields() async throws {
        try requirePrerequisite(try Self.python(["-c", "import varlink"], socket: "/dev/null").status == 0,
                                "python3 varlink package not available (pip install varlink)")
        let fixture = ServerFixture(snapshot: Self.ipv6OnlySnapshot())
        try fixture.server.start()
        let script = """
            import os, varlink
            with varlink.Client(address="unix:" + os.environ["REACHD_SOCKET"]) as client:
                with client.open("io.reachd.Reachability", namespaced=True) as remote:
                    path = remote.GetStatus().path
                    print("status", path.supportsIPv4, path.supportsIPv6, path.ipv4ViaNAT64.prefix, path.ipv4ViaNAT64.source,
                          [p.prefix for p in path.nat64Prefixes])
                    for interface in remote.ListInterfaces().interfaces:
                        print("interface", interface.name, [p.prefix + " " + p.source for p in getattr(interface, "nat64Prefixes", None) or []])
            """
        let result = try Self.python(["-c", script], socket: fixture.socketPath)
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertTrue(result.output.contains("status False True 64:ff9b::/96 routerAdvertisement ['64:ff9b::/96']"), result.output)
        XCTAssertTrue(result.output.contains("interface eth0 ['64:ff9b::/96 routerAdvertisement']"), result.output)
        XCTAssertTrue(result.output.contains("interface lo []"), result.output)

        let example = try Self.python([Paths.repository.appendingPathComponent("Examples/python/subscribe.py").path, "1"], socket: fixture.socketPath)
        XCTAssertEqual(example.status, 0, example.output)
        XCTAssertEqual(example.output, "1 satisfied eth0 unknown  ipv4-via-nat64=64:ff9b::/96\n")
        await fixture.stop()
    }
}
