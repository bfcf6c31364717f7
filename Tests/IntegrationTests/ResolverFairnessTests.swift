import Foundation
import ReachClient
import ReachProtocol
import ReachabilityCore
import TestSupport
import XCTest

/// One local user flooding CheckTarget with fresh names against a DNS
/// server that never answers must not block name resolution for anyone else. The only DNS
/// server is a stub in the test's router namespace: silent for names starting "flood",
/// NXDOMAIN at once for any other.
final class ResolverFairnessTests: DaemonTestCase {
    private var stub: Process?
    private var flooder: Process?

    override func tearDown() {
        for process in [flooder, stub].compactMap({ $0 }) where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        super.tearDown()
    }

    /// uid 65534 asks for 60 fresh names over 10 s, each on a raw Varlink connection of its
    /// own; meanwhile and for 10 s after, root's checks of fresh names in the namespace's
    /// hosts file and of fresh names the server answers (NXDOMAIN) each answer within a
    /// second. (Before the fix, both timed out behind the flood in the 2-thread pool.)
    func testOneUserCannotBlockAnothersNames() async throws {
        try topology.configureIPv4()
        // A fresh hosts-file name each round: a cached answer would prove nothing.
        let hosts = (1...60).map { "10.77.0.1 gateway-\($0).test\n" }.joined()
        try topology.hostFiles(hosts: "127.0.0.1 localhost\n" + hosts, nsswitch: "hosts: files dns\n", resolvConf: "nameserver 10.77.0.1\n")
        let ready = Pipe()
        stub = try Command.launch(
            ["ip", "netns", "exec", topology.router.name, "python3", Paths.repository.appendingPathComponent("Tests/Fixtures/dns_stub.py").path,
             "10.77.0.1", "silent-flood"], stdout: ready
        )
        XCTAssertTrue(String(decoding: ready.fileHandleForReading.availableData, as: UTF8.self).hasPrefix("ready"), "the DNS stub started")
        let (daemon, client) = try startDaemon()

        // The system's Python: one under root's home (pyenv) is out of uid 65534's reach.
        try requirePrerequisite(FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs /usr/bin/python3")
        let flood = Pipe()
        flooder = try Command.launch(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", Self.flooderScript, daemon.socketPath],
            stdout: flood, stderr: flood
        )
        let started = ContinuousClock.now
        var slowest: [String: Duration] = [:]
        var round = 0
        var mostThreads = 0
        while ContinuousClock.now - started < .seconds(20) {
            round += 1
            for name in ["gateway-\(round).test", "open-\(round).test"] {
                let asked = ContinuousClock.now
                let path = try await client.checkTarget(.host(name)).path
                let took = ContinuousClock.now - asked
                let kind = name.hasPrefix("gateway") ? "hosts file" : "DNS"
                slowest[kind] = max(slowest[kind] ?? .zero, took)
                let at = asked - started
                if name.hasPrefix("gateway") {
                    XCTAssertEqual(path.status, .satisfied, "\(name) at \(at): \(path)")
                } else {
                    XCTAssertEqual(path.unsatisfiedReason, .nameNotFound, "\(name) at \(at): \(path)")
                }
                XCTAssertLessThan(took, .seconds(1), "\(name) at \(at) took \(took)")
            }
            mostThreads = max(mostThreads, try threads(of: daemon.process.processIdentifier))
            try await Task.sleep(for: .milliseconds(500))
        }
        print("slowest answers to root under the flood and after: \(slowest); most threads in reachd: \(mostThreads)")
        // uid 65534 holds at most its share of resolver threads, however many names it asks for.
        XCTAssertLessThanOrEqual(mostThreads, 16, "reachd's threads under the flood")

        flooder?.waitUntilExit()
        let summary = String(decoding: flood.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        print("uid 65534's answers: \(summary)")
        // The flood reached the resolver: its names timed out (rather than being refused).
        XCTAssertTrue(summary.contains("resolutionTimedOut"), summary)
    }

    private func threads(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix("Threads:") } ?? ""
        return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) ?? 0
    }

    /// Opens one connection per name as the uid it runs as, 60 names over 10 s, and prints
    /// how many answers of each kind came back (a reason, or an error name).
    private static let flooderScript = #"""
        import collections, json, socket, sys, threading, time
        path, counts, lock = sys.argv[1], collections.Counter(), threading.Lock()
        def ask(index):
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
                    connection.settimeout(30)
                    connection.connect(path)
                    call = {"method": "io.reachd.Reachability.CheckTarget", "parameters": {"host": "flood-%d.test" % index}}
                    connection.sendall(json.dumps(call).encode() + b"\0")
                    reply = b""
                    while not reply.endswith(b"\0"):
                        chunk = connection.recv(65536)
                        if not chunk:
                            break
                        reply += chunk
                    answer = json.loads(reply.rstrip(b"\0"))
                    kind = answer.get("error") or answer["parameters"]["path"].get("unsatisfiedReason") or "answered"
            except Exception as error:
                kind = type(error).__name__
            with lock:
                counts[kind] += 1
        threads = []
        for index in range(60):
            thread = threading.Thread(target=ask, args=(index,))
            thread.start()
            threads.append(thread)
            time.sleep(10 / 60)
        for thread in threads:
            thread.join()
        print(dict(counts), flush=True)
        """#
}
