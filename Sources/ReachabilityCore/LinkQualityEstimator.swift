/// Passive link-quality estimates per interface from the reads of the host's TCP sockets the
/// stall watch already makes (docs/link-quality.md): no packet sent, no read of its own.
///
/// Each read, diffed with the last by cookie, yields per socket what it measured since:
/// - a socket that sent and had it acknowledged (`bytesAcknowledged` grew): its `tcpi_rtt`,
///   its `tcpi_min_rtt`, its delivery rate, and its segments sent and retransmitted. A rate
///   the kernel marks app-limited counts only when it is above the estimate (BBR's rule: the
///   link carried at least that), so a chat sending a byte a second measures its RTT, never
///   the link's rate, while a link that got faster is seen to;
/// - one that only received (a download): its `tcpi_rcv_rtt`, when the kernel updated it
///   (it does so only on full-sized segments, so a trickle never counts);
/// - one seen for the first time: its RTT if it has exchanged data already.
/// One read makes one observation per interface and estimate: the median of its sockets'
/// values, weighing as many sockets as contributed (at most `Settings.readWeight`, so one busy
/// read does not wipe out the history). Observations fade with a half-life
/// (`Settings.halfLife`); an estimate needs their weight to reach `Settings.minimumWeight`
/// (about three recent readings), so an idle interface's estimate ages out instead of standing.
/// The RTT makes the class; the rate, the loss and a Wi-Fi station's radio
/// (`LinkQualityClassifier.radio`, from the station read with the sockets) can only lower it. Memory is bounded: `Settings.history` observations per interface and estimate, and the
/// previous read's counters per socket.
package struct LinkQualityEstimator: Sendable {
    /// The rule's constants.
    package struct Settings: Sendable, Hashable {
        /// Seconds after which an observation weighs half (Chromium's network quality estimator: 60 s;
        /// reachd's class must follow a moved laptop within a minute).
        package var halfLife: Double = 30
        /// The weight an estimate needs before it means anything: about three readings in the
        /// last half-minute (three a second apart weigh 2.93, three 10 s apart 2.42).
        package var minimumWeight: Double = 2.5
        /// The most one read's observation weighs.
        package var readWeight: Double = 8
        /// The segments sent (time-weighted) a loss rate needs.
        package var minimumSegments: Double = 200
        /// Observations kept per interface and estimate.
        package var history = 64

        /// The documented constants.
        package init() {}
    }

    /// One read's value for one estimate, and what it weighed then.
    private struct Observation: Sendable, Hashable {
        var time: Double
        var value: Double
        var weight: Double
        var readings: Int
    }

    /// One interface's observations and the classes its estimates made last.
    private struct History: Sendable, Hashable {
        var rtt: [Observation] = []
        var minimumRTT: [Observation] = []
        var rate: [Observation] = []
        /// Time-weighted segments sent and retransmitted, as of `lossTime`.
        var sent = 0.0
        var retransmitted = 0.0
        var lossTime = 0.0
        var classes = Classes()
    }

    /// The class each estimate made last (for hysteresis), and the interface's.
    private struct Classes: Sendable, Hashable {
        var rtt = LinkQuality.unknown
        var rate = LinkQuality.unknown
        var loss = LinkQuality.unknown
        var signal = LinkQuality.unknown
        var radioRate = LinkQuality.unknown
    }

    /// What one read measured on one interface.
    private struct Read {
        var rtt: [Double] = []
        var minimumRTT: [Double] = []
        var rate: [Double] = []
        var appLimitedRate: [Double] = []
        var sent = 0
        var retransmitted = 0
    }

    /// The rule in force.
    package let settings: Settings
    private var previous: [UInt64: TCPSocketSample] = [:]
    private var histories: [Int32: History] = [:]

    /// An estimator that has seen nothing.
    package init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// Takes one read of the sockets at `time` (seconds), with the Wi-Fi stations read beside
    /// it by interface, and returns every interface's estimate after it; an interface with
    /// nothing left to estimate from drops out. A station counts only for the read it came with.
    package mutating func poll(
        _ samples: [TCPSocketSample], stations: [Int32: WirelessStation] = [:], at time: Double
    ) -> [Int32: LinkQualityEstimate] {
        var reads: [Int32: Read] = [:]
        var current: [UInt64: TCPSocketSample] = [:]
        current.reserveCapacity(samples.count)
        for sample in samples {
            current[sample.cookie] = sample
            Self.measure(sample, before: previous[sample.cookie], into: &reads[sample.interfaceIndex, default: Read()])
        }
        previous = current
        for (index, read) in reads { record(read, on: index, at: time) }
        var estimates: [Int32: LinkQualityEstimate] = [:]
        for index in Array(histories.keys) {
            if let estimate = estimate(index, station: stations[index], at: time) { estimates[index] = estimate }
        }
        return estimates
    }

    /// Forgets everything (reads stopped, or the machine slept: what comes next is not a continuation).
    package mutating func reset() {
        previous = [:]
        histories = [:]
    }

    /// What one socket measured since `before` (nil: first seen).
    private static func measure(_ sample: TCPSocketSample, before: TCPSocketSample?, into read: inout Read) {
        let timing = sample.timing
        guard let before else {
            if timing.bytesAcknowledged > 0, timing.rtt > 0 { read.rtt.append(Double(timing.rtt) / 1000) }
            return
        }
        if timing.bytesAcknowledged > before.timing.bytesAcknowledged, timing.rtt > 0 {
            read.rtt.append(Double(timing.rtt) / 1000)
            if timing.minimumRTT > 0 { read.minimumRTT.append(Double(timing.minimumRTT) / 1000) }
            if timing.deliveryRate > 0 {
                if timing.appLimited {
                    read.appLimitedRate.append(Double(timing.deliveryRate) * 8)
                } else {
                    read.rate.append(Double(timing.deliveryRate) * 8)
                }
            }
            read.sent += Int(sample.segmentsSent &- before.segmentsSent)
            read.retransmitted += Int(sample.retransmitted &- before.retransmitted)
        } else if timing.bytesReceived > before.timing.bytesReceived, timing.receiveRTT > 0,
                  timing.receiveRTT != before.timing.receiveRTT {
            read.rtt.append(Double(timing.receiveRTT) / 1000)
            read.minimumRTT.append(Double(timing.receiveRTT) / 1000)
        }
    }

    private mutating func record(_ read: Read, on index: Int32, at time: Double) {
        var history = histories[index] ?? History(lossTime: time)
        func append(_ values: [Double], to observations: inout [Observation], median: Bool) {
            guard !values.isEmpty else { return }
            let sorted = values.sorted()
            let value = median ? sorted[sorted.count / 2] : sorted[0]
            observations.append(Observation(time: time, value: value, weight: min(Double(values.count), settings.readWeight), readings: values.count))
            if observations.count > settings.history { observations.removeFirst(observations.count - settings.history) }
        }
        append(read.rtt, to: &history.rtt, median: true)
        append(read.minimumRTT, to: &history.minimumRTT, median: false)
        let estimate = weightedMedian(history.rate, at: time)
        append(read.rate + read.appLimitedRate.filter { value in estimate.map { value > $0 } ?? false }, to: &history.rate, median: true)
        let decay = fade(time - history.lossTime)
        history.sent = history.sent * decay + Double(read.sent)
        history.retransmitted = history.retransmitted * decay + Double(read.retransmitted)
        history.lossTime = time
        histories[index] = history
    }

    /// The interface's estimate at `time`; nil (and forgotten) once nothing is left to estimate from.
    private mutating func estimate(_ index: Int32, station: WirelessStation?, at time: Double) -> LinkQualityEstimate? {
        guard var history = histories[index] else { return nil }
        // An observation weighing a sixteenth of what it did (four half-lives) is gone.
        for keyPath in [\History.rtt, \History.minimumRTT, \History.rate] {
            history[keyPath: keyPath].removeAll { fade(time - $0.time) < 1.0 / 16 }
        }
        let decay = fade(time - history.lossTime)
        let sent = history.sent * decay
        guard !history.rtt.isEmpty || !history.rate.isEmpty else {
            histories[index] = nil
            return nil
        }
        var estimate = LinkQualityEstimate(
            linkQuality: .unknown, rttSamples: history.rtt.reduce(0) { $0 + $1.readings },
            rateSamples: history.rate.reduce(0) { $0 + $1.readings }, segments: Int(sent.rounded())
        )
        var classes = Classes()
        if let rtt = weightedMedian(history.rtt, at: time) {
            estimate.rtt = Int(rtt.rounded())
            estimate.minimumRTT = history.minimumRTT.map(\.value).min().map { Int($0.rounded()) }
            classes.rtt = LinkQualityClassifier.classify(rtt, LinkQualityClassifier.rtt, previous: history.classes.rtt)
        }
        if let rate = weightedMedian(history.rate, at: time) {
            estimate.deliveryRate = Int(rate.rounded())
            classes.rate = LinkQualityClassifier.classify(rate, LinkQualityClassifier.rate, previous: history.classes.rate)
        }
        if sent >= settings.minimumSegments {
            let percent = 100 * history.retransmitted * decay / sent
            estimate.lossPercent = (percent * 10).rounded() / 10
            classes.loss = LinkQualityClassifier.classify(percent, LinkQualityClassifier.loss, previous: history.classes.loss)
        }
        if let station {
            estimate.signal = station.signal
            estimate.transmitBitRate = station.transmitBitRate
            (classes.signal, classes.radioRate) = LinkQualityClassifier.radio(station, previous: (history.classes.signal, history.classes.radioRate))
        }
        history.classes = classes
        histories[index] = history
        // The RTT makes a class; the rate, the loss and the radio can only lower it.
        estimate.linkQuality = classes.rtt == .unknown
            ? .unknown : LinkQualityClassifier.worst([classes.rtt, classes.rate, classes.loss, classes.signal, classes.radioRate])
        return estimate
    }

    /// The weighted median of what is left, nil when it weighs less than `minimumWeight`.
    private func weightedMedian(_ observations: [Observation], at time: Double) -> Double? {
        let weighted = observations.map { ($0.value, $0.weight * fade(time - $0.time)) }.sorted { $0.0 < $1.0 }
        let total = weighted.reduce(0) { $0 + $1.1 }
        guard total >= settings.minimumWeight else { return nil }
        var running = 0.0
        for (value, weight) in weighted {
            running += weight
            if running >= total / 2 { return value }
        }
        return weighted.last?.0
    }

    /// What an observation `age` seconds old still weighs, of what it did: 2^(-age / halfLife).
    private func fade(_ age: Double) -> Double {
        let halves = max(0, age) / settings.halfLife
        guard halves < 60 else { return 0 }
        let whole = halves.rounded(.down)
        // 2^-f = e^(-f ln 2) for f in [0, 1): the series converges to double precision in 16 terms.
        let x = -(halves - whole) * 0.693_147_180_559_945_3
        var term = 1.0, sum = 1.0
        for n in 1...16 {
            term *= x / Double(n)
            sum += term
        }
        return sum * Double(sign: .plus, exponent: -Int(whole), significand: 1)
    }
}
