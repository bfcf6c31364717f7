import XCTest

@testable import NetlinkMonitor

/// RA option 37 as the kernel forwards it (RTM_NEWNDUSEROPT payloads built by hand).
final class NDUserOptionTests: XCTestCase {
    /// An ND option: type, length in 8-octet units, value padded with NUL.
    private func option(_ type: UInt8, _ value: [UInt8]) -> [UInt8] {
        let padded = value + Array(repeating: 0, count: (8 - (value.count + 2) % 8) % 8)
        return [type, UInt8((padded.count + 2) / 8)] + padded
    }

    func testCaptivePortalOption() {
        let uri = Array("https://portal.test/api".utf8)
        let rdnss = option(25, [0, 0, 0, 0, 0, 0] + Array(repeating: 0x20, count: 16))
        let cases: [(String, [UInt8], NDUserOption.CaptivePortal?)] = [
            ("the option alone", payload(options: option(37, uri)), .init(interfaceIndex: 3, apiURI: "https://portal.test/api")),
            ("after an RDNSS option", payload(index: 7, options: rdnss + option(37, uri)), .init(interfaceIndex: 7, apiURI: "https://portal.test/api")),
            ("the unrestricted URN: no portal", payload(options: option(37, Array(NDUserOption.unrestricted.utf8))), .init(interfaceIndex: 3, apiURI: nil)),
            ("only RDNSS", payload(options: rdnss), nil),
            ("not an RA", payload(icmpType: 137, options: option(37, uri)), nil),
            ("not IPv6", payload(family: 2, options: option(37, uri)), nil),
            ("zero-length option stops the walk", payload(options: [25, 0, 0, 0, 0, 0, 0, 0] + option(37, uri)), nil),
            ("option longer than the options", payload(options: [37, 9] + uri), nil),
            ("declared options past the end", payload(options: option(37, uri), declaredLength: 200), nil),
            ("empty URI", payload(options: option(37, [])), nil),
            ("control characters in the URI", payload(options: option(37, Array("https://a\n.test".utf8))), nil),
            ("short header", [10, 0, 8, 0], nil),
            // An API URI that cannot be fetched announces no portal.
            ("port 99999 (crashed reachd)", payload(options: option(37, Array("https://10.77.0.1:99999/captive".utf8))), nil),
            ("port 0", payload(options: option(37, Array("https://10.77.0.1:0/captive".utf8))), nil),
            ("port 65536", payload(options: option(37, Array("https://10.77.0.1:65536/captive".utf8))), nil),
            ("largest port", payload(options: option(37, Array("https://10.77.0.1:65535/captive".utf8))),
             .init(interfaceIndex: 3, apiURI: "https://10.77.0.1:65535/captive")),
            ("plain http", payload(options: option(37, Array("http://portal.test/api".utf8))), nil),
            ("javascript:", payload(options: option(37, Array("javascript:alert(1)".utf8))), nil),
            ("file:", payload(options: option(37, Array("file:///etc/shadow".utf8))), nil),
            ("user info", payload(options: option(37, Array("https://u:p@portal.test/".utf8))), nil),
            ("ESC in the URI", payload(options: option(37, Array("https://portal.test/\u{1B}[2J".utf8))), nil),
            ("U+202E in the URI", payload(options: option(37, Array("https://portal.test/\u{202E}".utf8))), nil),
            ("C1 CSI in the URI", payload(options: option(37, [UInt8](Array("https://portal.test/".utf8)) + [0xC2, 0x9B])), nil),
            ("a quote in the URI", payload(options: option(37, Array("https://portal.test/\"x".utf8))), nil),
            ("NUL ends the URI: the rest is padding", payload(options: option(37, uri + [0] + Array("junk".utf8))),
             .init(interfaceIndex: 3, apiURI: "https://portal.test/api")),
            ("the longest option (2,040 bytes)", payload(options: option(37, Array(("https://portal.test/" + String(repeating: "a", count: 2018)).utf8))),
             .init(interfaceIndex: 3, apiURI: "https://portal.test/" + String(repeating: "a", count: 2018))),
        ]
        for (name, bytes, expected) in cases {
            XCTAssertEqual(NDUserOption.captivePortal(inPayload: bytes), expected, name)
        }
    }
}
