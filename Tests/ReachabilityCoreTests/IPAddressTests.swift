import Foundation
import ReachabilityCore
import XCTest

final class IPAddressTests: XCTestCase {
    private static let zero16 = [UInt8](repeating: 0, count: 16)

    private static func v6(_ words: [UInt16]) -> [UInt8] {
        words.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }

    func testParsesValidAddresses() {
        let cases: [(name: String, text: String, bytes: [UInt8])] = [
            ("v4 private", "10.0.0.1", [10, 0, 0, 1]),
            ("v4 zeros", "0.0.0.0", [0, 0, 0, 0]),
            ("v4 broadcast", "255.255.255.255", [255, 255, 255, 255]),
            ("v4 link-local", "169.254.1.2", [169, 254, 1, 2]),
            ("v6 unspecified", "::", Self.zero16),
            ("v6 loopback", "::1", Self.v6([0, 0, 0, 0, 0, 0, 0, 1])),
            ("v6 link-local", "fe80::1", Self.v6([0xFE80, 0, 0, 0, 0, 0, 0, 1])),
            ("v6 trailing ::", "2001:db8::", Self.v6([0x2001, 0xDB8, 0, 0, 0, 0, 0, 0])),
            ("v6 full form", "2001:0db8:0000:0000:0000:ff00:0042:8329", Self.v6([0x2001, 0xDB8, 0, 0, 0, 0xFF00, 0x42, 0x8329])),
            ("v6 full form no leading zeros", "1:2:3:4:5:6:7:8", Self.v6([1, 2, 3, 4, 5, 6, 7, 8])),
            ("v6 upper case", "2001:DB8::ABCD", Self.v6([0x2001, 0xDB8, 0, 0, 0, 0, 0, 0xABCD])),
            ("v6 :: standing for one group", "1:2:3:4:5:6:7::", Self.v6([1, 2, 3, 4, 5, 6, 7, 0])),
            ("v6 :: standing for one group in the middle", "1:2:3::5:6:7:8", Self.v6([1, 2, 3, 0, 5, 6, 7, 8])),
            ("v6 leading ::", "::ffff:a00:1", Self.v6([0, 0, 0, 0, 0, 0xFFFF, 0xA00, 1])),
        ]
        for c in cases {
            let address = IPAddress(c.text)
            XCTAssertEqual(address?.bytes, c.bytes, c.name)
            XCTAssertEqual(address?.family, c.bytes.count == 4 ? .ipv4 : .ipv6, c.name)
        }
    }

    func testRejectsInvalidAddresses() {
        let cases: [(name: String, text: String)] = [
            ("empty", ""),
            ("v4 three parts", "1.2.3"),
            ("v4 five parts", "1.2.3.4.5"),
            ("v4 octet over 255", "256.1.1.1"),
            ("v4 empty octet", "1..2.3"),
            ("v4 trailing dot", "1.2.3.4."),
            ("v4 four-digit octet", "0001.2.3.4"),
            ("v4 letters", "a.b.c.d"),
            ("v4 plus sign", "+1.2.3.4"),
            ("v4 minus zero", "-0.0.0.0"),
            ("v4 whitespace", " 1.2.3.4"),
            ("v6 lone colon", ":"),
            ("v6 triple colon", ":::"),
            ("v6 leading single colon", ":1::"),
            ("v6 trailing single colon", "1::2:"),
            ("v6 two ::", "1::2::3"),
            ("v6 nine groups", "1:2:3:4:5:6:7:8:9"),
            ("v6 seven groups without ::", "1:2:3:4:5:6:7"),
            ("v6 :: with eight groups already", "1:2:3:4:5:6:7::8"),
            ("v6 :: with eight groups already, leading", "::1:2:3:4:5:6:7:8"),
            ("v6 bad hex", "fe80::g1"),
            ("v6 group over four digits", "12345::1"),
            ("v6 plus sign", "+1::1"),
            ("v6 minus zero", "::-0"),
            ("v6 zone id", "fe80::1%eth0"),
        ]
        for c in cases {
            XCTAssertNil(IPAddress(c.text), "\(c.name): \(c.text)")
        }
    }

    func testInitFromBytes() {
        let cases: [(name: String, bytes: [UInt8], expected: IPAddress?)] = [
            ("four bytes", [192, 0, 2, 1], .v4(192, 0, 2, 1)),
            ("sixteen bytes", Self.zero16, .v6(Self.zero16)),
            ("empty", [], nil),
            ("five bytes", [1, 2, 3, 4, 5], nil),
            ("fifteen bytes", [UInt8](repeating: 0, count: 15), nil),
        ]
        for c in cases {
            XCTAssertEqual(IPAddress(bytes: c.bytes), c.expected, c.name)
        }
    }

