import ReachabilityCore
import XCTest

/// The link-quality rule as tables: the classifier's bounds and hysteresis, and the
/// estimator fed reads of the host's sockets.
final class LinkQualityTests: XCTestCase {
    // MARK: Classifier

    func testClassesAndHysteresis() {
        typealias Row = (value: Double, bounds: LinkQualityClassifier.Bounds, previous: LinkQuality, expected: LinkQuality, why: String)
        let rtt = LinkQualityClassifier.rtt, rate = LinkQualityClassifier.rate, loss = LinkQualityClassifier.loss
        let rows: [Row] = [
            (20, rtt, .unknown, .good, "a LAN's RTT"),
            (203, rtt, .unknown, .good, "just under 3G's bound"),
            (204, rtt, .unknown, .moderate, "3G's bound"),
            (600, rtt, .unknown, .moderate, "a 600 ms path"),
            (1280, rtt, .unknown, .minimal, "2G's bound"),
            (2400, rtt, .good, .minimal, "worse at once, two classes"),
            (250, rtt, .good, .moderate, "worse at once"),
            (180, rtt, .moderate, .moderate, "better, but within the margin: held"),
            (164, rtt, .moderate, .moderate, "204 / 1.25 = 163.2: still held"),
            (160, rtt, .moderate, .good, "past the margin"),
            (1100, rtt, .minimal, .minimal, "1,280 / 1.25 = 1,024: held"),
            (1000, rtt, .minimal, .moderate, "past the margin"),
            (180, rtt, .minimal, .moderate, "two classes better, only the first past the margin"),
            (100, rtt, .minimal, .good, "both past the margin"),
            (64_000, rate, .unknown, .minimal, "64 kbit/s"),
            (1_000_000, rate, .unknown, .moderate, "1 Mbit/s"),
            (1_500_000, rate, .unknown, .good, "1.5 Mbit/s"),
            (1_600_000, rate, .moderate, .moderate, "better within the margin"),
            (1_900_000, rate, .moderate, .good, "1.5 Mbit/s × 1.25 = 1.875"),
            (170_000, rate, .minimal, .minimal, "150 kbit/s × 1.25 = 187.5: held"),
            (1, loss, .unknown, .good, "1 % loss"),
            (5, loss, .unknown, .moderate, "5 % loss"),
            (20, loss, .unknown, .minimal, "20 % loss"),
            (2.5, loss, .moderate, .moderate, "3 / 1.25 = 2.4: held"),
            (2, loss, .moderate, .good, "past the margin"),
        ]
        for row in rows {
            XCTAssertEqual(LinkQualityClassifier.classify(row.value, row.bounds, previous: row.previous), row.expected, row.why)
        }
        XCTAssertEqual(LinkQualityClassifier.worst([.good, .unknown, .moderate]), .moderate)
        XCTAssertEqual(LinkQualityClassifier.worst([.unknown, .unknown]), .unknown)
        XCTAssertEqual(LinkQualityClassifier.worst([.minimal, .good]), .minimal)
    }

    /// The radio term: a station's signal (dBm, 5 dB of hysteresis) and half its transmit bit
    /// rate through the rate's bounds; what the driver leaves out is unknown.
    func testRadioClasses() {
        typealias Row = (station: WirelessStation, previous: (LinkQuality, LinkQuality), expected: (LinkQuality, LinkQuality), why: String)
        let rows: [Row] = [
            (WirelessStation(signal: -45, transmitBitRate: 866_700_000), (.unknown, .unknown), (.good, .good), "next to the access point"),
            (WirelessStation(signal: -80, transmitBitRate: 54_000_000), (.unknown, .unknown), (.good, .good), "-80 dBm is the bound, not past it"),
            (WirelessStation(signal: -81, transmitBitRate: 6_000_000), (.unknown, .unknown), (.moderate, .good), "under -80: moderate; 6 Mbit/s carries 3"),
            (WirelessStation(signal: -89, transmitBitRate: 1_000_000), (.unknown, .unknown), (.minimal, .moderate), "the edge: 1 Mbit/s carries 500 kbit/s"),
            (WirelessStation(signal: -90, transmitBitRate: 200_000), (.good, .good), (.minimal, .minimal), "worse at once"),
            (WirelessStation(signal: -77, transmitBitRate: nil), (.moderate, .unknown), (.moderate, .unknown), "3 dB better: held"),
            (WirelessStation(signal: -76, transmitBitRate: nil), (.moderate, .unknown), (.moderate, .unknown), "-76 - 5 = -81: still held"),
            (WirelessStation(signal: -75, transmitBitRate: nil), (.moderate, .unknown), (.good, .unknown), "5 dB past the bound"),
            (WirelessStation(signal: -84, transmitBitRate: nil), (.minimal, .unknown), (.minimal, .unknown), "-84 - 5 = -89: held"),
            (WirelessStation(signal: -82, transmitBitRate: nil), (.minimal, .unknown), (.moderate, .unknown), "past the step: one class"),
            (WirelessStation(signal: nil, transmitBitRate: 2_000_000), (.unknown, .moderate), (.unknown, .moderate), "1 Mbit/s, within the rate's margin"),
            (WirelessStation(), (.good, .good), (.unknown, .unknown), "nothing reported: no radio term"),
        ]
        for row in rows {
            let classes = LinkQualityClassifier.radio(row.station, previous: (signal: row.previous.0, rate: row.previous.1))
            XCTAssertEqual(classes.signal, row.expected.0, "signal: \(row.why)")
            XCTAssertEqual(classes.rate, row.expected.1, "rate: \(row.why)")
        }
    }

