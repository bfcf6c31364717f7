import ReachabilityCore
@testable import ReachClient
import ReachProtocol
import TestSupport
import XCTest

/// A link-local IPv6 target through the client library: written as `ping` takes it, sent
/// with its interface, looked up on that interface, answered with it.
final class ScopedTargetTests: XCTestCase {
    func testInitialisers() {
        let fe80b = IPAddress("fe80::b")!
        XCTAssertEqual(ReachabilityManager(domain: "fe80::b%eth0")?.target, .scopedAddress(fe80b, interface: "eth0"))
        XCTAssertNil(ReachabilityManager(domain: "fe80::b"), "a link-local address without its interface names no host")
        XCTAssertNil(ReachabilityManager(domain: "fe80::b%bad/name"))
        XCTAssertEqual(ReachabilityManager(target: .scopedAddress(fe80b, interface: "eth0")).target, .scopedAddress(fe80b, interface: "eth0"))
    }

    func testCheckTargetCarriesTheScope() async throws {
        let fixture = ServerFixture()
        // The fixture's eth0 is interface 2; fe80::a is no address of its snapshot, so only
        // the scope and the route are judged here.
        fixture.engine.answerLookups { key in
            key.interface == "eth0" ? .route(RouteLookupResult(outputInterface: 2)) : .failure(.noRoute)
        }
        try fixture.server.start()
        let client = ReachabilityClient(socketPath: fixture.socketPath)
        let reply = try await client.checkTarget(.scopedAddress(IPAddress("fe80::b")!, interface: "eth0"))
        XCTAssertEqual(reply.target, "fe80::b%eth0")
        XCTAssertEqual(reply.path.addresses.map(\.address), ["fe80::b%eth0"])
        XCTAssertEqual(reply.path.addresses.first?.interface, "eth0")
        let asked = fixture.engine.requests.compactMap { request -> [TargetKey]? in
            if case let .lookUp(keys) = request { return keys } else { return nil }
        }
        XCTAssertEqual(asked.first?.map(\.interface), ["eth0"])
        XCTAssertEqual(asked.first?.map(\.address), [IPAddress("fe80::b")!])

        let unknown = try await client.checkTarget(.scopedAddress(IPAddress("fe80::b")!, interface: "nosuch0"))
        XCTAssertEqual(unknown.path.unsatisfiedReason, .noInterface)
        await fixture.stop()
    }
}
