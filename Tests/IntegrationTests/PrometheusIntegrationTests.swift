import Foundation
import Glibc
import TestSupport
import XCTest

/// A real Prometheus server (Debian's) scraping a real reachd, both on the loopback of the
/// test's host namespace, with the shipped alerting rules: a deleted default route must
/// make `ReachdPathNotSatisfied` fire in the server, and every query of the shipped Grafana
/// dashboard must return data from it.
final class PrometheusIntegrationTests: DaemonTestCase {
    private var prometheus: Process?
    private var probeServer: Process?

    override func tearDown() {
        // Children of the test runner have SIGTERM blocked.
        for process in [prometheus, probeServer].compactMap({ $0 }) {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        super.tearDown()
    }

    private static let metricsAddress = "127.0.0.1:9798"
    private static let prometheusAddress = "127.0.0.1:9090"

    /// The shipped rules with every `for:` shortened to 1 s, so an alert fires within seconds.
    static func rulesForTest(_ shipped: String) -> String {
        shipped.replacing(/(?m)^(\s+for:) \S+$/) { "\($0.output.1) 1s" }
    }

    /// Every `targets[].expr` of the dashboard, with the Grafana variables a real Grafana
    /// would substitute: the one host, and a rate interval of a few scrapes.
    static func dashboardQueries(_ json: Data, instance: String) throws -> [String] {
        struct Dashboard: Decodable {
            struct Panel: Decodable {
                struct Target: Decodable { var expr: String }
                var title: String
                var targets: [Target]
            }
            var panels: [Panel]
        }
        return try JSONDecoder().decode(Dashboard.self, from: json).panels.flatMap(\.targets).map { target in
            target.expr.replacing("$__rate_interval", with: "15s").replacing("$instance", with: instance)
        }
    }

    /// `GET http://127.0.0.1:9090PATH` from inside the host namespace (urllib, no proxy):
    /// the body, or nil when Prometheus does not answer (yet).
    private func prometheusGet(_ pathAndQuery: String) throws -> String? {
        let script = """
            import sys, urllib.request
            try:
                with urllib.request.urlopen(sys.argv[1], timeout=5) as response:
                    sys.stdout.write(response.read().decode())
            except Exception as error:
                sys.stderr.write(str(error))
                sys.exit(1)
            """
        let result = try Command.run(["ip", "netns", "exec", topology.host.name, "python3", "-c", script,
                                      "http://\(Self.prometheusAddress)\(pathAndQuery)"], unset: ["http_proxy", "HTTP_PROXY"])
        return result.status == 0 ? result.stdout : nil
    }

    /// `data` of an API answer whose status is success.
    private func apiData(_ pathAndQuery: String) throws -> Any? {
        guard let body = try prometheusGet(pathAndQuery),
              let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
              object["status"] as? String == "success" else { return nil }
        return object["data"]
    }

    private static func encoded(_ query: String) -> String {
        query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? query
    }

    func testShippedRulesFireAfterARouteDeletionAndEveryDashboardQueryAnswers() async throws {
        guard let binary = PrometheusTools.prometheus else {
            return try requirePrerequisite(false, "prometheus not available (scripts/bootstrap --test unpacks Debian's)")
        }
        let started = Date()
        try topology.configureIPv4()
        try topology.router.ip("addr", "add", "198.51.100.7/32", "dev", "lo")
        try topology.host.ip("route", "add", "198.51.100.7/32", "via", "10.77.0.1", "dev", "eth0")
        // The probe endpoint in the router, so the connectivity and probe series exist.
        let work = try temporaryDirectory("reachd-prometheus")
        try #"{"http": "204"}"#.write(toFile: work + "/probe-state.json", atomically: true, encoding: .utf8)
        probeServer = try topology.launchRouterServer("probe_server.py", [work + "/probe-state.json"])
        let config = work + "/reachd.toml"
        try """
            [metrics]
            listen = "\(Self.metricsAddress)"
            [probe]
            url = "http://10.77.0.1/generate_204"
            timeout = 2
            initial-delay = 1
            maximum-delay = 2
            families = ["ipv4"]
            [targets]
            watch = ["198.51.100.7"]
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let (daemon, _) = try startDaemon(extraArguments: ["--config", config])

        // Prometheus: the shipped rules (for: shortened), one job scraping reachd every second.
        let shipped = try String(contentsOf: Paths.repository.appendingPathComponent("packaging/prometheus/reachd-rules.yml"), encoding: .utf8)
        let rules = Self.rulesForTest(shipped)
        XCTAssertTrue(rules.contains("for: 1s") && !rules.contains("for: 5m"), rules)
        try rules.write(toFile: work + "/reachd-rules.yml", atomically: true, encoding: .utf8)
        try """
            global:
              scrape_interval: 1s
              evaluation_interval: 1s
            rule_files: ["\(work)/reachd-rules.yml"]
            scrape_configs:
              - job_name: reachd
                static_configs:
                  - targets: ["\(Self.metricsAddress)"]
            """.write(toFile: work + "/prometheus.yml", atomically: true, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: work + "/prometheus.log", contents: nil)
        let log = FileHandle(forWritingAtPath: work + "/prometheus.log")
        prometheus = try Command.launch(
            ["ip", "netns", "exec", topology.host.name, binary, "--config.file=\(work)/prometheus.yml",
             "--storage.tsdb.path=\(work)/data", "--web.listen-address=\(Self.prometheusAddress)", "--log.level=warn"],
            stdout: log, stderr: log
        )
        var ready = false
        for _ in 0..<100 where !ready {
            ready = try prometheusGet("/-/ready") != nil
            if !ready { try await Task.sleep(for: .milliseconds(100)) }
        }
        let prometheusLog = { (try? String(contentsOfFile: work + "/prometheus.log", encoding: .utf8)) ?? "" }
        XCTAssertTrue(ready, "Prometheus ready within 10 s: \(prometheusLog())")
        let loaded = try XCTUnwrap(try apiData("/api/v1/rules") as? [String: Any])
        let ruleNames = ((loaded["groups"] as? [[String: Any]]) ?? []).flatMap { ($0["rules"] as? [[String: Any]]) ?? [] }.compactMap { $0["name"] as? String }
        XCTAssertEqual(ruleNames, ["ReachdPathNotSatisfied", "ReachdCaptivePortal", "ReachdPathFlapping", "ReachdNetlinkResyncs", "ReachdTargetUnreachable"])

        // Scraped, satisfied, probed: reachd_probe_success is there once a round finished.
        var scraped = false
        for _ in 0..<100 where !scraped {
            let result = try apiData("/api/v1/query?query=" + Self.encoded("reachd_probe_success == 1 and on(instance) reachd_path_satisfied == 1"))
            scraped = !(((result as? [String: Any])?["result"] as? [Any]) ?? []).isEmpty
            if !scraped { try await Task.sleep(for: .milliseconds(100)) }
        }
        XCTAssertTrue(scraped, "reachd scraped, satisfied and probed within 10 s; reachd log:\n\(daemon.log)\nprometheus:\n\(prometheusLog())")
        let firing = try apiData("/api/v1/alerts") as? [String: Any]
        XCTAssertEqual((firing?["alerts"] as? [Any])?.count, 0, "no alert while the path is satisfied: \(String(describing: firing))")

        // The default route goes: the alert must fire in the real server.
        let deleted = Date()
        try topology.host.ip("route", "del", "default")
        var alertJSON: String?
        for _ in 0..<150 where alertJSON == nil {
            if let body = try prometheusGet("/api/v1/alerts"), body.contains(#""alertname":"ReachdPathNotSatisfied""#),
               body.contains(#""state":"firing""#) {
                alertJSON = body
            } else {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        let body = try XCTUnwrap(alertJSON, "ReachdPathNotSatisfied firing within 15 s; prometheus:\n\(prometheusLog())")
        print("/api/v1/alerts, \(String(format: "%.1f", Date().timeIntervalSince(deleted))) s after the route deletion:\n\(body)")
        XCTAssertTrue(body.contains(#""instance":"\#(Self.metricsAddress)""#), body)
        XCTAssertTrue(body.contains("(reason: noRoute)"), "the annotation's query found the reason: \(body)")
        XCTAssertTrue(body.contains(#""severity":"critical""#), body)
        // Ground truth: the host really has no route to the internet.
        let ping = try Command.run(["ip", "netns", "exec", topology.host.name, "ping", "-n", "-c", "1", "-W", "1", "192.0.2.1"])
        XCTAssertNotEqual(ping.status, 0, "no route, no answer: \(ping.stdout)")

        // Every dashboard query returns data over the run.
        let dashboard = try Data(contentsOf: Paths.repository.appendingPathComponent("packaging/grafana/reachd-dashboard.json"))
        let queries = try Self.dashboardQueries(dashboard, instance: Self.metricsAddress)
        XCTAssertGreaterThanOrEqual(queries.count, 10)
        let (start, end) = (Int(started.timeIntervalSince1970), Int(Date().timeIntervalSince1970) + 1)
        for query in queries {
            let data = try apiData("/api/v1/query_range?query=\(Self.encoded(query))&start=\(start)&end=\(end)&step=1")
            let series = ((data as? [String: Any])?["result"] as? [Any]) ?? []
            XCTAssertFalse(series.isEmpty, "no data for the dashboard's \(query)")
            print("dashboard query: \(query): \(series.count) series")
        }
        print("Prometheus test ran \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }
}
