import Logging
import ReachabilityCore
import ReachDaemon
import XCTest

final class ReloadPlanTests: XCTestCase {
    private func options(_ change: (inout DaemonOptions) -> Void = { _ in }) -> DaemonOptions {
        var options = DaemonOptions(socketPath: "/run/reachd/io.reachd.Reachability")
        change(&options)
        return options
    }

    func testPlans() {
        let newPolicy = InterfacePolicy(ignoredPatterns: ["tun*"])
        let cases: [(name: String, proposed: DaemonOptions, policy: InterfacePolicy?, level: Logger.Level?, refused: [String])] = [
            ("nothing changed", options(), nil, nil, []),
            ("policy", options { $0.policy = newPolicy }, newPolicy, nil, []),
            ("log level", options { $0.logLevel = .debug }, nil, .debug, []),
            (
                "socket path refused",
                options { $0.socketPath = "/run/other.sock" }, nil, nil,
                ["socket path change from /run/reachd/io.reachd.Reachability to /run/other.sock refused: moving the socket would drop connected clients; restart reachd to apply it"]
            ),
            (
                "socket mode refused",
                options { $0.socketMode = 0o600 }, nil, nil,
                ["socket mode change from 0666 to 0600 refused: the socket is not re-created while clients are connected; restart reachd to apply it"]
            ),
            (
                "metrics wait for a restart (the endpoint is bound once)",
                options { $0.metrics.textfileDirectory = "/var/lib/prometheus/node-exporter" }, nil, nil,
                ["[metrics] changes take effect at the next restart"]
            ),
            (
                "receive buffer waits for a restart",
                options { $0.engine.receiveBufferSize = 1 << 20 }, nil, nil,
                ["netlink receive-buffer-size change from 8388608 to 1048576 takes effect at the next restart"]
            ),
            (
                "DNS64 discovery waits for a restart",
                options { $0.engine.nat64.discoverDNS64 = false }, nil, nil,
                ["[nat64] changes take effect at the next restart"]
            ),
        ]
        for testCase in cases {
            let plan = ReloadPlan(running: options(), proposed: testCase.proposed)
            XCTAssertEqual(plan.policy, testCase.policy, testCase.name)
            XCTAssertEqual(plan.logLevel, testCase.level, testCase.name)
            XCTAssertEqual(plan.refused, testCase.refused, testCase.name)
        }
    }

    func testAppliedKeepsRefusedSettings() {
        let proposed = options {
            $0.socketPath = "/elsewhere"
            $0.socketMode = 0o600
            $0.logLevel = .error
            $0.policy = InterfacePolicy(ignoredPatterns: [])
            $0.engine.receiveBufferSize = 1 << 20
        }
        let next = ReloadPlan.applied(running: options(), proposed: proposed)
        XCTAssertEqual(next.socketPath, "/run/reachd/io.reachd.Reachability")
        XCTAssertEqual(next.socketMode, 0o666)
        XCTAssertEqual(next.engine.receiveBufferSize, 8 << 20)
        XCTAssertEqual(next.logLevel, .error)
        XCTAssertEqual(next.policy, InterfacePolicy(ignoredPatterns: []))
        XCTAssertEqual(ReloadPlan(running: options(), proposed: proposed).appliedChanges.count, 2)
    }
}