    // MARK: Estimator

    /// One socket's counters at one read: on eth0 (2) unless told.
    private static func socket(
        _ cookie: UInt64, on index: Int32 = 2, rtt: Double = 0, minimum: Double? = nil, receiveRTT: Double = 0, rate: Double = 0,
        appLimited: Bool = false, acked: UInt64 = 0, received: UInt64 = 0, sent: UInt32 = 0, retransmitted: UInt32 = 0
    ) -> TCPSocketSample {
        TCPSocketSample(
            cookie: cookie, interfaceIndex: index, destination: .v4(198, 51, 100, 1), segmentsSent: sent, retransmitted: retransmitted,
            timing: TCPTiming(rtt: UInt32(rtt * 1000), minimumRTT: UInt32((minimum ?? rtt) * 1000), receiveRTT: UInt32(receiveRTT * 1000),
                              deliveryRate: UInt64(rate / 8), appLimited: appLimited, bytesAcknowledged: acked, bytesReceived: received)
        )
    }

    /// An upload on socket 1 read `reads` times, `every` seconds from `start`: each read it
    /// sent 1,000 segments more (`retransmitted` of them again) at `rtt` ms and `rate` bit/s.
    private static func upload(
        _ estimator: inout LinkQualityEstimator, reads: Int, every: Double = 10, from start: Double = 0, cookie: UInt64 = 1,
        rtt: Double, rate: Double, appLimited: Bool = false, retransmitted: UInt32 = 0, base: Int = 0, station: WirelessStation? = nil
    ) -> [Int32: LinkQualityEstimate] {
        var last: [Int32: LinkQualityEstimate] = [:]
        for n in 0..<reads {
            let k = base + n + 1
            last = estimator.poll([socket(cookie, rtt: rtt, rate: rate, appLimited: appLimited, acked: UInt64(k) * 1_000_000,
                                          sent: UInt32(k) * 1000, retransmitted: UInt32(k) * retransmitted)],
                                  stations: station.map { [2: $0] } ?? [:], at: start + Double(n) * every)
        }
        return last
    }

    func testTooFewSamplesIsNoEstimate() {
        var estimator = LinkQualityEstimator()
        XCTAssertEqual(estimator.poll([], at: 0), [:], "no sockets, no interfaces")
        let two = Self.upload(&estimator, reads: 2, every: 1, rtt: 20, rate: 50_000_000)
        XCTAssertEqual(two[2]?.linkQuality, .unknown, "two readings weigh less than the minimum")
        XCTAssertNil(two[2]?.rtt)
        let three = Self.upload(&estimator, reads: 1, from: 2, rtt: 20, rate: 50_000_000, base: 2)
        XCTAssertEqual(three[2]?.linkQuality, .good)
        XCTAssertEqual(three[2]?.rtt, 20)
        XCTAssertEqual(three[2]?.rttSamples, 3)
        XCTAssertEqual(three[2]?.rateSamples, 2, "the first sight of a socket has no rate: nothing says it was not app-limited since")
        XCTAssertNil(three[2]?.deliveryRate, "two rate readings are too few")
        XCTAssertEqual(three[2]?.segments, 1977, "1,000 sent a second ago, weighing 0.977, and 1,000 now")
        XCTAssertEqual(three[2]?.lossPercent, 0, "none sent again")
        let four = Self.upload(&estimator, reads: 1, from: 3, rtt: 20, rate: 50_000_000, base: 3)
        XCTAssertEqual(four[2]?.deliveryRate, 50_000_000)
    }

