import Logging
import ReachabilityCore
import ReachMetrics
import ReachProtocol
import ReachSystemd
import TestSupport
import XCTest

/// Watched targets in the metrics and the journal: what each answer becomes.
final class WatchedTargetSeriesTests: XCTestCase {
    private static let reachable = TargetPath(status: .satisfied, reachability: .reachableViaWired, flags: [.reachable], primaryInterface: "eth0",
                                              primaryInterfaceType: .wiredEthernet)
    private static let noRoute = TargetPath(status: .unsatisfied, unsatisfiedReason: .noRoute, reachability: .notReachable)

    func testSeries() throws {
        try requirePrerequisite(try Command.run(["python3", "-c", "import prometheus_client"]).status == 0,
                                "python3 prometheus_client not available (pip install prometheus-client)")
        let cases: [(name: String, targets: [WatchedTargetStatus], expected: Set<String>)] = [
            ("none configured: no series", [], []),
            ("not answered yet: no guess either way", [WatchedTargetStatus(target: "db.internal")], []),
            ("reachable, unreachable, and per uid", [
                WatchedTargetStatus(target: "db.internal", path: Self.reachable),
                WatchedTargetStatus(target: "10.0.0.5", path: Self.noRoute),
                WatchedTargetStatus(target: "db.internal", uid: 1000, path: TargetPath(status: .unsatisfied, unsatisfiedReason: .nameNotFound,
                                                                                        reachability: .notReachable)),
            ], [
                #"reachd_target_reachable{target="db.internal"} 1"#, #"reachd_target_reachable{target="10.0.0.5"} 0"#,
                #"reachd_target_reachable{target="db.internal",uid="1000"} 0"#,
                #"reachd_target_info{interface="eth0",target="db.internal",unsatisfied_reason=""} 1"#,
                #"reachd_target_info{interface="",target="10.0.0.5",unsatisfied_reason="noRoute"} 1"#,
                #"reachd_target_info{interface="",target="db.internal",uid="1000",unsatisfied_reason="nameNotFound"} 1"#,
            ]),
            ("an interface name from the kernel is escaped", [
                WatchedTargetStatus(target: "db.internal", path: TargetPath(status: .satisfied, reachability: .reachableViaOther, primaryInterface: "t\u{1B}[2J")),
            ], [
                #"reachd_target_reachable{target="db.internal"} 1"#,
                #"reachd_target_info{interface="t\x1b[2J",target="db.internal",unsatisfied_reason=""} 1"#,
            ]),
        ]
        for test in cases {
            var facts = MetricsFacts(state: ReachabilityState(snapshot: NetworkSnapshot(), policy: InterfacePolicy()), sequence: 1, lastChange: 0,
                                     subscribers: 0, refusals: [:], netlinkEvents: 0, resyncs: [:], probing: false)
            facts.targets = test.targets
            let text = MetricsExposition.text(facts)
            let samples = try PrometheusTools.samples(text).filter { $0.hasPrefix("reachd_target_") }
            XCTAssertEqual(samples, test.expected, test.name)
            if let promtool = PrometheusTools.promtool {
                let checked = try PrometheusTools.check(text, promtool: promtool)
                XCTAssertEqual(checked.status, 0, "\(test.name): \(checked.output)")
            }
        }
    }

    func testJournalEntries() {
        func rendered(_ metadata: Logger.Metadata) -> [String] { metadata.map { "\($0.key)=\($0.value)" }.sorted() }
        let cases: [(name: String, target: String, uid: UInt32?, path: TargetPath, line: String, fields: [String])] = [
            ("reachable", "db.internal", nil, Self.reachable, "target db.internal: satisfied via eth0", [
                "MESSAGE_ID=\(JournalTrail.targetChanged)", "REACHD_TARGET=db.internal", "REACHD_TARGET_INTERFACE=eth0",
                "REACHD_TARGET_REACHABILITY=reachableViaWired", "REACHD_TARGET_STATUS=satisfied",
            ]),
            ("no route, as a uid", "10.0.0.5", 1000, Self.noRoute, "target 10.0.0.5 (uid 1000): unsatisfied (noRoute)", [
                "MESSAGE_ID=\(JournalTrail.targetChanged)", "REACHD_TARGET=10.0.0.5", "REACHD_TARGET_REACHABILITY=notReachable",
                "REACHD_TARGET_REASON=noRoute", "REACHD_TARGET_STATUS=unsatisfied", "REACHD_TARGET_UID=1000",
            ]),
        ]
        for test in cases {
            XCTAssertEqual(JournalTrail.line(target: test.target, uid: test.uid, path: test.path), test.line, test.name)
            XCTAssertEqual(rendered(JournalTrail.fields(target: test.target, uid: test.uid, path: test.path)), test.fields, test.name)
        }
        XCTAssertNotEqual(JournalTrail.targetChanged, JournalTrail.pathChanged)
    }
}
