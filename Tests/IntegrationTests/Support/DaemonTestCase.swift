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

    /// The system calls `daemon` makes in the next `seconds` (`strace -f`), one line each.
    func systemCalls(of daemon: DaemonProcess, for seconds: Int = 10) throws -> [Substring] {
        // Not in a directory reachd watches (its socket's, its configuration's): writing
        // the trace would wake it.
        let trace = try temporaryDirectory("reachd-strace") + "/strace.out"
        // The test runner's children start with SIGINT and SIGTERM blocked: unblock them so
        // timeout's SIGINT makes strace detach and write what it saw.
        let unblocked = "import os, signal, sys; signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM}); os.execvp(sys.argv[1], sys.argv[1:])"
        _ = try runCommand(["python3", "-c", unblocked, "timeout", "-s", "INT", "\(seconds)",
                            "strace", "-f", "-qq", "-o", trace, "-p", "\(daemon.process.processIdentifier)"], allowFailure: true)
        return ((try? String(contentsOfFile: trace, encoding: .utf8)) ?? "").split(separator: "\n")
            // What each thread was blocked in when strace attached (never resumed), and the
            // detach, are not calls; a "resumed" line is one that returned: a wakeup.
            .filter { !$0.isEmpty && !$0.contains("<unfinished ...>") && !$0.contains("<detached ...>") }
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
