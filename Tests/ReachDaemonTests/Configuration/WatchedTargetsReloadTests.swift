import ReachabilityCore
import ReachConfiguration
import ReachDaemon
import ReachProtocol
import XCTest

/// `[targets] watch` changes in place on reload, and comes from the configuration file.
final class WatchedTargetsReloadTests: XCTestCase {
    private func options(_ targets: [WatchedTarget]) -> DaemonOptions {
        var options = DaemonOptions(socketPath: "/run/reachd/io.reachd.Reachability")
        options.watchedTargets = targets
        return options
    }

    func testPlans() {
        let db = WatchedTarget(.host("db.internal")), registry = WatchedTarget(.host("registry.internal"), uid: 1000)
        let cases: [(name: String, running: [WatchedTarget], proposed: [WatchedTarget], planned: [WatchedTarget]?, applied: [String])] = [
            ("unchanged", [db], [db], nil, []),
            ("one added", [db], [db, registry], [db, registry], ["watched targets"]),
            ("all removed", [db, registry], [], [], ["watched targets"]),
            ("reordered: the status lists them in the file's order", [db, registry], [registry, db], [registry, db], ["watched targets"]),
        ]
        for test in cases {
            let plan = ReloadPlan(running: options(test.running), proposed: options(test.proposed))
            XCTAssertEqual(plan.watchedTargets, test.planned, test.name)
            XCTAssertEqual(plan.appliedChanges, test.applied, test.name)
            XCTAssertEqual(plan.refused, [], test.name)
            XCTAssertEqual(ReloadPlan.applied(running: options(test.running), proposed: options(test.proposed)).watchedTargets, test.proposed, test.name)
        }
    }

    func testOptionsTakeTheFilesTargets() throws {
        let configuration = try ReachdConfiguration(parsing: "[targets]\nwatch = [\"db.internal\"]\n", file: "reachd.toml")
        let options = DaemonOptions(configuration: configuration, overrides: CommandLineOverrides(), environment: [:], uid: 0)
        XCTAssertEqual(options.watchedTargets, [WatchedTarget(.host("db.internal"))])
    }
}
