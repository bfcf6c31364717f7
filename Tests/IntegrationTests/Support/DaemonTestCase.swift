import Foundation
import ReachClient
import ReachProtocol
import ReachabilityCore
import TestSupport
import XCTest

/// Base for tests that run the real daemon in a fresh `VethTopology`.
class DaemonTestCase: XCTestCase {
    var topology: VethTopology!
    var daemon: DaemonProcess?

    override func setUpWithError() throws {
        try requireRoot()
        topology = try VethTopology()
    }

    override func tearDown() {
        if let daemon, (testRun?.totalFailureCount ?? 0) > 0 { print("reachd log:\n\(daemon.log)") }
        daemon = nil
        topology = nil
    }

    /// Starts reachd in the host namespace, waits for READY=1, and returns a client for it.
    func startDaemon(extraArguments: [String] = [], environment: [String: String] = [:]) throws -> (DaemonProcess, ReachabilityClient) {
        let daemon = try DaemonProcess.started(in: topology.host, extraArguments: extraArguments, environment: environment)
        self.daemon = daemon
        return (daemon, ReachabilityClient(socketPath: daemon.socketPath))
    }

    /// Waits for the recorder's latest path to satisfy `predicate`; fails the test if it never does.
    func expectPath(_ recorder: PathRecorder, _ what: String, timeout: TimeInterval = 5,
                    file: StaticString = #filePath, line: UInt = #line, _ predicate: (Path) -> Bool) async -> Path? {
        let path = await recorder.waitFor(timeout: timeout, predicate)
        if path == nil {
            XCTFail("\(what): latest path \(String(describing: recorder.latest)) \(recorder.error ?? "")", file: file, line: line)
        }
        return path
    }

    /// The daemon's current interface list.
    func interface(_ name: String, from client: ReachabilityClient) async throws -> InterfaceDescription? {
        try await client.interfaces().first { $0.name == name }
    }
}