    func testShapedLinks() {
        typealias Row = (rtt: Double, rate: Double, expected: LinkQuality, why: String)
        let rows: [Row] = [
            (2100, 64_000, .minimal, "64 kbit/s with a two-second queue"),
            (900, 1_000_000, .moderate, "1 Mbit/s"),
            (1500, 1_000_000, .minimal, "1 Mbit/s with a full two-second queue"),
            (600, 40_000_000, .moderate, "a 600 ms delay line"),
            (1, 2_000_000_000, .good, "unshaped veth"),
            (30, 100_000, .minimal, "a fast RTT but the rate of 2G"),
        ]
        for row in rows {
            var estimator = LinkQualityEstimator()
            let estimate = Self.upload(&estimator, reads: 6, rtt: row.rtt, rate: row.rate)[2]
            XCTAssertEqual(estimate?.linkQuality, row.expected, row.why)
            XCTAssertEqual(estimate?.rtt, Int(row.rtt), row.why)
        }
    }

    /// A Wi-Fi station read with the sockets lowers the class when the radio is the
    /// bottleneck, never raises it, and is reported beside the estimates.
    func testTheRadioOnlyLowersTheClass() {
        typealias Row = (rtt: Double, rate: Double, station: WirelessStation?, expected: LinkQuality, why: String)
        let rows: [Row] = [
            (5, 200_000_000, nil, .good, "wired: no radio term"),
            (5, 200_000_000, WirelessStation(signal: -55, transmitBitRate: 866_700_000), .good, "a strong signal at 866.7 Mbit/s"),
            (5, 200_000_000, WirelessStation(signal: -84, transmitBitRate: 866_700_000), .moderate, "a fast RTT but the cell's edge"),
            (5, 200_000_000, WirelessStation(signal: -91, transmitBitRate: 6_000_000), .minimal, "past 802.11's sensitivity"),
            (5, 200_000_000, WirelessStation(signal: -60, transmitBitRate: 1_000_000), .moderate, "1 Mbit/s on the air carries 500 kbit/s"),
            (600, 40_000_000, WirelessStation(signal: -50, transmitBitRate: 866_700_000), .moderate, "a good radio does not raise a slow path"),
            (5, 200_000_000, WirelessStation(), .good, "a station that reports nothing"),
        ]
        for row in rows {
            var estimator = LinkQualityEstimator()
            let estimate = Self.upload(&estimator, reads: 6, rtt: row.rtt, rate: row.rate, station: row.station)[2]
            XCTAssertEqual(estimate?.linkQuality, row.expected, row.why)
            XCTAssertEqual(estimate?.signal, row.station?.signal, row.why)
            XCTAssertEqual(estimate?.transmitBitRate, row.station?.transmitBitRate, row.why)
        }
        // Without traffic there is no class, whatever the radio says.
        var idle = LinkQualityEstimator()
        XCTAssertEqual(idle.poll([], stations: [2: WirelessStation(signal: -91)], at: 0), [:])
        // A signal back from the edge is held within the step.
        var moving = LinkQualityEstimator()
        XCTAssertEqual(Self.upload(&moving, reads: 6, rtt: 5, rate: 2e8, station: WirelessStation(signal: -82))[2]?.linkQuality, .moderate)
        XCTAssertEqual(Self.upload(&moving, reads: 1, from: 60, rtt: 5, rate: 2e8, base: 6, station: WirelessStation(signal: -77))[2]?.linkQuality,
                       .moderate, "3 dB past the bound: held")
        XCTAssertEqual(Self.upload(&moving, reads: 1, from: 70, rtt: 5, rate: 2e8, base: 7, station: WirelessStation(signal: -74))[2]?.linkQuality,
                       .good, "6 dB past: good")
    }

    func testAppLimitedTrafficNeverReadsAsASlowLink() {
        var estimator = LinkQualityEstimator()
        // A chat: a byte a second, its delivery rate app-limited at 8 bit/s.
        let estimate = Self.upload(&estimator, reads: 6, rtt: 2, rate: 8, appLimited: true)[2]
        XCTAssertEqual(estimate?.linkQuality, .good)
        XCTAssertNil(estimate?.deliveryRate)
        XCTAssertEqual(estimate?.rateSamples, 0)
    }

