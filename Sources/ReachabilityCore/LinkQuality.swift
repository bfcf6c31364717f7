/// NWPath.LinkQuality: what the path's link can be expected to carry, judged from the host's
/// own TCP traffic (`LinkQualityEstimator`, `LinkQualityClassifier`). For tuning first values
/// (a video's bit rate, a prefetch, a sync's batch), never to gate a connection.
public enum LinkQuality: String, Sendable, Hashable, Codable, CaseIterable {
    /// Too few samples to say (no traffic, or reads not running).
    case unknown
    /// About Chromium's slow-2G or 2G: text, small requests.
    case minimal
    /// About 3G: audio, low-resolution video.
    case moderate
    /// Beyond: anything.
    case good

    /// Worst first; `unknown` is not a rank.
    package var rank: Int? {
        switch self {
        case .unknown: nil
        case .minimal: 0
        case .moderate: 1
        case .good: 2
        }
    }
}

/// One interface's passive estimates (`Interface.quality` on the wire): what its TCP
/// traffic measured, time-weighted, and the class they make. A field is nil when too few
/// samples back it.
public struct LinkQualityEstimate: Sendable, Hashable, Codable {
    /// The class the estimates make.
    public var linkQuality: LinkQuality
    /// The lowest RTT the kernel measured (`tcpi_min_rtt`), in milliseconds.
    public var minimumRTT: Int?
    /// The typical RTT (the weighted median of `tcpi_rtt`, or `tcpi_rcv_rtt` for what was only
    /// received), in milliseconds.
    public var rtt: Int?
    /// How many socket readings the RTT rests on.
    public var rttSamples: Int
    /// The typical delivery rate (`tcpi_delivery_rate` of samples that were not app-limited),
    /// in bits per second.
    public var deliveryRate: Int?
    /// How many socket readings the rate rests on.
    public var rateSamples: Int
    /// Segments retransmitted, in percent of those sent.
    public var lossPercent: Double?
    /// The segments sent that the loss rate rests on (time-weighted).
    public var segments: Int
    /// A Wi-Fi interface's signal from its access point, in dBm (nl80211's station info);
    /// nil for a wired or tunnel interface.
    public var signal: Int?
    /// A Wi-Fi interface's transmit bit rate to its access point, in bits per second.
    public var transmitBitRate: Int?

    /// Creates an estimate.
    public init(linkQuality: LinkQuality, minimumRTT: Int? = nil, rtt: Int? = nil, rttSamples: Int = 0, deliveryRate: Int? = nil,
                rateSamples: Int = 0, lossPercent: Double? = nil, segments: Int = 0, signal: Int? = nil, transmitBitRate: Int? = nil) {
        self.linkQuality = linkQuality
        self.minimumRTT = minimumRTT
        self.rtt = rtt
        self.rttSamples = rttSamples
        self.deliveryRate = deliveryRate
        self.rateSamples = rateSamples
        self.lossPercent = lossPercent
        self.segments = segments
        self.signal = signal
        self.transmitBitRate = transmitBitRate
    }
}

/// A TCP socket's timing and byte counters as its `tcp_info` gave them at one read: what
/// `LinkQualityEstimator` measures the path with.
package struct TCPTiming: Sendable, Hashable {
    /// `tcpi_rtt`: the smoothed RTT of what this host sent, in microseconds.
    package var rtt: UInt32 = 0
    /// `tcpi_min_rtt`: the lowest RTT seen (the kernel's windowed minimum), in microseconds.
    package var minimumRTT: UInt32 = 0
    /// `tcpi_rcv_rtt`: the receiver's RTT estimate, for what this host only receives, in microseconds.
    package var receiveRTT: UInt32 = 0
    /// `tcpi_delivery_rate`: the latest delivery rate of what this host sent, in bytes per second.
    package var deliveryRate: UInt64 = 0
    /// `tcpi_delivery_rate_app_limited`: the sender had too little to send to fill the path.
    package var appLimited = false
    /// `tcpi_bytes_acked`: bytes sent and acknowledged.
    package var bytesAcknowledged: UInt64 = 0
    /// `tcpi_bytes_received`: bytes received.
    package var bytesReceived: UInt64 = 0

    /// Creates counters.
    package init(rtt: UInt32 = 0, minimumRTT: UInt32 = 0, receiveRTT: UInt32 = 0, deliveryRate: UInt64 = 0, appLimited: Bool = false,
                 bytesAcknowledged: UInt64 = 0, bytesReceived: UInt64 = 0) {
        self.rtt = rtt
        self.minimumRTT = minimumRTT
        self.receiveRTT = receiveRTT
        self.deliveryRate = deliveryRate
        self.appLimited = appLimited
        self.bytesAcknowledged = bytesAcknowledged
        self.bytesReceived = bytesReceived
    }
}
