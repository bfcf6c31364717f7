import ReachabilityCore
import XCTest

/// Option 43 `ANDROID_METERED` from what DHCP clients record, case by case.
final class DHCPLeasesTests: XCTestCase {
    private let here = [IPAddress("10.55.0.16")!]

    func testMarker() {
        let cases: [(String, [UInt8], Bool)] = [
            ("Android's raw marker", Array("ANDROID_METERED".utf8), true),
            ("inside a sub-option", [1, 15] + Array("ANDROID_METERED".utf8), true),
            ("a prefix of it", Array("ANDROID_METER".utf8), false),
            ("other vendor data", Array("MSFT 5.0".utf8), false),
            ("nothing", [], false),
            ("lower case", Array("android_metered".utf8), false),
        ]
        for (name, bytes, expected) in cases {
            XCTAssertEqual(DHCPLeases.isAndroidMetered(vendorSpecific: bytes), expected, name)
        }
    }

    func testDhclient() {
        func lease(_ address: String, _ option: String?) -> String {
            "lease {\n  interface \"eth0\";\n  fixed-address \(address);\n  option routers 10.55.0.1;\n"
                + (option.map { "  option vendor-encapsulated-options \($0);\n" } ?? "") + "  renew 6 2026/11/28 12:56:51;\n}\n"
        }
        let cases: [(String, String, Bool)] = [
            ("a quoted marker", lease("10.55.0.16", "\"ANDROID_METERED\""), true),
            ("hex", lease("10.55.0.16", "41:4e:44:52:4f:49:44:5f:4d:45:54:45:52:45:44"), true),
            ("octal escapes", lease("10.55.0.16", "\"\\101NDROID_METERED\""), true),
            ("no option 43", lease("10.55.0.16", nil), false),
            ("another vendor's", lease("10.55.0.16", "\"MSFT 5.0\""), false),
            ("the marker in an old lease, the newest without", lease("10.55.0.16", "\"ANDROID_METERED\"") + lease("10.55.0.16", nil), false),
            ("the newest with it", lease("10.55.0.16", nil) + lease("10.55.0.16", "\"ANDROID_METERED\""), true),
            ("a lease for an address no longer held", lease("10.55.0.99", "\"ANDROID_METERED\""), false),
            ("another interface's lease", lease("10.55.0.16", "\"ANDROID_METERED\"").replacingOccurrences(of: "\"eth0\"", with: "\"wlan0\""), false),
            ("a forged statement inside a string", lease("10.55.0.16", "\"x;}lease {interface \\\"eth0\\\";fixed-address 10.55.0.16;option vendor-encapsulated-options \\\"ANDROID_METERED\\\"\""), false),
            ("bad hex", lease("10.55.0.16", "41:zz"), false),
            ("an unterminated string", "lease {\n  interface \"eth0\";\n  fixed-address 10.55.0.16;\n  option vendor-encapsulated-options \"ANDROID_METERED", false),
            ("empty", "", false),
            ("a newer lease still being written: the complete one counts", lease("10.55.0.16", "\"ANDROID_METERED\"") + "lease {\n  interface \"eth0\";\n  fixed-address 10.55.0.16;\n", true),
            ("a lease cut before its end", String(lease("10.55.0.16", "\"ANDROID_METERED\"").dropLast(2)), false),
        ]
        for (name, text, expected) in cases {
            XCTAssertEqual(DHCPLeases.dhclientLease(text[...], interface: "eth0")?.isMetered(holding: here) ?? false, expected, name)
        }
    }

    func testNetworkd() {
        let cases: [(String, String, Bool)] = [
            ("the marker", "# This is private data. Do not parse.\nADDRESS=10.55.0.16\nVENDOR_SPECIFIC=414e44524f49445f4d455445524544\n", true),
            ("none", "ADDRESS=10.55.0.16\nROUTER=10.55.0.1\n", false),
            ("an address no longer held", "ADDRESS=10.55.0.99\nVENDOR_SPECIFIC=414e44524f49445f4d455445524544\n", false),
            ("odd hex", "ADDRESS=10.55.0.16\nVENDOR_SPECIFIC=414\n", false),
            ("no address", "VENDOR_SPECIFIC=414e44524f49445f4d455445524544\n", false),
            ("hex over the bound", "ADDRESS=10.55.0.16\nVENDOR_SPECIFIC=" + String(repeating: "41", count: DHCPLeases.optionLimit + 1) + "\n", false),
        ]
        for (name, text, expected) in cases {
            XCTAssertEqual(DHCPLeases.networkdLease(text[...])?.isMetered(holding: here) ?? false, expected, name)
        }
    }
}
