import Foundation
import TestSupport
import XCTest

/// The shipped alerting rules and Grafana dashboard: promtool checks and unit-tests the
/// rules, and both name only series reachd exports.
final class ShippedPrometheusFilesTests: XCTestCase {
    private let rules = Paths.repository.appendingPathComponent("packaging/prometheus/reachd-rules.yml").path
    private let rulesTest = Paths.repository.appendingPathComponent("packaging/prometheus/reachd-rules.test.yml").path
    private let dashboard = Paths.repository.appendingPathComponent("packaging/grafana/reachd-dashboard.json").path

    func testPromtoolChecksAndTestsTheRules() throws {
        guard let promtool = PrometheusTools.promtool else {
            return try requirePrerequisite(false, "promtool not available (scripts/bootstrap --test unpacks it)")
        }
        let checked = try Command.run([promtool, "check", "rules", rules])
        print(checked.stdout + checked.stderr)
        XCTAssertEqual(checked.status, 0, checked.stdout + checked.stderr)
        XCTAssertTrue(checked.stdout.contains("SUCCESS: 5 rules found"), checked.stdout)
        let tested = try Command.run([promtool, "test", "rules", rulesTest])
        print(tested.stdout + tested.stderr)
        XCTAssertEqual(tested.status, 0, tested.stdout + tested.stderr)
        XCTAssertTrue(tested.stdout.contains("SUCCESS"), tested.stdout)
    }

    /// Every `reachd_…` name in the rules and the dashboard is one MetricsExposition writes.
    func testOnlyExportedSeriesAreNamed() throws {
        let exposition = try String(contentsOf: Paths.repository.appendingPathComponent("Sources/ReachMetrics/MetricsExposition.swift"), encoding: .utf8)
        let exported = Set(exposition.matches(of: /"(reachd_[a-z_]+)"/).map { String($0.output.1) })
        XCTAssertTrue(exported.contains("reachd_path_satisfied"))
        for file in [rules, rulesTest, dashboard] {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            let named = Set(text.matches(of: /\b(reachd_[a-z_]+)/).map { String($0.output.1) }).subtracting(["reachd_rules"])
            XCTAssertFalse(named.isEmpty, file)
            XCTAssertEqual(named.subtracting(exported).sorted(), [], "\(file) names series reachd does not export")
        }
    }

    /// The dashboard is Grafana JSON with a host variable every query uses.
    func testDashboardShape() throws {
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dashboard))) as? [String: Any])
        let variables = ((object["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        XCTAssertEqual(variables, ["datasource", "instance"])
        let panels = try XCTUnwrap(object["panels"] as? [[String: Any]])
        let expressions = panels.flatMap { ($0["targets"] as? [[String: Any]]) ?? [] }.compactMap { $0["expr"] as? String }
        XCTAssertEqual(expressions.count, panels.count, "one query per panel")
        for expression in expressions { XCTAssertTrue(expression.contains(#"{instance=~"$instance"}"#), expression) }
        XCTAssertEqual(Set(panels.compactMap { $0["id"] as? Int }).count, panels.count, "panel ids are unique")
    }
}
