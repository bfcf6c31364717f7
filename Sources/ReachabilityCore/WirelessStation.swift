/// What a Wi-Fi interface's driver says of its link to the access point (nl80211's station
/// info, `NL80211_CMD_GET_STATION`): the radio term of the link-quality class
/// (`LinkQualityClassifier.radio`). A wired or tunnel interface has none.
package struct WirelessStation: Sendable, Hashable {
    /// The signal of what the access point sends, in dBm: the driver's average when it keeps one.
    package var signal: Int?
    /// The bit rate of the last frames sent to the access point, in bits per second.
    package var transmitBitRate: Int?

    /// Creates a station's reading.
    package init(signal: Int? = nil, transmitBitRate: Int? = nil) {
        self.signal = signal
        self.transmitBitRate = transmitBitRate
    }
}
