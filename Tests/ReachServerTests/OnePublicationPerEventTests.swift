import Logging
import NIOEmbedded
import ReachabilityCore
@testable import ReachServer
import TestSupport
import XCTest

/// One kernel event is one publication: when the snapshot that moves the path also moves
/// connectivity (here a router advertisement announcing a captive-portal API on the
/// primary interface), the core publishes both at once, one sequence and one `STATUS=`,
/// never the path first and the connectivity after it.
final class OnePublicationPerEventTests: XCTestCase {
    func testAKernelEventThatAlsoMovesConnectivityIsOnePublication() {
        let loop = EmbeddedEventLoop()
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let core = ServerCore.embedded(loop, engine: ScriptedEngine(), logger: logger)
        let cases: [(name: String, snapshot: NetworkSnapshot, published: Int, portalOn: Int32?)] = [
            ("the gateway moves and eth0 announces a portal API",
             Self.snapshot(gateway: "10.0.0.254", portal: "https://portal.example/api"), 1, 2),
            ("the same again", Self.snapshot(gateway: "10.0.0.254", portal: "https://portal.example/api"), 0, 2),
            ("the gateway moves back and the announcement goes",
             Self.snapshot(gateway: "10.0.0.1", portal: nil), 1, nil),
            ("only the announcement", Self.snapshot(gateway: "10.0.0.1", portal: "https://portal.example/api"), 1, 2),
        ]
        for test in cases {
            let before = core.publication.sequence
            core.update(snapshot: test.snapshot)
            XCTAssertEqual(core.publication.sequence - before, test.published, test.name)
            XCTAssertEqual(core.publication.state.connectivity[2]?.captivePortal?.apiURI != nil, test.portalOn == 2,
                           "\(test.name): \(core.publication.state.connectivity)")
        }
        try? loop.syncShutdownGracefully()
    }

    private static func snapshot(gateway: String, portal: String?) -> NetworkSnapshot {
        var snapshot = makeSnapshot(ethGateway: gateway)
        if let portal { snapshot.announcedCaptivePortals = [2: portal] }
        return snapshot
    }
}
