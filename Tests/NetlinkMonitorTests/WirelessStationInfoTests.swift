import CNetlink
@testable import NetlinkMonitor
import ReachabilityCore
import TestSupport
import XCTest

/// nl80211 station records through the real parser (libnl-genl's `genlmsg_parse` and
/// `nla_parse_nested`). This kernel has no mac80211_hwsim, so the records are built byte
/// for byte as cfg80211's `nl80211_send_station` lays them out: the interface, the access
/// point's address and the generation, then STA_INFO with the counters, 64-bit values
/// behind their pad attributes, the signals, the rate nests and the flags.
final class WirelessStationInfoTests: XCTestCase {
    /// One attribute: length, type, payload, padded to 4 bytes.
    private static func attribute(_ type: UInt32, _ payload: [UInt8]) -> [UInt8] {
        let length = 4 + payload.count
        return u16(UInt16(length)) + u16(UInt16(type)) + payload + [UInt8](repeating: 0, count: (length + 3) & ~3 - length)
    }

    /// A nest: its attributes one after another, with NLA_F_NESTED as the kernel sets it.
    private static func nest(_ type: UInt32, _ attributes: [[UInt8]]) -> [UInt8] {
        attribute(type | UInt32(NLA_F_NESTED), attributes.flatMap { $0 })
    }

    /// A 64-bit attribute as `nla_put_u64_64bit` writes it: a pad attribute first when the
    /// value would not be 8-byte aligned (here: always, after a 4-aligned offset of 4 mod 8).
    private static func u64Attribute(_ type: UInt32, _ value: UInt64, pad: UInt32) -> [UInt8] {
        attribute(pad, []) + attribute(type, withUnsafeBytes(of: value) { Array($0) })
    }

    private static func u16(_ value: UInt16) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
    private static func u32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
    private static func signed(_ dBm: Int8) -> [UInt8] { [UInt8(bitPattern: dBm)] }

    private static func field(_ value: nl80211_sta_info, _ payload: [UInt8]) -> [UInt8] { attribute(value.rawValue, payload) }
    private static func rate(_ value: nl80211_rate_info, _ payload: [UInt8]) -> [UInt8] { attribute(value.rawValue, payload) }

    /// A rate nest as `nl80211_put_sta_rate` builds it: BITRATE32, and BITRATE when it fits 16 bits.
    private static func rateNest(_ type: nl80211_sta_info, units: UInt32, extra: [[UInt8]] = []) -> [UInt8] {
        var fields = [rate(NL80211_RATE_INFO_BITRATE32, u32(units))]
        if units > 0 && units < 1 << 16 { fields.append(rate(NL80211_RATE_INFO_BITRATE, u16(UInt16(units)))) }
        return nest(type.rawValue, fields + extra)
    }

    /// A station record: genlmsghdr, IFINDEX, MAC, GENERATION and the STA_INFO nest of `information`.
    private static func record(command: nl80211_commands = NL80211_CMD_NEW_STATION, information: [[UInt8]]?) -> [UInt8] {
        var payload: [UInt8] = [UInt8(command.rawValue), 1, 0, 0]
        payload += attribute(NL80211_ATTR_IFINDEX.rawValue, u32(3))
        payload += attribute(NL80211_ATTR_MAC.rawValue, [0x02, 0x00, 0x5E, 0x10, 0x00, 0x01])
        payload += attribute(NL80211_ATTR_GENERATION.rawValue, u32(41))
        if let information { payload += nest(NL80211_ATTR_STA_INFO.rawValue, information) }
        return payload
    }

