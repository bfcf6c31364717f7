import Foundation
import ReachClient
import ReachProtocol
import ReachabilityCore
import TestSupport
import XCTest

/// The real daemon against the real kernel, each test in private network namespaces.
/// Observed through ReachClient (Varlink) and through a NOTIFY_SOCKET the test binds.
final class ReachabilityIntegrationTests: DaemonTestCase {
    func testNoDefaultRouteIsUnsatisfied() async throws {
        try topology.configureIPv4(defaultRoute: false)
        let (_, client) = try startDaemon()
        let status = try await client.status()
        XCTAssertEqual(status.path.status, .unsatisfied)
        XCTAssertEqual(status.path.unsatisfiedReason, .noRoute)
        XCTAssertEqual(status.path.reachability, .notReachable)
        XCTAssertFalse(status.path.flags.contains(.reachable))
    }

    func testIPv4DefaultViaVethIsSatisfiedThenRouteDeletedIsNot() async throws {
        try topology.configureIPv4()
        let (daemon, client) = try startDaemon()
        let status = try await client.status()
        XCTAssertEqual(status.path.status, .satisfied)
        XCTAssertEqual(status.path.reachability, .reachableViaWired)
        XCTAssertEqual(status.path.primaryInterface, "eth0")
        XCTAssertEqual(status.path.primaryInterfaceType, .wiredEthernet)
        XCTAssertEqual(status.path.gateways, ["10.77.0.1"])
        XCTAssertTrue(status.path.supportsIPv4)
        XCTAssertTrue(status.path.supportsDNS)
        XCTAssertTrue(status.path.flags.contains(.reachable))
        XCTAssertFalse(status.path.flags.contains(.isDirect))

        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "first reply") { $0.status == .satisfied }
        let sequence = try XCTUnwrap(recorder.replies.last?.sequence)
        try topology.host.ip("route", "del", "default")
        let gone = await expectPath(recorder, "route deleted") { $0.status == .unsatisfied }
        XCTAssertEqual(gone?.unsatisfiedReason, .noRoute)
        XCTAssertEqual(recorder.replies.last?.sequence, sequence + 1, "one change, one sequence step")
        XCTAssertTrue(daemon.notify.waitUntil(timeout: 2) { $0.contains("STATUS=not reachable: noRoute") },
                      "STATUS= follows the change: \(daemon.notify.statuses)")
    }

    func testCarrierLossWithRouteKeptIsNoCarrierAndBack() async throws {
        try topology.configureIPv4()
        let (_, client) = try startDaemon()
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "initially satisfied") { $0.status == .satisfied }

        try topology.router.ip("link", "set", "eth0", "down")
        let down = await expectPath(recorder, "peer down") { $0.status == .unsatisfied }
        XCTAssertEqual(down?.unsatisfiedReason, .noCarrier)
        let routes = try topology.host.ip("route", "show", "default")
        XCTAssertTrue(routes.contains("linkdown"), "the kernel keeps the route, flagged linkdown: \(routes)")

        try topology.router.ip("link", "set", "eth0", "up")
        _ = await expectPath(recorder, "peer back up") { $0.status == .satisfied && $0.primaryInterface == "eth0" }
    }

    func testAdminDownIsUnsatisfied() async throws {
        try topology.configureIPv4()
        let (_, client) = try startDaemon()
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "initially satisfied") { $0.status == .satisfied }
        try topology.host.ip("link", "set", "eth0", "down")
        let down = await expectPath(recorder, "admin down") { $0.status == .unsatisfied }
        XCTAssertNotNil(down?.unsatisfiedReason)
        XCTAssertNil(down?.primaryInterface)
    }

    func testBlackholeDefaultIsBlackholeRoute() async throws {
        try topology.configureIPv4(defaultRoute: false)
        try topology.host.ip("route", "add", "blackhole", "default")
        let (_, client) = try startDaemon()
        let status = try await client.status()
        XCTAssertEqual(status.path.status, .unsatisfied)
        XCTAssertEqual(status.path.unsatisfiedReason, .blackholeRoute)
    }

    func testDefaultOnlyInPolicyTableIsSatisfied() async throws {
        try topology.configureIPv4(defaultRoute: false)
        try topology.host.ip("route", "add", "default", "via", "10.77.0.1", "dev", "eth0", "table", "100")
        let (_, client) = try startDaemon()
        let before = try await client.status()
        XCTAssertEqual(before.path.status, .unsatisfied, "table 100 is not consulted without a rule")

        let recorder = PathRecorder(client: client)
        try topology.host.ip("rule", "add", "from", "all", "lookup", "100", "priority", "1000")
        let after = await expectPath(recorder, "rule added") { $0.status == .satisfied }
        XCTAssertEqual(after?.primaryInterface, "eth0")
        XCTAssertEqual(after?.gateways, ["10.77.0.1"])
    }

    func testIPv6OnlyIsSatisfiedWithoutIPv4() async throws {
        try topology.configureIPv6()
        let (_, client) = try startDaemon()
        let status = try await client.status()
        XCTAssertEqual(status.path.status, .satisfied)
        XCTAssertFalse(status.path.supportsIPv4)
        XCTAssertTrue(status.path.supportsIPv6)
        XCTAssertEqual(status.path.gateways, ["fd77::1"])
    }

    func testSubscribeFirstReplyArrivesAtOnce() async throws {
        try topology.configureIPv4()
        let (_, client) = try startDaemon()
        let started = ContinuousClock.now
        var iterator = client.subscribe().makeAsyncIterator()
        let first = try await iterator.next()
        let elapsed = ContinuousClock.now - started
        XCTAssertEqual(first?.path.status, .satisfied)
        XCTAssertLessThan(elapsed, .milliseconds(500), "first reply is the current state, sent at once")
    }

    func testReadyComesAfterTheFirstStateAndStoppingOnTerm() async throws {
        try topology.configureIPv4()
        let (daemon, client) = try startDaemon()
        let lines = daemon.notify.lines
        let ready = try XCTUnwrap(lines.firstIndex(of: "READY=1"))
        XCTAssertTrue(lines.contains { $0.hasPrefix("STATUS=reachable via eth0") }, "\(lines)")
        XCTAssertEqual(lines.prefix(ready).filter { $0 == "READY=1" }.count, 0)
        // The socket exists by READY: the very first query is already right.
        let status = try await client.status()
        XCTAssertEqual(status.path.status, .satisfied)

        XCTAssertEqual(daemon.terminate(), 0, "clean exit on SIGTERM")
        XCTAssertTrue(daemon.notify.waitFor("STOPPING=1", timeout: 2))
        XCTAssertFalse(FileManager.default.fileExists(atPath: daemon.socketPath), "socket removed on exit")
    }

    func testGarbageAndOversizedInputLeaveTheDaemonServing() async throws {
        try topology.configureIPv4()
        let (daemon, client) = try startDaemon()
        try VarlinkConnection(path: daemon.socketPath).sendAndExpectClose(Array("{not json".utf8) + [0])
        try VarlinkConnection(path: daemon.socketPath).sendAndExpectClose(Array("[1,2,3]".utf8) + [0])
        let huge = Array("{\"method\":\"io.reachd.Reachability.GetStatus\",\"parameters\":{\"x\":\"".utf8)
            + [UInt8](repeating: UInt8(ascii: "a"), count: 100_000)
        try VarlinkConnection(path: daemon.socketPath).sendAndExpectClose(huge)
        let status = try await client.status()
        XCTAssertEqual(status.path.status, .satisfied, "still serving after bad clients")
        XCTAssertTrue(daemon.process.isRunning)
    }

    func testVarlinkErrorsForBadRequests() throws {
        try topology.configureIPv4()
        let (daemon, _) = try startDaemon()
        let cases: [(request: String, error: String)] = [
            (#"{"method":"io.reachd.Reachability.Nope"}"#, "org.varlink.service.MethodNotFound"),
            (#"{"method":"com.example.Other.Call"}"#, "org.varlink.service.InterfaceNotFound"),
            (#"{"method":"io.reachd.Reachability.Subscribe","parameters":{}}"#, "org.varlink.service.ExpectedMore"),
            (#"{"method":"io.reachd.Reachability.Subscribe","parameters":{"requiredInterfaceType":"carrierPigeon"},"more":true}"#,
             "org.varlink.service.InvalidParameter"),
        ]
        for (request, expected) in cases {
            let connection = try VarlinkConnection(path: daemon.socketPath)
            let reply = try connection.request(request)
            XCTAssertEqual(reply.error, expected, request)
            // The connection stays usable after an error reply.
            let next = try connection.request(#"{"method":"io.reachd.Reachability.GetStatus"}"#)
            XCTAssertNil(next.error, "after \(request)")
        }
    }

    func testPythonVarlinkClientConformance() throws {
        try topology.configureIPv4()
        let (daemon, _) = try startDaemon()
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Conformance/varlink_client.py").path
        let output = try runCommand(["python3", script, "unix:" + daemon.socketPath])
        XCTAssertTrue(output.contains("conformance: ok"), output)
    }
}
