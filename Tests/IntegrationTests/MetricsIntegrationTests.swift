import Foundation
import ReachClient
import TestSupport
import XCTest

/// The metrics of a real reachd in a namespace, through every way out: GetMetrics
/// (`reachctl metrics`), the HTTP endpoint (TCP on the namespace's loopback, and a Unix
/// socket), and the textfile; each parsed by Prometheus' own parser, following real changes.
final class MetricsIntegrationTests: DaemonTestCase {
    private func startWithMetrics(_ table: String) throws -> DaemonProcess {
        let config = try temporaryDirectory("reachd-config") + "/reachd.toml"
        try "[metrics]\n\(table)".write(toFile: config, atomically: true, encoding: .utf8)
        return try startDaemon(extraArguments: ["--config", config]).0
    }

    /// `GET url` from inside the host namespace (urllib: no proxy, nothing leaves it).
    private func fetch(_ url: String, method: String = "GET") throws -> (status: Int, body: String) {
        let script = """
            import sys, urllib.request, urllib.error
            request = urllib.request.Request(sys.argv[1], method=sys.argv[2])
            try:
                with urllib.request.urlopen(request, timeout=5) as response:
                    body = response.read().decode()
                    print(response.status, response.headers.get("Content-Type"))
                    print(body, end="")
            except urllib.error.HTTPError as error:
                print(error.code, error.headers.get("Allow"))
            """
        let result = try Command.run(["ip", "netns", "exec", topology.host.name, "python3", "-c", script, url, method], unset: ["http_proxy", "HTTP_PROXY"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let firstLine = result.stdout.prefix { $0 != "\n" }
        return (Int(firstLine.split(separator: " ").first ?? "") ?? 0, String(result.stdout.dropFirst(firstLine.count + 1)))
    }

    private func satisfied(_ samples: Set<String>) -> String? {
        samples.first { $0.hasPrefix("reachd_path_satisfied{}") }
    }

    func testEndpointTextfileAndReachctlFollowTheNetwork() async throws {
        try requirePrerequisite(try Command.run(["python3", "-c", "import prometheus_client"]).status == 0,
                                "python3 prometheus_client not available (pip install prometheus-client)")
        try topology.configureIPv4()
        try topology.host.ip("link", "set", "lo", "up")
        let textfiles = try temporaryDirectory("reachd-textfile")
        let daemon = try startWithMetrics("listen = \"127.0.0.1:9799\"\ntextfile-directory = \"\(textfiles)\"\n")

        // Satisfied: the same answer three ways.
        let http = try fetch("http://127.0.0.1:9799/metrics")
        XCTAssertEqual(http.status, 200)
        let scraped = try PrometheusTools.samples(http.body)
        XCTAssertEqual(satisfied(scraped), "reachd_path_satisfied{} 1")
        XCTAssertTrue(scraped.contains(#"reachd_path_info{primary_interface="eth0",primary_type="wiredEthernet",unsatisfied_reason=""} 1"#))
        XCTAssertTrue(scraped.contains(#"reachd_interface_carrier{device="eth0"} 1"#))
        print("scrape, satisfied:\n\(http.body)")
        let viaVarlink = try reachctl(["metrics", "--socket", daemon.socketPath])
        XCTAssertEqual(viaVarlink.status, 0, viaVarlink.stderr)
        XCTAssertEqual(satisfied(try PrometheusTools.samples(viaVarlink.stdout)), "reachd_path_satisfied{} 1")
        let file = textfiles + "/reachd.prom"
        XCTAssertEqual(satisfied(try PrometheusTools.samples(String(contentsOfFile: file, encoding: .utf8))), "reachd_path_satisfied{} 1")
        if let promtool = PrometheusTools.promtool {
            let checked = try PrometheusTools.check(http.body, promtool: promtool)
            XCTAssertEqual(checked.status, 0, checked.output)
            print("promtool check metrics: exit \(checked.status), \(checked.output.isEmpty ? "no complaint" : checked.output)")
        } else if ProcessInfo.processInfo.environment["CI"] != nil {
            XCTFail("promtool not available (scripts/bootstrap --test unpacks it)")
        }

        // The path goes: all three follow, the changes counter counts it.
        try topology.host.ip("route", "del", "default")
        var after = ""
        for _ in 0..<100 {
            after = try String(contentsOfFile: file, encoding: .utf8)
            if after.contains("reachd_path_satisfied 0") { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        let fileSamples = try PrometheusTools.samples(after)
        XCTAssertEqual(satisfied(fileSamples), "reachd_path_satisfied{} 0", "the textfile is rewritten on the change")
        XCTAssertTrue(fileSamples.contains(#"reachd_path_info{primary_interface="",primary_type="",unsatisfied_reason="noRoute"} 1"#), "\(fileSamples)")
        XCTAssertTrue(fileSamples.contains("reachd_path_changes_total{} 1"))
        let unsatisfied = try fetch("http://127.0.0.1:9799/metrics")
        XCTAssertEqual(satisfied(try PrometheusTools.samples(unsatisfied.body)), "reachd_path_satisfied{} 0")
        print("scrape, unsatisfied:\n\(unsatisfied.body)")

        // Only GET/HEAD /metrics.
        XCTAssertEqual(try fetch("http://127.0.0.1:9799/other").status, 404)
        XCTAssertEqual(try fetch("http://127.0.0.1:9799/metrics", method: "POST").status, 405)
        XCTAssertEqual(try fetch("http://127.0.0.1:9799/metrics", method: "HEAD").status, 200)
    }

    /// The textfile is replaced whole: a reader parsing it in a loop while the path flaps
    /// 100 times never sees part of a file.
    func testTextfileIsNeverSeenHalfWritten() async throws {
        try requirePrerequisite(try Command.run(["python3", "-c", "import prometheus_client"]).status == 0,
                                "python3 prometheus_client not available (pip install prometheus-client)")
        try topology.configureIPv4()
        let textfiles = try temporaryDirectory("reachd-textfile")
        let daemon = try startWithMetrics("textfile-directory = \"\(textfiles)\"\n")
        let stop = textfiles + "/stop"
        let out = Pipe()
        let reader = try Command.launch(
            ["python3", Paths.repository.appendingPathComponent("Tests/Fixtures/read_textfile.py").path, textfiles + "/reachd.prom", stop],
            stdout: out
        )
        for _ in 0..<50 {
            try topology.host.ip("route", "del", "default")
            try await Task.sleep(for: .milliseconds(5))
            try topology.host.ip("route", "add", "default", "via", "10.77.0.1", "dev", "eth0")
            try await Task.sleep(for: .milliseconds(5))
        }
        try await Task.sleep(for: .milliseconds(200))
        _ = FileManager.default.createFile(atPath: stop, contents: nil)
        reader.waitUntilExit()
        let report = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        print("textfile reader: \(report)")
        XCTAssertEqual(reader.terminationStatus, 0, report)
        XCTAssertTrue(report.contains("satisfied-values [0.0, 1.0]"), "the reader saw both states: \(report)")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: textfiles).filter { $0 != "stop" }
        XCTAssertEqual(leftovers, ["reachd.prom"], "no temporary file left behind")
        withExtendedLifetime(daemon) {}
    }

    /// A Unix-socket endpoint, and a configuration reachd refuses.
    func testUnixSocketEndpointAndBadConfiguration() async throws {
        try topology.configureIPv4()
        let directory = try temporaryDirectory("reachd-metrics-socket")
        _ = try startWithMetrics("listen = \"\(directory)/metrics.sock\"\n")
        let curl = try Command.run(["python3", "-c", """
            import socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sys.argv[1])
            s.sendall(b"GET /metrics HTTP/1.1\\r\\nHost: reachd\\r\\n\\r\\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk: break
                data += chunk
            print(data.decode().split("\\r\\n\\r\\n", 1)[1], end="")
            """, directory + "/metrics.sock"])
        XCTAssertEqual(curl.status, 0, curl.stderr)
        XCTAssertTrue(curl.stdout.contains("reachd_path_satisfied 1"), curl.stdout)

        let config = try temporaryDirectory("reachd-config") + "/reachd.toml"
        for (table, message) in [("listen = \"localhost:9799\"", "is neither ADDRESS:PORT"), ("textfile-directory = \"relative\"", "is not an absolute path")] {
            try "[metrics]\n\(table)\n".write(toFile: config, atomically: true, encoding: .utf8)
            let checked = try Command.run([Paths.product("reachd"), "--config", config, "--check-config"])
            XCTAssertNotEqual(checked.status, 0, table)
            XCTAssertTrue((checked.stdout + checked.stderr).contains(message), "\(table): \(checked.stdout)\(checked.stderr)")
        }
    }
}