    func testFormatsRFC5952() {
        let cases: [(name: String, words: [UInt16], expected: String)] = [
            ("all zero", [0, 0, 0, 0, 0, 0, 0, 0], "::"),
            ("loopback", [0, 0, 0, 0, 0, 0, 0, 1], "::1"),
            ("trailing run", [0x2001, 0xDB8, 0, 0, 0, 0, 0, 0], "2001:db8::"),
            ("link-local", [0xFE80, 0, 0, 0, 0, 0, 0, 1], "fe80::1"),
            ("no zeros", [1, 2, 3, 4, 5, 6, 7, 8], "1:2:3:4:5:6:7:8"),
            ("single zero group is not compressed", [0x2001, 0xDB8, 0, 1, 1, 1, 1, 1], "2001:db8:0:1:1:1:1:1"),
            ("longest run wins over an earlier shorter one", [0x2001, 0, 0, 1, 0, 0, 0, 1], "2001:0:0:1::1"),
            ("first of equal runs wins", [0x2001, 0xDB8, 0, 0, 1, 0, 0, 1], "2001:db8::1:0:0:1"),
            ("leading zeros of a group dropped", [0x2001, 0x0DB8, 0x0042, 0, 0, 0, 0, 0x000A], "2001:db8:42::a"),
            ("lower case hex", [0xABCD, 0xEF01, 0, 0, 0, 0, 0, 0xFFFF], "abcd:ef01::ffff"),
            ("run at the start", [0, 0, 0, 0, 0, 0xFFFF, 0x0A00, 1], "::ffff:a00:1"),
            ("two single zeros", [1, 0, 2, 0, 3, 0, 4, 0], "1:0:2:0:3:0:4:0"),
        ]
        for c in cases {
            XCTAssertEqual(IPAddress.v6(Self.v6(c.words)).description, c.expected, c.name)
        }
        XCTAssertEqual(IPAddress.v4(192, 168, 0, 254).description, "192.168.0.254", "dotted quad")
    }

    func testRoundTripsThroughCanonicalText() {
        let cases: [(name: String, text: String, canonical: String)] = [
            ("v4", "10.0.0.1", "10.0.0.1"),
            ("v6 full form", "2001:0db8:0000:0000:0000:ff00:0042:8329", "2001:db8::ff00:42:8329"),
            ("v6 upper case", "FE80::ABCD", "fe80::abcd"),
            ("v6 needless single-group ::", "1:2:3::5:6:7:8", "1:2:3:0:5:6:7:8"),
            ("v6 uncompressed zeros", "0:0:0:0:0:0:0:1", "::1"),
            ("v6 canonical", "2001:db8::1", "2001:db8::1"),
        ]
        for c in cases {
            guard let parsed = IPAddress(c.text) else { XCTFail("\(c.name): did not parse"); continue }
            XCTAssertEqual(parsed.description, c.canonical, c.name)
            XCTAssertEqual(IPAddress(parsed.description), parsed, "\(c.name): canonical text parses back")
        }
    }

    func testLinkLocalAndLoopback() {
        let cases: [(name: String, text: String, linkLocal: Bool, loopback: Bool)] = [
            ("v4 link-local low", "169.254.0.1", true, false),
            ("v4 link-local high", "169.254.255.254", true, false),
            ("v4 next to link-local", "169.253.1.1", false, false),
            ("v4 public", "8.8.8.8", false, false),
            ("v4 loopback", "127.0.0.1", false, true),
            ("v4 loopback /8", "127.1.2.3", false, true),
            ("v6 fe80", "fe80::1", true, false),
            ("v6 febf is still fe80::/10", "febf::1", true, false),
            ("v6 fec0 is outside fe80::/10", "fec0::1", false, false),
            ("v6 global", "2001:db8::1", false, false),
            ("v6 loopback", "::1", false, true),
            ("v6 unspecified", "::", false, false),
            ("v6 ::2", "::2", false, false),
        ]
        for c in cases {
            let address = ip(c.text)
            XCTAssertEqual(address.isLinkLocal, c.linkLocal, "\(c.name): isLinkLocal")
            XCTAssertEqual(address.isLoopback, c.loopback, "\(c.name): isLoopback")
        }
    }

    func testCodableAsString() throws {
        let cases: [(name: String, address: IPAddress, json: String)] = [
            ("v4", .v4(10, 0, 0, 1), "[\"10.0.0.1\"]"),
            ("v6", ip("2001:0DB8::0001"), "[\"2001:db8::1\"]"),
        ]
        for c in cases {
            let data = try JSONEncoder().encode([c.address])
            XCTAssertEqual(String(decoding: data, as: UTF8.self), c.json, c.name)
            XCTAssertEqual(try JSONDecoder().decode([IPAddress].self, from: data), [c.address], c.name)
        }
        let bad: [(name: String, json: String)] = [
            ("not an address", "[\"10.0.0\"]"),
            ("a number", "[167772161]"),
        ]
        for c in bad {
            XCTAssertThrowsError(try JSONDecoder().decode([IPAddress].self, from: Data(c.json.utf8)), c.name)
        }
    }
}
