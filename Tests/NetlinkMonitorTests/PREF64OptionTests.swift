@testable import NetlinkMonitor
import ReachabilityCore
import XCTest

/// RA option 38 (RFC 8781) as the kernel forwards it, and what the monitor's tracked state
/// does with the prefixes it carries.
final class PREF64OptionTests: XCTestCase {
    /// A PREF64 option: scaled lifetime (units of 8 s), prefix length code, 96 prefix bits.
    private func pref64(scaled: UInt16, code: UInt16, prefix: String, length: UInt8 = 2) -> [UInt8] {
        let field = scaled << 3 | code
        let bytes = Array(IPAddress(prefix)!.bytes.prefix(12))
        return [38, length, UInt8(field >> 8), UInt8(field & 0xFF)] + bytes
    }

    func testOptionParsing() {
        let rdnss: [UInt8] = [25, 3, 0, 0, 0, 0, 0x0E, 0x10] + [UInt8](repeating: 0x20, count: 16)
        func expect(_ text: String, seconds: Int, index: Int32 = 3) -> NDUserOption.PREF64 {
            NDUserOption.PREF64(interfaceIndex: index, prefix: NAT64Prefix(text, source: .routerAdvertisement)!, lifetime: .seconds(seconds))
        }
        let cases: [(String, [UInt8], NDUserOption.PREF64?)] = [
            ("the well-known prefix, 600 s", payload(options: pref64(scaled: 75, code: 0, prefix: "64:ff9b::")), expect("64:ff9b::/96", seconds: 600)),
            ("after an RDNSS option", payload(index: 9, options: rdnss + pref64(scaled: 75, code: 0, prefix: "64:ff9b::")), expect("64:ff9b::/96", seconds: 600, index: 9)),
            ("code 1: /64", payload(options: pref64(scaled: 1, code: 1, prefix: "2001:db8:122:344::")), expect("2001:db8:122:344::/64", seconds: 8)),
            ("code 2: /56", payload(options: pref64(scaled: 1, code: 2, prefix: "2001:db8:122:300::")), expect("2001:db8:122:300::/56", seconds: 8)),
            ("code 3: /48", payload(options: pref64(scaled: 1, code: 3, prefix: "2001:db8:122::")), expect("2001:db8:122::/48", seconds: 8)),
            ("code 4: /40", payload(options: pref64(scaled: 1, code: 4, prefix: "2001:db8:100::")), expect("2001:db8:100::/40", seconds: 8)),
            ("code 5: /32", payload(options: pref64(scaled: 1, code: 5, prefix: "2001:db8::")), expect("2001:db8::/32", seconds: 8)),
            ("bits past the length are cleared", payload(options: pref64(scaled: 1, code: 5, prefix: "2001:db8:ffff::")), expect("2001:db8::/32", seconds: 8)),
            ("the longest lifetime", payload(options: pref64(scaled: 8191, code: 0, prefix: "64:ff9b::")), expect("64:ff9b::/96", seconds: 65528)),
            ("zero lifetime: withdraw", payload(options: pref64(scaled: 0, code: 0, prefix: "64:ff9b::")), expect("64:ff9b::/96", seconds: 0)),
            ("bad code 6", payload(options: pref64(scaled: 75, code: 6, prefix: "64:ff9b::")), nil),
            ("bad code 7", payload(options: pref64(scaled: 75, code: 7, prefix: "64:ff9b::")), nil),
            ("length 3 (24 octets)", payload(options: pref64(scaled: 75, code: 0, prefix: "64:ff9b::", length: 3) + [UInt8](repeating: 0, count: 8)), nil),
            ("length 1 (8 octets)", payload(options: Array(pref64(scaled: 75, code: 0, prefix: "64:ff9b::", length: 1).prefix(8))), nil),
            ("short: cut after 12 octets", payload(options: Array(pref64(scaled: 75, code: 0, prefix: "64:ff9b::").prefix(12))), nil),
            ("declared options past the end", payload(options: pref64(scaled: 75, code: 0, prefix: "64:ff9b::"), declaredLength: 64), nil),
            ("zero-length option stops the walk", payload(options: [25, 0, 0, 0, 0, 0, 0, 0] + pref64(scaled: 75, code: 0, prefix: "64:ff9b::")), nil),
            ("not an RA", payload(icmpType: 137, options: pref64(scaled: 75, code: 0, prefix: "64:ff9b::")), nil),
            ("not IPv6", payload(family: 2, options: pref64(scaled: 75, code: 0, prefix: "64:ff9b::")), nil),
            ("only RDNSS", payload(options: rdnss), nil),
            ("short header", [10, 0, 16, 0], nil),
        ]
        for (name, bytes, expected) in cases {
            XCTAssertEqual(NDUserOption.pref64(inPayload: bytes), expected, name)
            // A PREF64 payload is never taken for a captive portal.
            XCTAssertNil(NDUserOption.captivePortal(inPayload: bytes), name)
        }
    }

    func testTrackedStateForgetsPrefixesWithTheLink() {
        func link(up: Bool = true, carrier: Bool = true) -> ParsedMessage {
            .link(Link(index: 2, name: "eth0", flags: up ? [.up, .running] : [], operState: up ? .up : .down, carrier: carrier))
        }
        let prefix = NAT64Prefix("64:ff9b::/96", source: .routerAdvertisement)!
        let steps: [(String, ParsedMessage?, [String])] = [
            ("learnt", nil, ["64:ff9b::/96"]),
            ("an address changes nothing", .address(InterfaceAddress(interfaceIndex: 2, address: IPAddress("2001:db8::2")!, prefixLength: 64)), ["64:ff9b::/96"]),
            ("carrier lost: forgotten", link(carrier: false), []),
            ("learnt again", nil, ["64:ff9b::/96"]),
            ("down: forgotten", link(up: false), []),
            ("learnt again", nil, ["64:ff9b::/96"]),
            ("removed: forgotten", .linkRemoved(2), []),
        ]
        var state = TrackedState()
        state.apply(link()) { _ in DeviceFacts() }
        for (name, message, expected) in steps {
            if let message {
                state.apply(message) { _ in DeviceFacts() }
            } else {
                if state.links[2] == nil { state.apply(link()) { _ in DeviceFacts() } }
                state.nat64Prefixes.learn(prefix, lifetime: .seconds(600), on: 2, now: .now)
            }
            XCTAssertEqual(state.snapshot().nat64Prefixes[2]?.map(\.description) ?? [], expected, name)
        }
    }
}