    func testAnAppLimitedRateAboveTheEstimateCounts() {
        var estimator = LinkQualityEstimator()
        // A minute at 1 Mbit/s (not app-limited), then the link is fast and the app cannot fill it.
        var estimate = Self.upload(&estimator, reads: 60, every: 1, rtt: 100, rate: 1_000_000)[2]
        XCTAssertEqual(estimate?.linkQuality, .moderate)
        for n in 0..<40 {
            estimate = Self.upload(&estimator, reads: 1, from: 60 + Double(n), rtt: 1, rate: 13_000_000, appLimited: true, base: 60 + n)[2]
        }
        XCTAssertEqual(estimate?.deliveryRate, 13_000_000, "app-limited readings above the estimate: the link carried at least that")
        XCTAssertEqual(estimate?.linkQuality, .good)
    }

    func testDownloadsMeasureTheReceiverRTT() {
        var estimator = LinkQualityEstimator()
        var last: [Int32: LinkQualityEstimate] = [:]
        for n in 0..<5 {
            // tcpi_rcv_rtt moves while full segments arrive through a two-second queue.
            last = estimator.poll([Self.socket(1, rtt: 1, receiveRTT: 1900 + Double(n), acked: 100, received: UInt64(n + 1) * 80_000)],
                                  at: Double(n) * 10)
        }
        XCTAssertEqual(last[2]?.linkQuality, .minimal)
        XCTAssertNil(last[2]?.deliveryRate, "a receiver has no delivery rate")
        // A trickle: bytes arrive but tcpi_rcv_rtt stands (sub-MSS segments do not update it).
        var trickle = LinkQualityEstimator()
        for n in 0..<6 {
            last = trickle.poll([Self.socket(1, rtt: 1, receiveRTT: 1900, acked: 100, received: UInt64(n + 1) * 10)], at: Double(n) * 10)
        }
        XCTAssertEqual(last[2]?.rttSamples, 1, "only the first sight's RTT")
        XCTAssertEqual(last[2]?.linkQuality, .unknown)
    }

    func testLossLowersTheClass() {
        typealias Row = (retransmitted: UInt32, expected: LinkQuality, percent: Double)
        for row: Row in [(0, .good, 0), (100, .moderate, 10), (200, .minimal, 20)] {
            var estimator = LinkQualityEstimator()
            let estimate = Self.upload(&estimator, reads: 5, rtt: 5, rate: 500_000_000, retransmitted: row.retransmitted)[2]
            XCTAssertEqual(estimate?.linkQuality, row.expected, "\(row.percent) % loss")
            XCTAssertEqual(estimate?.lossPercent ?? -1, row.percent, accuracy: 0.2)
        }
    }

    func testAClassFollowsALastingChangeAndAgesOut() {
        var estimator = LinkQualityEstimator()
        // A minute shaped, read every second.
        var estimate = Self.upload(&estimator, reads: 60, every: 1, rtt: 2100, rate: 64_000)[2]
        XCTAssertEqual(estimate?.linkQuality, .minimal)
        // The shaper removed: good within a half-life and the margin (the weighted median
        // crosses once the new readings outweigh the old).
        var recovered: Double?
        for n in 0..<60 where recovered == nil {
            estimate = Self.upload(&estimator, reads: 1, from: 60 + Double(n), rtt: 1, rate: 900_000_000, base: 60 + n)[2]
            if estimate?.linkQuality == .good { recovered = Double(n) }
        }
        XCTAssertNotNil(recovered)
        XCTAssertLessThanOrEqual(recovered ?? 99, 40, "good again within 40 s (half-life 30 s)")
        // Idle: nothing progresses; the estimate fades below three readings' weight, then is gone.
        let idle = TCPSocketSample(cookie: 1, interfaceIndex: 2, destination: .v4(198, 51, 100, 1), segmentsSent: 120_000,
                                   timing: TCPTiming(rtt: 1000, bytesAcknowledged: 120_000_000))
        var aged: [Int32: LinkQualityEstimate] = [:]
        for t in stride(from: 130.0, through: 400, by: 10) { aged = estimator.poll([idle], at: t) }
        XCTAssertNil(aged[2], "four half-lives on, nothing is left")
    }

    func testMemoryIsBounded() {
        var estimator = LinkQualityEstimator()
        var samples: [TCPSocketSample] = []
        for read in 1...200 {
            samples = (0..<50).map { Self.socket(UInt64($0), on: Int32($0 % 5), rtt: 10, rate: 1e8, acked: UInt64(read) * 1000) }
            _ = estimator.poll(samples, at: Double(read))
        }
        let estimates = estimator.poll(samples, at: 201)
        XCTAssertEqual(estimates.count, 5)
        // 64 reads kept, each of 10 sockets (weight capped at 8): the counts say what is left.
        XCTAssertEqual(estimates[0]?.rttSamples, 640)
    }
}