    /// What a laptop's iwlwifi reports to its access point on 802.11ac: counters, both
    /// signals, chains, both rates with their MCS details, flags and the BSS parameters.
    private static func typical(signal: Int8 = -62, average: Int8? = -60, transmitUnits: UInt32? = 8667) -> [[UInt8]] {
        let pad = NL80211_STA_INFO_PAD.rawValue
        var fields: [[UInt8]] = [
            field(NL80211_STA_INFO_CONNECTED_TIME, u32(3_611)),
            field(NL80211_STA_INFO_INACTIVE_TIME, u32(12)),
            u64Attribute(NL80211_STA_INFO_RX_BYTES64.rawValue, 1_203_994_112, pad: pad),
            u64Attribute(NL80211_STA_INFO_TX_BYTES64.rawValue, 98_113_001, pad: pad),
            field(NL80211_STA_INFO_RX_BYTES, u32(1_203_994_112)),
            field(NL80211_STA_INFO_TX_BYTES, u32(98_113_001)),
            field(NL80211_STA_INFO_SIGNAL, signed(signal)),
        ]
        if let average { fields.append(field(NL80211_STA_INFO_SIGNAL_AVG, signed(average))) }
        fields.append(nest(NL80211_STA_INFO_CHAIN_SIGNAL.rawValue, [attribute(0, signed(signal)), attribute(1, signed(signal - 3))]))
        if let transmitUnits {
            fields.append(rateNest(NL80211_STA_INFO_TX_BITRATE, units: transmitUnits, extra: [
                rate(NL80211_RATE_INFO_VHT_MCS, [9]), rate(NL80211_RATE_INFO_VHT_NSS, [2]),
                rate(NL80211_RATE_INFO_80_MHZ_WIDTH, []), rate(NL80211_RATE_INFO_SHORT_GI, []),
            ]))
        }
        fields += [
            rateNest(NL80211_STA_INFO_RX_BITRATE, units: 7800),
            field(NL80211_STA_INFO_RX_PACKETS, u32(880_112)),
            field(NL80211_STA_INFO_TX_PACKETS, u32(301_456)),
            field(NL80211_STA_INFO_TX_RETRIES, u32(4_012)),
            field(NL80211_STA_INFO_TX_FAILED, u32(17)),
            field(NL80211_STA_INFO_BEACON_LOSS, u32(0)),
            u64Attribute(NL80211_STA_INFO_RX_DURATION.rawValue, 88_123_456, pad: pad),
            field(NL80211_STA_INFO_STA_FLAGS, u32(0x7E) + u32(0x62)),  // struct nl80211_sta_flag_update: mask, set
            nest(NL80211_STA_INFO_BSS_PARAM.rawValue, [
                attribute(NL80211_STA_BSS_PARAM_DTIM_PERIOD.rawValue, [1]),
                attribute(NL80211_STA_BSS_PARAM_BEACON_INTERVAL.rawValue, u16(100)),
            ]),
            u64Attribute(NL80211_STA_INFO_BEACON_RX.rawValue, 35_210, pad: pad),
            field(NL80211_STA_INFO_BEACON_SIGNAL_AVG, signed(-59)),
        ]
        return fields
    }

    /// Parses `payload` as a generic netlink message of nl80211's family (its first `length` bytes, if given).
    private static func parse<Result>(_ payload: [UInt8], length: Int? = nil, _ body: (NetlinkMessage) -> Result) -> Result {
        let count = length ?? 16 + payload.count
        return message(Array((u32(UInt32(count)) + u16(0x1C) + u16(UInt16(NLM_F_MULTI)) + u32(1) + u32(0) + payload).prefix(count)), body)
    }

