import Logging
import ReachabilityCore
import ReachConfiguration
@testable import NetlinkMonitor
@testable import ReachDaemon
import XCTest

/// `StallReads`: the verdicts are handed on only when they change, a failed read changes
/// nothing, and forgetting says "no stalls" once.
final class StallReadsTests: XCTestCase {
    private static func socket(_ cookie: UInt64, sent: UInt32, received: UInt32, retransmitted: UInt32, lost: UInt32, unacked: UInt32) -> TCPSocketSample {
        TCPSocketSample(cookie: cookie, interfaceIndex: 2, state: .other, destination: .v4(192, 0, 2, UInt8(cookie)), uid: 1000,
                        segmentsSent: sent, segmentsReceived: received, retransmitted: retransmitted, lost: lost, unacknowledged: unacked)
    }

    private static func reading(_ sockets: [TCPSocketSample], skipped: Int = 0) -> Result<TCPSocketDiagnostics.Reading, NetlinkError> {
        .success(TCPSocketDiagnostics.Reading(samples: sockets, skipped: skipped))
    }

    func testVerdictsAreHandedOnOnlyWhenTheyChange() {
        var settings = ReachdConfiguration.Stall()
        settings.rule.minimumDestinations = 1
        var reads = StallReads(settings: settings)
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let healthy = [Self.socket(1, sent: 900, received: 700, retransmitted: 1, lost: 12, unacked: 12)]
        let stalled = [Self.socket(1, sent: 902, received: 700, retransmitted: 3, lost: 12, unacked: 12)]
        let stalledMore = [Self.socket(1, sent: 903, received: 700, retransmitted: 4, lost: 12, unacked: 12)]
        let failed: Result<TCPSocketDiagnostics.Reading, NetlinkError> = .failure(NetlinkError(operation: "sock_diag", libnlCode: 1))
        let steps: [(String, () -> [Int32: DataStall]?, expected: [Int32: Int]?)] = [
            ("first read: nothing judged yet", { reads.judge(Self.reading(healthy), at: 1, logger: logger) }, nil),
            ("retransmissions without progress: a stall on 2", { reads.judge(Self.reading(stalled), at: 2, logger: logger) }, [2: 2]),
            ("the same stall again: nothing to hand on", { reads.judge(Self.reading(stalledMore), at: 3, logger: logger) }, nil),
            ("a failed read changes nothing", { reads.judge(failed, at: 4, logger: logger) }, nil),
            ("skipped sockets: still the same verdicts", { reads.judge(Self.reading(stalledMore, skipped: 5), at: 5, logger: logger) }, nil),
            ("forgotten: no stalls, once", { reads.forget() }, [:]),
            ("forgotten again: nothing", { reads.forget() }, nil),
        ]
        for (name, step, expected) in steps {
            XCTAssertEqual(step()?.mapValues(\.since), expected, name)
        }
    }
}
