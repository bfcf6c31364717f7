import Logging
import ReachabilityCore
import ReachConfiguration
@testable import NetlinkMonitor
@testable import ReachDaemon
import TestSupport
import XCTest

/// `StallReads`: the verdicts and estimates are handed on only when they change, a failed
/// read changes nothing, and forgetting says "no stalls" and "no estimates" once.
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
        let steps: [(String, () -> StallReads.Findings, expected: [Int32: Int]?)] = [
            ("first read: nothing judged yet", { reads.judge(Self.reading(healthy), at: 1, logger: logger) }, nil),
            ("retransmissions without progress: a stall on 2", { reads.judge(Self.reading(stalled), at: 2, logger: logger) }, [2: 2]),
            ("the same stall again: nothing to hand on", { reads.judge(Self.reading(stalledMore), at: 3, logger: logger) }, nil),
            ("a failed read changes nothing", { reads.judge(failed, at: 4, logger: logger) }, nil),
            ("skipped sockets: still the same verdicts", { reads.judge(Self.reading(stalledMore, skipped: 5), at: 5, logger: logger) }, nil),
            ("forgotten: no stalls, once", { reads.forget() }, [:]),
            ("forgotten again: nothing", { reads.forget() }, nil),
        ]
        for (name, step, expected) in steps {
            XCTAssertEqual(step().stalls?.mapValues(\.since), expected, name)
        }
    }

    /// The destroy watch is wanted while a stall stands, and only then; what it drains is
    /// judged with the read, a failed or overflowed drain being no evidence either way.
    func testTheDestroyWatchIsOpenWhileAStallStands() {
        var reads = StallReads(settings: ReachdConfiguration.Stall())
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        /// SYNs retrying to three networks, `retries` times so far.
        let retrying = { (retries: UInt32) in
            (1...3).map { TCPSocketSample(cookie: UInt64($0), interfaceIndex: 2, state: .synSent, destination: .v4(192, 0, UInt8($0), 1),
                                          segmentsSent: 1 + retries, retransmitted: retries, unacknowledged: 1) }
        }
        let answered = TCPSocketSample(cookie: 9, interfaceIndex: 2, destination: .v4(192, 0, 1, 1), segmentsSent: 4, segmentsReceived: 4)
        let givenUp = TCPSocketSample(cookie: 8, interfaceIndex: 2, state: .synSent, destination: .v4(192, 0, 2, 1), segmentsSent: 3,
                                      retransmitted: 2, unacknowledged: 1)
        let drained = { (samples: [TCPSocketSample], overflowed: Bool) -> Result<TCPSocketDiagnostics.Destroyed, NetlinkError>? in
            .success(TCPSocketDiagnostics.Destroyed(samples: samples, overflowed: overflowed))
        }
        let failed: Result<TCPSocketDiagnostics.Destroyed, NetlinkError>? = .failure(NetlinkError(operation: "recvfrom", libnlCode: 1))
        // (what happens, the verdicts handed on (nil: none), whether the watch is wanted after it)
        let steps: [(String, () -> StallReads.Findings, expected: [Int32: Int]?, watches: Bool)] = [
            ("the first read: no stall, no watch", { reads.judge(Self.reading(retrying(0)), at: 0, logger: logger) }, nil, false),
            ("a stall: the watch opens", { reads.judge(Self.reading(retrying(1)), at: 1, logger: logger) }, [2: 1], true),
            ("a SYN given up, destroyed: the stall and the watch stand",
             { reads.judge(Self.reading(retrying(2)), destroyed: drained([givenUp], false), at: 2, logger: logger) }, nil, true),
            ("a failed drain is unknown: both stand",
             { reads.judge(Self.reading(retrying(3)), destroyed: failed, at: 3, logger: logger) }, nil, true),
            ("a connection answered and closed between the reads: cleared, the watch closes",
             { reads.judge(Self.reading(retrying(4)), destroyed: drained([answered], false), at: 4, logger: logger) }, [:], false),
            ("stalled again: the watch opens again", { reads.judge(Self.reading(retrying(5)), at: 5, logger: logger) }, [2: 5], true),
            ("an overflowed drain: what it read still counts",
             { reads.judge(Self.reading(retrying(6)), destroyed: drained([answered], true), at: 6, logger: logger) }, [:], false),
            ("stalled once more", { reads.judge(Self.reading(retrying(7)), at: 7, logger: logger) }, [2: 7], true),
            ("forgotten: no stall, no watch", { reads.forget() }, [:], false),
            ("stalled after the forgetting (a fresh detector counts from zero)",
             { reads.judge(Self.reading(retrying(8)), at: 8, logger: logger) }, [2: 8], true),
            ("woke: no stall, no watch", { reads.startAfresh() }, [:], false),
        ]
        for (name, step, expected, watches) in steps {
            XCTAssertEqual(step().stalls?.mapValues(\.since), expected, name)
            XCTAssertEqual(reads.watchesDestroyedSockets, watches, name)
        }
    }

    /// The same reads measure the link: estimates handed on when they change, forgotten once.
    func testEstimatesAreHandedOnWhenTheyChange() {
        var reads = StallReads(settings: ReachdConfiguration.Stall())
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let start = ContinuousClock.now
        /// An upload at 30 ms, 50 Mbit/s: `k` MB acknowledged so far.
        let upload = { (k: UInt64) in
            Self.reading([TCPSocketSample(cookie: 1, interfaceIndex: 2, destination: .v4(192, 0, 2, 1), segmentsSent: UInt32(k) * 700,
                                          timing: TCPTiming(rtt: 30_000, minimumRTT: 29_000, deliveryRate: 6_250_000, bytesAcknowledged: k * 1_000_000))])
        }
        var classes: [LinkQuality?] = []
        for k in 1...4 {
            let findings = reads.judge(upload(UInt64(k)), at: k, instant: start + .seconds(k), logger: logger)
            classes.append(findings.linkQuality?[2]?.linkQuality)
        }
        XCTAssertEqual(classes, [.unknown, .unknown, .good, .good], "every read changed the estimate (its sample counts)")
        let idle = reads.judge(upload(4), at: 5, instant: start + .seconds(5), logger: logger)
        XCTAssertEqual(idle.linkQuality?[2]?.rtt, 30, "nothing new: the estimate fades, its values stand")
        XCTAssertEqual(reads.forget().linkQuality, [:])
        XCTAssertNil(reads.forget().linkQuality)
    }

    /// The stations of the Wi-Fi interfaces the sockets use are read beside them: the radio
    /// lowers the class and is reported; one that cannot be read is logged once and left out.
    func testWiFiStationsJoinTheEstimates() {
        var reads = StallReads(settings: ReachdConfiguration.Stall())
        let lines = RecordingLogHandler.Lines()
        let logger = Logger(label: "test") { _ in RecordingLogHandler(lines: lines) }
        let upload = { (k: UInt64, index: Int32) in
            TCPSocketSample(cookie: UInt64(index), interfaceIndex: index, destination: .v4(192, 0, 2, 1), segmentsSent: UInt32(k) * 700,
                            timing: TCPTiming(rtt: 5_000, minimumRTT: 4_000, deliveryRate: 6_250_000, bytesAcknowledged: k * 1_000_000))
        }
        // Sockets on 2 (wired) and 3 (Wi-Fi); 4 is Wi-Fi but carries nothing.
        XCTAssertEqual(reads.stationsToRead(Self.reading([upload(1, 2), upload(1, 3)]), wireless: [3, 4]), [3])
        XCTAssertEqual(reads.stationsToRead(Self.reading([upload(1, 2)]), wireless: [3, 4]), [], "no socket on a Wi-Fi interface")
        XCTAssertEqual(reads.stationsToRead(.failure(NetlinkError(operation: "sock_diag dump", errno: .permissionDenied)), wireless: [3]), [])

        let start = ContinuousClock.now
        let edge = WirelessStation(signal: -91, transmitBitRate: 6_000_000)
        let gone = NetlinkError(operation: "nl80211 station dump", errno: .operationNotSupportedByDevice)
        typealias Row = (station: Result<WirelessStation?, NetlinkError>, expected: LinkQuality, signal: Int?, why: String)
        let rows: [Row] = [
            (.success(edge), .minimal, -91, "at the cell's edge"),
            (.success(nil), .good, nil, "not associated: no radio term"),
            (.failure(gone), .good, nil, "the interface vanished"),
            (.failure(gone), .good, nil, "again: logged at debug"),
        ]
        var estimate: LinkQualityEstimate?
        for (n, row) in rows.enumerated() {
            for k in 1...4 {
                let reading = Self.reading([upload(UInt64(n * 4 + k), 2), upload(UInt64(n * 4 + k), 3)])
                let findings = reads.judge(reading, stations: [3: row.station], at: n * 4 + k, instant: start + .seconds(n * 4 + k), logger: logger)
                estimate = findings.linkQuality?[3] ?? estimate
                XCTAssertNil(findings.linkQuality?[2]?.signal, "the wired interface has no radio: \(row.why)")
            }
            XCTAssertEqual(estimate?.linkQuality, row.expected, row.why)
            XCTAssertEqual(estimate?.signal, row.signal, row.why)
        }
        let warnings = lines.all.filter { $0.contains("Wi-Fi station") }
        XCTAssertEqual(warnings.filter { $0.hasPrefix("warning") }.count, 1, "\(warnings)")
        XCTAssertEqual(warnings.filter { $0.hasPrefix("debug") }.count, 7, "\(warnings)")
    }
}