    /// The message in `bytes` (a header and what follows), in an aligned allocation of its own.
    private static func message<Result>(_ bytes: [UInt8], _ body: (NetlinkMessage) -> Result) -> Result {
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 8)
        defer { memory.deallocate() }
        memory.copyBytes(from: bytes)
        return body(NetlinkMessage(header: memory.baseAddress!.bindMemory(to: nlmsghdr.self, capacity: 1)))
    }

    func testStationRecords() {
        let sixteenBitOnly = Self.nest(NL80211_STA_INFO_TX_BITRATE.rawValue, [Self.rate(NL80211_RATE_INFO_BITRATE, Self.u16(540))])
        let shortSignal = Self.attribute(NL80211_STA_INFO_SIGNAL.rawValue, [])
        let cases: [(name: String, payload: [UInt8], length: Int?, expected: WirelessStation?)] = [
            ("802.11ac: the average signal, BITRATE32", Self.record(information: Self.typical()), nil,
             WirelessStation(signal: -60, transmitBitRate: 866_700_000)),
            ("802.11be at 11.5 Gbit/s: only BITRATE32 holds it", Self.record(information: Self.typical(transmitUnits: 115_290)), nil,
             WirelessStation(signal: -60, transmitBitRate: 11_529_000_000)),
            ("no average kept: the last signal", Self.record(information: Self.typical(signal: -72, average: nil)), nil,
             WirelessStation(signal: -72, transmitBitRate: 866_700_000)),
            ("a signal of -100 dBm is a signed byte", Self.record(information: Self.typical(signal: -100, average: -100)), nil,
             WirelessStation(signal: -100, transmitBitRate: 866_700_000)),
            ("no transmit rate yet: the signal alone", Self.record(information: Self.typical(transmitUnits: nil)), nil,
             WirelessStation(signal: -60, transmitBitRate: nil)),
            ("a rate of 0 is no rate", Self.record(information: Self.typical(transmitUnits: 0)), nil,
             WirelessStation(signal: -60, transmitBitRate: nil)),
            ("an old kernel's 16-bit BITRATE, no signal", Self.record(information: [sixteenBitOnly]), nil,
             WirelessStation(signal: nil, transmitBitRate: 54_000_000)),
            ("no STA_INFO", Self.record(information: nil), nil, nil),
            ("an empty STA_INFO", Self.record(information: []), nil, nil),
            ("another command (DEL_STATION)", Self.record(command: NL80211_CMD_DEL_STATION, information: Self.typical()), nil, nil),
            ("a SIGNAL with no byte fails the policy", Self.record(information: [shortSignal] + Self.typical()), nil, nil),
            ("cut inside STA_INFO: nothing", Self.record(information: Self.typical()), 60, nil),
            ("only a genlmsghdr", [UInt8(NL80211_CMD_NEW_STATION.rawValue), 1, 0, 0], nil, nil),
            ("shorter than a genlmsghdr", [UInt8(NL80211_CMD_NEW_STATION.rawValue), 1], nil, nil),
        ]
        for (name, payload, length, expected) in cases {
            XCTAssertEqual(Self.parse(payload, length: length, WirelessStationInfo.parse), expected, name)
        }
    }

    /// A nest whose last attribute claims more than the nest holds: what came before it still counts.
    func testAttributeOverrunningItsNestEndsTheNest() {
        var information = [Self.field(NL80211_STA_INFO_SIGNAL_AVG, Self.signed(-81))]
        information.append(Self.u16(200) + Self.u16(UInt16(NL80211_STA_INFO_TX_BITRATE.rawValue)) + Self.u32(8667))
        XCTAssertEqual(Self.parse(Self.record(information: information), WirelessStationInfo.parse), WirelessStation(signal: -81))
    }

    func testFamilyIdentifier() {
        func reply(_ attributes: [[UInt8]], command: Int = Int(CTRL_CMD_NEWFAMILY)) -> UInt16? {
            let payload: [UInt8] = [UInt8(command), 2, 0, 0] + Array(attributes.joined())
            return Self.parse(payload, WirelessStationInfo.familyIdentifier)
        }
        let name = Self.attribute(UInt32(CTRL_ATTR_FAMILY_NAME), Array("nl80211".utf8) + [0])
        XCTAssertEqual(reply([Self.attribute(UInt32(CTRL_ATTR_FAMILY_ID), Self.u16(0x1C)), name]), 0x1C)
        XCTAssertEqual(reply([name]), nil, "no identifier")
        XCTAssertEqual(reply([Self.attribute(UInt32(CTRL_ATTR_FAMILY_ID), [0x1C]), name]), nil, "a one-byte identifier fails the policy")
        XCTAssertEqual(reply([Self.attribute(UInt32(CTRL_ATTR_FAMILY_ID), Self.u16(0x1C))], command: Int(CTRL_CMD_GETFAMILY)), nil,
                       "the request, not the answer")
    }

    /// The fuzz target's generic netlink seeds read as what they are: the controller's answer
    /// this kernel gave for "nlctrl" (its identifier is GENL_ID_CTRL), and the station records.
    func testSeeds() throws {
        let seeds = Dictionary(uniqueKeysWithValues: try FuzzInputs.inputs(for: "netlink"))
        func first<Result>(_ name: String, _ body: (NetlinkMessage) -> Result) throws -> Result {
            return Self.message(try XCTUnwrap(seeds["corpus/\(name)"], name), body)
        }
        XCTAssertEqual(try first("genl-ctrl-family", WirelessStationInfo.familyIdentifier), UInt16(GENL_ID_CTRL))
        XCTAssertEqual(try first("nl80211-station", WirelessStationInfo.parse), WirelessStation(signal: -60, transmitBitRate: 866_700_000))
        XCTAssertEqual(try first("nl80211-station-legacy-rate", WirelessStationInfo.parse), WirelessStation(transmitBitRate: 54_000_000))
        XCTAssertEqual(try first("nl80211-station-wifi7", WirelessStationInfo.parse), WirelessStation(signal: -48, transmitBitRate: 11_529_000_000))
        XCTAssertEqual(try first("nl80211-station-dump", WirelessStationInfo.parse), WirelessStation(signal: -60, transmitBitRate: 866_700_000))
        XCTAssertNil(try first("nl80211-station-truncated", WirelessStationInfo.parse))
    }

    /// The real read against this kernel, for loopback: without cfg80211 the controller knows
    /// no nl80211, with it loopback has no station; either way an error that says so.
    func testReadOfAnInterfaceWithoutARadioFails() {
        XCTAssertThrowsError(try WirelessStationInfo.read(interfaceIndex: 1)) { error in
            XCTAssertTrue("\(error)".contains("nl80211"), "\(error)")
        }
    }

    /// The read's socket gives up: a blocking receive with nothing to read returns after the
    /// timeout, as a request the kernel does not answer in time would fail.
    func testABlockingReadGivesUpAfterItsTimeout() throws {
        let socket = try NetlinkSocket(role: "nl80211", blocking: true, protocol: NETLINK_GENERIC, timeout: .milliseconds(200))
        let start = ContinuousClock.now
        XCTAssertEqual(try socket.receive { _ in XCTFail("nothing was asked") }, .drained)
        let waited = ContinuousClock.now - start
        XCTAssertGreaterThanOrEqual(waited, .milliseconds(190))
        XCTAssertLessThan(waited, .seconds(5))
    }
}
