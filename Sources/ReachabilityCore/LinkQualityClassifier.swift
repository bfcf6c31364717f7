/// Which `LinkQuality` an interface's estimates make (docs/link-quality.md has the table):
/// each estimate (RTT, delivery rate, loss) makes a class, and the worst of them is the
/// interface's. Bounds are Chromium's effective connection types on transport RTT
/// (2G at 1,280 ms, 3G at 204 ms) and what each class carries (2G up to 150 kbit/s, 3G up
/// to 1.5 Mbit/s). Hysteresis: a class gets better only once its estimate is past the bound
/// by a quarter (`margin`), so an estimate hovering at a bound does not flap the class.
package enum LinkQualityClassifier {
    /// The bounds of one estimate, worst class first.
    package struct Bounds: Sendable, Hashable {
        /// At or past this, `minimal`.
        package var minimal: Double
        /// At or past this (and not `minimal`), `moderate`.
        package var moderate: Double
        /// Whether a higher value is worse (RTT, loss) or better (rate).
        package var higherIsWorse: Bool
        /// How far past a bound a value must be before the class gets better, in the value's
        /// own unit; nil: by `margin`, a ratio. A signal in dBm is negative and logarithmic,
        /// so its margin is a step.
        package var step: Double? = nil
    }

    /// Typical RTT, in milliseconds: Chromium's transport-RTT bounds for 2G and 3G.
    package static let rtt = Bounds(minimal: 1280, moderate: 204, higherIsWorse: true)
    /// Delivery rate, in bits per second.
    package static let rate = Bounds(minimal: 150_000, moderate: 1_500_000, higherIsWorse: false)
    /// Segments retransmitted, in percent of those sent.
    package static let loss = Bounds(minimal: 15, moderate: 3, higherIsWorse: true)
    /// How far past a bound an estimate must be before the class gets better: a quarter.
    package static let margin = 1.25
    /// A Wi-Fi station's signal, in dBm: under -88 (6 dB below 802.11's minimum sensitivity
    /// for 6 Mbit/s, -82 dBm, where only the slowest rates get through), minimal; under -80
    /// (past the 6 and 9 Mbit/s sensitivities: even the lowest OFDM rates lose a tenth of their
    /// frames), moderate. Better only 5 dB past the bound.
    package static let signal = Bounds(minimal: -88, moderate: -80, higherIsWorse: false, step: 5)
    /// What a radio carries of its bit rate at best: half (802.11's overhead and acknowledgements);
    /// that share goes through `rate`'s bounds.
    package static let radioShare = 0.5

    /// The classes a station's radio allows (`previous` for hysteresis): its signal's, and its
    /// transmit bit rate's share's; `.unknown` for what it does not report. The radio only lowers
    /// an interface's class (docs/link-quality.md): it makes no class of its own.
    package static func radio(_ station: WirelessStation, previous: (signal: LinkQuality, rate: LinkQuality)) -> (signal: LinkQuality, rate: LinkQuality) {
        (signal: station.signal.map { classify(Double($0), signal, previous: previous.signal) } ?? .unknown,
         rate: station.transmitBitRate.map { classify(Double($0) * radioShare, rate, previous: previous.rate) } ?? .unknown)
    }

    /// The class `value` makes under `bounds`, given the class it made before (`previous`,
    /// `.unknown` when none): worse at once, better only past the bound by `margin`.
    package static func classify(_ value: Double, _ bounds: Bounds, previous: LinkQuality) -> LinkQuality {
        let raw = plain(value, bounds)
        guard let was = previous.rank, let now = raw.rank, now > was else { return raw }
        // Better than before: judged again on the value made worse by the margin.
        let held: LinkQuality
        if let step = bounds.step {
            held = plain(bounds.higherIsWorse ? value + step : value - step, bounds)
        } else {
            held = plain(bounds.higherIsWorse ? value * margin : value / margin, bounds)
        }
        return (held.rank ?? was) > was ? held : previous
    }

    /// The worst of the classes given, `.unknown` when none is known.
    package static func worst(_ classes: [LinkQuality]) -> LinkQuality {
        classes.min { ($0.rank ?? .max) < ($1.rank ?? .max) }.flatMap { $0.rank == nil ? nil : $0 } ?? .unknown
    }

    private static func plain(_ value: Double, _ bounds: Bounds) -> LinkQuality {
        let pastMinimal = bounds.higherIsWorse ? value >= bounds.minimal : value < bounds.minimal
        let pastModerate = bounds.higherIsWorse ? value >= bounds.moderate : value < bounds.moderate
        return pastMinimal ? .minimal : pastModerate ? .moderate : .good
    }
}
