import ReachConfiguration
import XCTest

/// `[nat64]`: DNS64 discovery is on unless switched off, and a bad value names file, line and key.
final class NAT64ConfigurationTests: XCTestCase {
    private let file = "/etc/reachd/reachd.toml"

    func testDiscoverDNS64() throws {
        let cases: [(text: String, expected: Bool)] = [
            ("", true),
            ("[nat64]\n", true),
            ("[nat64]\ndiscover-dns64 = true\n", true),
            ("[nat64]\ndiscover-dns64 = false\n", false),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(try ReachdConfiguration(parsing: text, file: file).nat64.discoverDNS64, expected, text)
        }
    }

    func testBadValuesNameTheKey() {
        let cases: [(text: String, expected: [String])] = [
            ("[nat64]\ndiscover-dns64 = \"no\"\n", [":2: nat64.discover-dns64: expected true or false, found string"]),
            ("[nat64]\ndiscover-dns = false\n", [":2: unknown key \"nat64.discover-dns\" (did you mean \"nat64.discover-dns64\"?)"]),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(configurationDiagnostics(text, file: file), expected.map { file + $0 }, text)
        }
    }
}
