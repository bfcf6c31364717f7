import ReachabilityCore
import ReachConfiguration
import ReachProtocol
import TestSupport
import XCTest

/// `config/reachd.toml` documents every setting with its default: uncommenting the settings
/// must give exactly the built-in defaults, and the commented example must be valid.
final class ShippedConfigurationTests: XCTestCase {
    private var shippedPath: String {
        Paths.repository.appendingPathComponent("config/reachd.toml").path
    }

    private func shippedText() throws -> String {
        try String(contentsOfFile: shippedPath, encoding: .utf8)
    }

    /// Removes the "#" of lines that start with "#[" or "#letter" (settings, not prose).
    private func uncommentSettings(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            guard line.hasPrefix("#"), let next = line.dropFirst().first, next == "[" || next.isLetter else { return String(line) }
            return String(line.dropFirst())
        }.joined(separator: "\n")
    }

    func testShippedFileIsValidAsIs() throws {
        XCTAssertEqual(try ReachdConfiguration(parsing: try shippedText(), file: shippedPath), ReachdConfiguration())
    }

    func testEveryDocumentedValueIsTheDefault() throws {
        let uncommented = uncommentSettings(try shippedText())
        var expected = ReachdConfiguration()
        expected.socket.path = SocketLocation.systemPath
        XCTAssertEqual(try ReachdConfiguration(parsing: uncommented, file: shippedPath), expected)
        XCTAssertEqual(expected.interfaces.policy.ignoredPatterns, InterfacePolicy.defaultIgnoredPatterns)
    }

    func testEverySettingIsDocumented() throws {
        let uncommented = uncommentSettings(try shippedText())
        let probeKeys = ["expect-status = ", "timeout = ", "initial-delay = ", "maximum-delay = ", "recheck-interval = ", "families = ",
                         "[probe.trust]", "pinning = ", "pinned-certificates = ", "public-key-pins = ", "validates-domain-name = ",
                         "allow-invalid-certificates = ", "router-advertisements = ", "fetch-api = ", "[captive-portal.trust]"]
        for key in ["path = ", "mode = ", "level = ", "ignore = ", "receive-buffer-size = ", "[probe]"] + probeKeys {
            XCTAssertTrue(uncommented.contains(key), key)
        }
        XCTAssertTrue(uncommented.contains("[metrics]"))
        for key in ["match = ", "type = ", "expensive = ", "constrained = ", "url = ", "https-url = ", "listen = ", "textfile-directory = "] {
            XCTAssertTrue(try shippedText().contains("#   \(key)"), key)
        }
    }

    func testOverrideExampleIsValid() throws {
        let text = try shippedText().split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("#   ") ? String(line.dropFirst(4)) : String(line)
        }.joined(separator: "\n")
        let parsed = try ReachdConfiguration(parsing: text, file: shippedPath)
        XCTAssertEqual(
            parsed.interfaces.policy.overrides,
            [InterfacePolicy.Override(pattern: "wwan*", type: .cellular, isExpensive: true, isConstrained: false, isIgnored: false)]
        )
        XCTAssertEqual(parsed.probe.url, HTTPEndpoint("http://probe.example.net/generate_204"))
        XCTAssertEqual(parsed.probe.httpsURL, HTTPEndpoint("https://probe.example.net/generate_204"))
    }
}
