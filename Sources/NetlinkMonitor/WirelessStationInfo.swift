import CNetlink
import Glibc
import ReachabilityCore
import SystemPackage

/// A Wi-Fi interface's link to its access point, as nl80211 reports it over generic netlink
/// (`NL80211_CMD_GET_STATION`): the signal and the transmit bit rate, the radio term of the
/// link-quality class. Reads only; nothing is sent on the air.
///
/// A fresh NETLINK_GENERIC socket per read, like the sock_diag reads: the nl80211 family is
/// resolved through the generic netlink controller, then the interface's stations are dumped
/// and the first that parses is kept (a managed interface has one, its access point).
/// libnl-genl-3's `genlmsg_parse` and `nla_parse_nested`, with their policies, check every
/// attribute's length before it is read.
package enum WirelessStationInfo {
    /// Reads the station of the interface with `index`; nil when it has none (not
    /// associated) or nothing parses.
    ///
    /// - Throws: when the socket cannot be opened, nl80211 is not there (ENOENT: no
    ///   cfg80211), a request fails (ENODEV: the interface vanished) or is not answered
    ///   within `timeout` (EAGAIN).
    package static func read(interfaceIndex index: Int32, timeout: Duration = .seconds(1)) throws(NetlinkError) -> WirelessStation? {
        // A driver may ask its firmware (fullmac): the engine's thread waits a second at most.
        let socket = try NetlinkSocket(role: "nl80211", blocking: true, protocol: NETLINK_GENERIC, timeout: timeout)
        var family: UInt16?
        let resolved = try socket.request(type: GENL_ID_CTRL, flags: 0) { (message) throws(NetlinkError) in
            try message.append(genlmsghdr(cmd: UInt8(CTRL_CMD_GETFAMILY), version: 1, reserved: 0))
            try message.put(Int32(CTRL_ATTR_FAMILY_NAME), Array("nl80211".utf8) + [0])
        } answer: { message in
            family = family ?? familyIdentifier(message)
        }
        if case let .failed(errno) = resolved { throw NetlinkError(operation: "resolve nl80211", errno: errno) }
        guard let family else { throw NetlinkError(operation: "resolve nl80211", errno: .badMessage) }
        var station: WirelessStation?
        let answer = try socket.request(type: Int32(family), flags: NLM_F_DUMP) { (message) throws(NetlinkError) in
            try message.append(genlmsghdr(cmd: UInt8(NL80211_CMD_GET_STATION.rawValue), version: 0, reserved: 0))
            try message.put(Int32(NL80211_ATTR_IFINDEX.rawValue), withUnsafeBytes(of: UInt32(bitPattern: index)) { Array($0) })
        } answer: { message in
            station = station ?? parse(message)
        }
        if case let .failed(errno) = answer { throw NetlinkError(operation: "nl80211 station dump", errno: errno) }
        return station
    }

    /// What libnl checks of each attribute read, by type (the rest are skipped unread).
    private static let familyPolicy = policy(maximum: UInt32(__CTRL_ATTR_MAX) - 1, [(UInt32(CTRL_ATTR_FAMILY_ID), NLA_U16)])
    private static let stationPolicy = policy(maximum: NL80211_ATTR_MAX.rawValue, [
        (NL80211_ATTR_IFINDEX.rawValue, NLA_U32), (NL80211_ATTR_STA_INFO.rawValue, NLA_NESTED),
    ])
    private static let informationPolicy = policy(maximum: NL80211_STA_INFO_MAX.rawValue, [
        (NL80211_STA_INFO_SIGNAL.rawValue, NLA_U8), (NL80211_STA_INFO_SIGNAL_AVG.rawValue, NLA_U8),
        (NL80211_STA_INFO_TX_BITRATE.rawValue, NLA_NESTED),
    ])
    private static let ratePolicy = policy(maximum: NL80211_RATE_INFO_MAX.rawValue, [
        (NL80211_RATE_INFO_BITRATE.rawValue, NLA_U16), (NL80211_RATE_INFO_BITRATE32.rawValue, NLA_U32),
    ])

    /// The family identifier in the controller's answer to CTRL_CMD_GETFAMILY, or nil.
    package static func familyIdentifier(_ message: NetlinkMessage) -> UInt16? {
        guard let attributes = parse(message, command: UInt8(CTRL_CMD_NEWFAMILY), familyPolicy),
              let identifier = attributes[Int(CTRL_ATTR_FAMILY_ID)] else { return nil }
        return nla_get_u16(identifier)
    }

    /// One NL80211_CMD_NEW_STATION message (a station dump's record) as the station's
    /// reading; nil when it is another message, malformed, or carries no station info.
    package static func parse(_ message: NetlinkMessage) -> WirelessStation? {
        guard let attributes = parse(message, command: UInt8(NL80211_CMD_NEW_STATION.rawValue), stationPolicy),
              let information = attributes[Int(NL80211_ATTR_STA_INFO.rawValue)],
              let fields = nested(information, informationPolicy) else { return nil }
        // dBm as a signed byte; the average when the driver keeps one.
        let signal = (fields[Int(NL80211_STA_INFO_SIGNAL_AVG.rawValue)] ?? fields[Int(NL80211_STA_INFO_SIGNAL.rawValue)])
            .map { Int(Int8(bitPattern: nla_get_u8($0))) }
        let rate = fields[Int(NL80211_STA_INFO_TX_BITRATE.rawValue)].flatMap(bitRate)
        return signal == nil && rate == nil ? nil : WirelessStation(signal: signal, transmitBitRate: rate)
    }

    /// A rate info nest's bit rate in bits per second: BITRATE32, else the legacy 16-bit
    /// BITRATE, both in 100 kbit/s; nil when absent, zero or malformed.
    private static func bitRate(_ nest: UnsafeMutablePointer<nlattr>) -> Int? {
        guard let fields = nested(nest, ratePolicy) else { return nil }
        let units = fields[Int(NL80211_RATE_INFO_BITRATE32.rawValue)].map { Int(nla_get_u32($0)) }
            ?? fields[Int(NL80211_RATE_INFO_BITRATE.rawValue)].map { Int(nla_get_u16($0)) }
        guard let units, units > 0 else { return nil }
        return units * 100_000
    }

    /// A policy for attribute types up to `maximum`: `types` checked, the rest unchecked (NLA_UNSPEC).
    private static func policy(maximum: UInt32, _ types: [(type: UInt32, kind: Int)]) -> [nla_policy] {
        var policy = Array(repeating: nla_policy(), count: Int(maximum) + 1)
        for (type, kind) in types { policy[Int(type)].type = UInt16(kind) }
        return policy
    }

    /// The top-level attributes of a generic netlink message carrying `command`, by type
    /// (`genlmsg_parse` against `policy`); nil for another command or a malformed message.
    private static func parse(_ message: NetlinkMessage, command: UInt8, _ policy: [nla_policy]) -> [UnsafeMutablePointer<nlattr>?]? {
        guard let header = message.fixedHeader(genlmsghdr.self), header.cmd == command else { return nil }
        var table = [UnsafeMutablePointer<nlattr>?](repeating: nil, count: policy.count)
        return genlmsg_parse(message.header, 0, &table, Int32(policy.count - 1), policy) < 0 ? nil : table
    }

    /// A nest's attributes by type (`nla_parse_nested` against `policy`); nil when malformed.
    private static func nested(_ nest: UnsafeMutablePointer<nlattr>, _ policy: [nla_policy]) -> [UnsafeMutablePointer<nlattr>?]? {
        var table = [UnsafeMutablePointer<nlattr>?](repeating: nil, count: policy.count)
        return nla_parse_nested(&table, Int32(policy.count - 1), nest, policy) < 0 ? nil : table
    }
}
