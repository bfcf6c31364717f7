import Logging
import NIOEmbedded
@testable import ReachConnectivity
import ReachabilityCore
import ReachTargets
import TestSupport
import XCTest

/// The engine's stall verdicts in the connectivity table: each stalled interface gets its
/// `dataStall`, a cleared one loses it, a link the kernel view does not have is left out.
final class ConnectivityStallTests: XCTestCase {
    func testStallsReachTheTableAndLeaveIt() {
        let loop = EmbeddedEventLoop()
        let work = BlockingWork(eventLoop: loop)
        let monitor = ConnectivityMonitor(
            settings: ConnectivitySettings(), eventLoop: loop, logger: Logger(label: "test"),
            resolver: NameResolver(eventLoop: loop, work: work, resolvedSocket: nil), work: work, probeTLS: nil, apiTLS: nil
        )
        var published: [ConnectivityTable] = []
        monitor.onChange = { published.append($0) }
        monitor.update(snapshot: makeSnapshot(), policy: InterfacePolicy())

        let steps: [(name: String, stalls: [Int32: DataStall], table: ConnectivityTable, published: Int)] = [
            ("eth0 stalls", [2: Self.stall(100)], [2: InterfaceConnectivity(dataStall: Self.stall(100))], 1),
            ("the same again: nothing new", [2: Self.stall(100)], [2: InterfaceConnectivity(dataStall: Self.stall(100))], 1),
            ("wlan0 too, and an interface the kernel view lacks", [2: Self.stall(100), 3: Self.stall(105), 99: Self.stall(105)],
             [2: InterfaceConnectivity(dataStall: Self.stall(100)), 3: InterfaceConnectivity(dataStall: Self.stall(105))], 2),
            ("eth0 flows again", [3: Self.stall(105)], [3: InterfaceConnectivity(dataStall: Self.stall(105))], 3),
            ("everything flows", [:], [:], 4),
        ]
        for step in steps {
            monitor.update(stalls: step.stalls)
            XCTAssertEqual(monitor.table, step.table, step.name)
            XCTAssertEqual(published.count, step.published, step.name)
        }
        XCTAssertEqual(monitor.table[2]?.combined, nil)
        monitor.update(stalls: [2: Self.stall(7)])
        XCTAssertEqual(monitor.table[2]?.combined, .limited, "a stalled interface without probes is limited")
        XCTAssertEqual(monitor.table[2]?.cause, .dataStall)
        monitor.stop()
        try? loop.syncShutdownGracefully()
    }

    /// A stall since `since` resting on three sockets to three destinations of one user.
    private static func stall(_ since: Int) -> DataStall { DataStall(since: since, sockets: 3, destinations: 3, users: 1) }
}
