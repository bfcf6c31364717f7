import Foundation
import ReachabilityCore
@testable import ReachClient
import ReachProtocol
import TestSupport
import XCTest

/// The Swift client on an IPv6-only network with a NAT64: the path's prefix, and the address
/// an app connects to for an IPv4 literal, from a real server over its socket.
final class NAT64ClientTests: XCTestCase {
    private static func ipv6OnlySnapshot() -> NetworkSnapshot {
        let lo = Link(index: 1, name: "lo", flags: [.up, .running, .loopback], operState: .unknown, carrier: true, hardwareType: ARPHardwareType.loopback)
        let eth = Link(index: 2, name: "eth0", flags: [.up, .running], operState: .up, carrier: true)
        var snapshot = NetworkSnapshot(
            links: [1: lo, 2: eth],
            addresses: [InterfaceAddress(interfaceIndex: 2, address: IPAddress("2001:db8:1::2")!, prefixLength: 64)],
            lookups: [.ipv4: .failure(.noRoute), .ipv6: .route(RouteLookupResult(outputInterface: 2, gateway: IPAddress("fe80::1")))]
        )
        snapshot.nat64Prefixes = [2: [NAT64Prefix("2001:db8:64::/96", source: .dns64)!]]
        return snapshot
    }

    func testPathMonitorCarriesThePrefix() async throws {
        let fixture = ServerFixture(snapshot: Self.ipv6OnlySnapshot())
        try fixture.server.start()
        let client = ReachabilityClient(socketPath: fixture.socketPath)
        let status = try await client.status()
        XCTAssertFalse(status.path.supportsIPv4)
        XCTAssertEqual(status.path.ipv4ViaNAT64?.synthesize(IPAddress("192.0.2.1")!), IPAddress("2001:db8:64::c000:201"))

        let monitor = PathMonitor(client: client)
        let received = expectation(description: "a path")
        monitor.pathUpdateHandler = { path in
            if path.ipv4ViaNAT64?.description == "2001:db8:64::/96", path.ipv4ViaNAT64?.source == .dns64,
               path.nat64Prefixes == [path.ipv4ViaNAT64!] { received.fulfill() }
        }
        monitor.start(queue: DispatchQueue(label: "nat64-monitor"))
        await fulfillment(of: [received], timeout: 5)
        monitor.cancel()
        let interfaces = try await client.interfaces()
        XCTAssertEqual(interfaces.first { $0.name == "eth0" }?.nat64Prefixes?.map(\.description), ["2001:db8:64::/96"])
        await fixture.stop()
    }
}
