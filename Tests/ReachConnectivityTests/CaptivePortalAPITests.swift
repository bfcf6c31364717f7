import ReachabilityCore
@testable import ReachConfiguration
@testable import ReachConnectivity
import ReachProtocol
import XCTest


/// RFC 8908 answers and API URIs, case by case.
final class CaptivePortalAPITests: XCTestCase {
    private let json = "application/captive+json"

    func testAnswers() {
        let cases: [(String, String, String?, Result<CaptivePortal, CaptivePortalAPI.Problem>)] = [
            ("captive, with everything",
             #"{"captive":true,"user-portal-url":"https://portal.test/login","venue-info-url":"https://venue.test/","can-extend-session":true,"seconds-remaining":326,"bytes-remaining":65536}"#,
             json, .success(CaptivePortal(captive: true, userPortalURL: "https://portal.test/login", venueInfoURL: "https://venue.test/",
                                               canExtendSession: true, secondsRemaining: 326, bytesRemaining: 65536))),
            ("released", #"{"captive":false,"seconds-remaining":1800.5}"#, "application/captive+json; charset=utf-8",
             .success(CaptivePortal(captive: false, secondsRemaining: 1800))),
            ("media type in capitals, blanks around it", #"{"captive":false}"#, " \tApplication/Captive+JSON \t; charset=utf-8",
             .success(CaptivePortal(captive: false))),
            ("a blank media type", #"{"captive":false}"#, " \t ", .failure(.wrongMediaType(" \t "))),
            ("unknown fields ignored", #"{"captive":false,"x-vendor":1}"#, json, .success(CaptivePortal(captive: false))),
            ("captive without a portal URL", #"{"captive":true}"#, json, .failure(.captiveWithoutPortal)),
            ("portal URL over plain HTTP", #"{"captive":true,"user-portal-url":"http://portal.test/"}"#, json,
             .failure(.unusableURI("user-portal-url", .schemeNotAllowed("http")))),
            ("wrong media type", #"{"captive":false}"#, "application/json", .failure(.wrongMediaType("application/json"))),
            ("no media type", #"{"captive":false}"#, nil, .failure(.wrongMediaType(nil))),
            ("negative seconds clamp to 0", #"{"captive":false,"seconds-remaining":-5}"#, json, .success(CaptivePortal(captive: false, secondsRemaining: 0))),
            // Numbers that trapped in Int(_:) or in the timer arithmetic.
            ("seconds 1e300 clamp to a year", #"{"captive":false,"seconds-remaining":1e300}"#, json,
             .success(CaptivePortal(captive: false, secondsRemaining: CaptivePortalAPI.maximumSecondsRemaining))),
            ("seconds -1e300 clamp to 0", #"{"captive":false,"seconds-remaining":-1e300}"#, json, .success(CaptivePortal(captive: false, secondsRemaining: 0))),
            ("seconds 1e10 clamp to a year", #"{"captive":false,"seconds-remaining":1e10}"#, json,
             .success(CaptivePortal(captive: false, secondsRemaining: 31_536_000))),
            ("seconds just under the cap kept", #"{"captive":false,"seconds-remaining":31535999.9}"#, json,
             .success(CaptivePortal(captive: false, secondsRemaining: 31_535_999))),
            ("an integer too large for Int", #"{"captive":false,"seconds-remaining":99999999999999999999999}"#, json,
             .success(CaptivePortal(captive: false, secondsRemaining: 31_536_000))),
            ("bytes 1e300 clamp to 2^53", #"{"captive":false,"bytes-remaining":1e300}"#, json,
             .success(CaptivePortal(captive: false, bytesRemaining: 9_007_199_254_740_992))),
            ("bytes -1e300 clamp to 0", #"{"captive":false,"bytes-remaining":-1e300}"#, json, .success(CaptivePortal(captive: false, bytesRemaining: 0))),
            ("negative zero", #"{"captive":false,"seconds-remaining":-0.0}"#, json, .success(CaptivePortal(captive: false, secondsRemaining: 0))),
            // The URLs an answer carries pass the one URI rule.
            ("portal URL with ESC and a forged sd_notify line", #"{"captive":true,"user-portal-url":"https://p.test/\u001b]0;x\u0007\nWATCHDOG=trigger"}"#, json,
             .failure(.unusableURI("user-portal-url", .forbiddenCharacter("\u{1B}", offset: 15)))),
            ("portal URL with U+202E", #"{"captive":true,"user-portal-url":"https://p.test/\u202Egpj"}"#, json,
             .failure(.unusableURI("user-portal-url", .forbiddenCharacter("\u{202E}", offset: 15)))),
            ("portal URL with port 99999", #"{"captive":true,"user-portal-url":"https://p.test:99999/"}"#, json,
             .failure(.unusableURI("user-portal-url", .portOutOfRange("99999")))),
            ("portal URL javascript:", #"{"captive":true,"user-portal-url":"javascript:alert(1)"}"#, json,
             .failure(.unusableURI("user-portal-url", .schemeNotAllowed("javascript")))),
            ("venue URL file:", #"{"captive":false,"venue-info-url":"file:///etc/shadow"}"#, json,
             .failure(.unusableURI("venue-info-url", .schemeNotAllowed("file")))),
            ("venue URL with user info", #"{"captive":false,"venue-info-url":"https://u@venue.test/"}"#, json,
             .failure(.unusableURI("venue-info-url", .userInfo))),
        ]
        for (name, body, type, expected) in cases {
            XCTAssertEqual(CaptivePortalAPI.parse(body: Array(body.utf8), contentType: type), expected, name)
        }
        // Malformed and oversized answers.
        guard case .failure(.malformed) = CaptivePortalAPI.parse(body: Array(#"{"user-portal-url":"https://p.test/"}"#.utf8), contentType: json) else {
            return XCTFail("captive is required")
        }
        guard case .failure(.malformed) = CaptivePortalAPI.parse(body: Array(#"{"captive":"yes"}"#.utf8), contentType: json) else {
            return XCTFail("captive must be a boolean")
        }
        let huge = Array(#"{"captive":false,"pad":""#.utf8) + Array(repeating: UInt8(ascii: "x"), count: 5000) + Array(#""}"#.utf8)
        XCTAssertEqual(CaptivePortalAPI.parse(body: huge, contentType: json), .failure(.tooLarge(huge.count)))
    }

    func testAPIURIs() {
        let cases: [(String, Bool)] = [
            ("https://portal.test/api", true), ("HTTPS://Portal.Test/", true), ("https://[2001:db8::1]:8443/captive", true),
            ("http://portal.test/api", false), ("https://", false), ("https:///path", false), ("ftp://x", false), ("", false),
            ("https://10.77.0.1:99999/captive", false), ("https://10.77.0.1:0/captive", false), ("https://portal.test/\u{1B}[2J", false),
            ("https://portal.test/\u{202E}", false), ("javascript:alert(1)", false), ("file:///etc/shadow", false), ("https://u:p@portal.test/", false),
        ]
        for (uri, valid) in cases {
            let result = CaptivePortalAPI.validate(apiURI: uri)
            XCTAssertEqual(result == .success(uri), valid, uri)
        }
    }

    /// networkd's Describe: one URI per link that has one; malformed links are skipped.
    func testNetworkdDescribe() throws {
        let reply = try VarlinkCoding.decode(JSONObject.self, from: Array(#"""
            {"Interfaces": [
              {"Index": 1, "Name": "lo"},
              {"Index": 2, "Name": "wlan0", "CaptivePortal": "https://portal.test/api"},
              {"Index": 3, "CaptivePortal": ""},
              {"Index": "4", "CaptivePortal": "https://x.test/"},
              {"Name": "noindex", "CaptivePortal": "https://y.test/"},
              {"Index": 5, "CaptivePortal": 7},
              {"Index": 6, "CaptivePortal": "https://10.77.0.1:99999/captive"},
              {"Index": 7, "CaptivePortal": "javascript:alert(1)"},
              {"Index": 8, "CaptivePortal": "https://portal.test/\u001b]0;x\u0007"}
            ]}
            """#.utf8))
        XCTAssertEqual(NetworkdPortals.captivePortals(inDescribe: reply), [2: "https://portal.test/api"])
        XCTAssertEqual(NetworkdPortals.captivePortals(inDescribe: [:]), [:])
        XCTAssertEqual(NetworkdPortals.captivePortals(inDescribe: ["Interfaces": .string("no")]), [:])
    }
}
