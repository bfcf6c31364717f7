import Foundation
import ReachProtocol
import TestSupport
import XCTest

/// A Varlink client nobody here wrote: the `varlink` Python package, which asks for the
/// interface description first and checks replies against it.
final class PythonVarlinkTests: XCTestCase {
    private static func python(_ script: String, socket: String) throws -> (status: Int32, output: String) {
        let result = try Command.run(["python3", "-c", script, "unix:" + socket])
        return (result.status, result.stdout + result.stderr)
    }

    func testPythonVarlinkClient() async throws {
        // `make test` installs it (scripts/bootstrap --test).
        try requirePrerequisite(try Self.python("import varlink", socket: "/dev/null").status == 0,
                                "python3 varlink package not available (pip install varlink)")

        let fixture = ServerFixture()
        try fixture.server.start()
        let script = """
            import sys, varlink
            with varlink.Client(address=sys.argv[1]) as client:
                with client.open("io.reachd.Reachability", namespaced=True) as remote:
                    status = remote.GetStatus()
                    print("status", status.sequence, status.instance, status.path.primaryInterface, status.path.status)
                    interfaces = remote.ListInterfaces()
                    print("interfaces", ",".join(i.name for i in interfaces.interfaces))
                    for reply in remote.Subscribe(_more=True):
                        print("subscribe", reply.sequence, reply.path.reachability)
                        break
                # (namespaced=False: the package cannot build namespaced error objects)
                with client.open("io.reachd.Reachability") as remote:
                    try:
                        remote.Subscribe(requiredInterfaceType="bogus")
                    except varlink.VarlinkError as error:
                        print("error", error.error(), error.parameters())
            """
        // Blocking here is fine: the server runs on its own event loop thread.
        let result = try Self.python(script, socket: fixture.socketPath)
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertTrue(result.output.contains("status 1 test-instance eth0 satisfied"), result.output)
        XCTAssertTrue(result.output.contains("interfaces lo,eth0,wlan0"), result.output)
        XCTAssertTrue(result.output.contains("subscribe 1 reachableViaWired"), result.output)
        XCTAssertTrue(result.output.contains("error org.varlink.service.InvalidParameter {'parameter': 'requiredInterfaceType'}"), result.output)
        await fixture.stop()
    }

    /// The README's Python example (`Examples/python/subscribe.py`): the current path, then
    /// a change with what changed.
    func testPythonSubscriptionExample() async throws {
        try requirePrerequisite(try Self.python("import varlink", socket: "/dev/null").status == 0,
                                "python3 varlink package not available (pip install varlink)")
        let fixture = ServerFixture()
        try fixture.server.start()
        let out = Pipe()
        let example = try Command.launch(
            ["python3", Paths.repository.appendingPathComponent("Examples/python/subscribe.py").path, "2"],
            environment: ["REACHD_SOCKET": fixture.socketPath], stdout: out
        )
        let lines = LineReader(out)
        let first = lines.next(timeout: .seconds(10))
        XCTAssertEqual(first, "1 satisfied eth0 unknown ")
        fixture.server.deliver(.snapshot(makeSnapshot(ethGateway: "10.0.0.77")))
        let second = lines.next(timeout: .seconds(10))
        XCTAssertEqual(second, "2 satisfied eth0 unknown gateways")
        example.waitUntilExit()
        XCTAssertEqual(example.terminationStatus, 0)
        await fixture.stop()
    }
}
