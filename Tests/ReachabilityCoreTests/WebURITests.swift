import ReachabilityCore
import XCTest

/// The one URI rule for everything the network (or the configuration) hands reachd: issue
/// 23's findings first, then the edges of each rule.
final class WebURITests: XCTestCase {
    private typealias Problem = WebURI.Problem
    private static let web: Set<WebURI.Scheme> = [.http, .https]
    private static let secure: Set<WebURI.Scheme> = [.https]

    func testRefusals() {
        let long = "https://portal.test/" + String(repeating: "a", count: WebURI.maximumLength - 19)
        let cases: [(String, String, Set<WebURI.Scheme>, Problem)] = [
            // The port that crashed SocketAddress.
            ("port 99999", "https://10.77.0.1:99999/captive", Self.secure, .portOutOfRange("99999")),
            ("port 65536", "http://x:65536/", Self.web, .portOutOfRange("65536")),
            ("port 0", "http://x:0/", Self.web, .portOutOfRange("0")),
            ("port 00000", "http://x:00000/", Self.web, .portOutOfRange("00000")),
            ("huge port", "http://x:99999999999999999999999999/", Self.web, .portOutOfRange("99999999999999999999")),
            ("negative port", "http://x:-1/", Self.web, .invalidPort),
            ("port with a letter", "http://x:8o/", Self.web, .invalidPort),
            // Controls, format and bidi characters, refused where they are.
            ("ESC", "https://portal.test/\u{1B}]0;owned\u{07}", Self.secure, .forbiddenCharacter("\u{1B}", offset: 20)),
            ("BEL", "https://portal.test/\u{07}", Self.secure, .forbiddenCharacter("\u{07}", offset: 20)),
            ("newline and forged sd_notify", "https://portal.test/\nWATCHDOG=trigger\nSTATUS=forged", Self.secure, .forbiddenCharacter("\n", offset: 20)),
            ("carriage return", "https://portal.test/\r", Self.secure, .forbiddenCharacter("\r", offset: 20)),
            ("NUL", "https://portal.test/\u{0}", Self.secure, .forbiddenCharacter("\u{0}", offset: 20)),
            ("DEL", "https://portal.test/\u{7F}", Self.secure, .forbiddenCharacter("\u{7F}", offset: 20)),
            ("C1 CSI", "http://portal.test/\u{9B}31m", Self.web, .forbiddenCharacter("\u{9B}", offset: 19)),
            ("U+202E in the path", "http://portal.test/\u{202E}gpj.exe", Self.web, .forbiddenCharacter("\u{202E}", offset: 19)),
            ("U+202E in the host", "https://\u{202E}tset.latrop/", Self.secure, .forbiddenCharacter("\u{202E}", offset: 8)),
            ("zero-width space", "https://por\u{200B}tal.test/", Self.secure, .forbiddenCharacter("\u{200B}", offset: 11)),
            ("non-ASCII letter", "https://pörtal.test/", Self.secure, .forbiddenCharacter("ö", offset: 9)),
            ("space", "https://portal.test/a b", Self.secure, .forbiddenCharacter(" ", offset: 21)),
            ("double quote", "https://portal.test/\"", Self.secure, .forbiddenCharacter("\"", offset: 20)),
            ("angle bracket", "https://portal.test/<script>", Self.secure, .forbiddenCharacter("<", offset: 20)),
            ("backslash", "https://portal.test\\@evil.test/", Self.secure, .forbiddenCharacter("\\", offset: 19)),
            ("pipe", "https://portal.test/?a|b", Self.secure, .forbiddenCharacter("|", offset: 22)),
            ("bracket in the path", "https://portal.test/[x]", Self.secure, .forbiddenCharacter("[", offset: 20)),
            ("second #", "https://portal.test/#a#b", Self.secure, .forbiddenCharacter("#", offset: 22)),
            ("bad percent escape", "https://portal.test/%zz", Self.secure, .malformedPercentEscape(offset: 20)),
            ("cut percent escape", "https://portal.test/%4", Self.secure, .malformedPercentEscape(offset: 20)),
            // Schemes: the caller's set decides.
            ("javascript:", "javascript:alert(1)", Self.web, .schemeNotAllowed("javascript")),
            ("file:", "file:///etc/shadow", Self.web, .schemeNotAllowed("file")),
            ("http where https is required", "http://portal.test/", Self.secure, .schemeNotAllowed("http")),
            ("data:", "data:text/html,hi", Self.secure, .schemeNotAllowed("data")),
            ("unrestricted URN is no URL", "urn:ietf:params:capport:unrestricted", Self.secure, .schemeNotAllowed("urn")),
            ("no scheme", "portal.test/login", Self.web, .noScheme),
            ("relative reference", "/login", Self.web, .noScheme),
            ("scheme starting with a digit", "1http://x/", Self.web, .noScheme),
            // Hosts and user information.
            ("no //", "https:portal.test", Self.secure, .noHost),
            ("empty host", "https:///etc/shadow", Self.secure, .noHost),
            ("only a port", "https://:443/", Self.secure, .noHost),
            ("scheme alone", "https:", Self.secure, .noHost),
            ("user info", "https://user@portal.test/", Self.secure, .userInfo),
            ("password", "https://user:secret@portal.test/", Self.secure, .userInfo),
            ("percent in host", "https://portal%2etest/", Self.secure, .invalidHost),
            ("sub-delims in host", "https://por$tal.test/", Self.secure, .invalidHost),
            ("digits that are no IPv4 address", "http://999.1.1.1/", Self.web, .invalidHost),
            ("IPv6 without brackets", "http://fe80::1/", Self.web, .invalidPort),
            ("bracketed garbage", "http://[nope]/", Self.web, .invalidHost),
            ("bracketed IPv4", "http://[10.0.0.1]/", Self.web, .invalidHost),
            ("unclosed bracket", "http://[::1/", Self.web, .invalidHost),
            ("junk after bracket", "http://[::1]x/", Self.web, .forbiddenCharacter("x", offset: 12)),
            // Length.
            ("empty", "", Self.web, .empty),
            ("too long", long, Self.secure, .tooLong(WebURI.maximumLength + 1)),
        ]
        for (name, text, schemes, problem) in cases {
            switch WebURI.validate(text, schemes: schemes) {
            case let .success(uri): XCTFail("\(name): accepted as \(uri.host) \(uri.port) \(uri.target)")
            case let .failure(refusal): XCTAssertEqual(refusal, problem, name)
            }
        }
    }

    func testAcceptedURIs() {
        let longest = "https://portal.test/" + String(repeating: "a", count: WebURI.maximumLength - 20)
        let cases: [(String, Set<WebURI.Scheme>, WebURI.Scheme, String, Int, String)] = [
            ("https://portal.test/captive", Self.secure, .https, "portal.test", 443, "/captive"),
            ("http://portal.test", Self.web, .http, "portal.test", 80, "/"),
            ("HTTPS://Portal.Test:8443/a?b=c#frag", Self.secure, .https, "Portal.Test", 8443, "/a?b=c"),
            ("https://10.77.0.1:65535/captive", Self.secure, .https, "10.77.0.1", 65535, "/captive"),
            ("https://10.77.0.1:1/", Self.secure, .https, "10.77.0.1", 1, "/"),
            ("http://x:080/", Self.web, .http, "x", 80, "/"),
            ("http://x:/", Self.web, .http, "x", 80, "/"),
            ("http://[fd00::1]:8080/p", Self.web, .http, "fd00::1", 8080, "/p"),
            ("http://[::1]", Self.web, .http, "::1", 80, "/"),
            ("https://portal.test?x=1", Self.secure, .https, "portal.test", 443, "/?x=1"),
            ("https://portal.test#top", Self.secure, .https, "portal.test", 443, "/"),
            ("https://_svc.portal-1.test/%41~!$&'()*+,;=:@/?/?", Self.secure, .https, "_svc.portal-1.test", 443, "/%41~!$&'()*+,;=:@/?/?"),
            (longest, Self.secure, .https, "portal.test", 443, String(longest.dropFirst(19))),
        ]
        for (text, schemes, scheme, host, port, target) in cases {
            switch WebURI.validate(text, schemes: schemes) {
            case let .success(uri):
                XCTAssertEqual(uri.scheme, scheme, text)
                XCTAssertEqual(uri.host, host, text)
                XCTAssertEqual(uri.port, port, text)
                XCTAssertEqual(uri.target, target, text)
                XCTAssertEqual(uri.text, text, text)
            case let .failure(problem):
                XCTFail("\(text): \(problem)")
            }
        }
    }

    /// A refusal's text is safe to log as it is: it never echoes the URI's characters.
    func testProblemsArePrintable() {
        let problems: [Problem] = [
            .forbiddenCharacter("\u{1B}", offset: 3), .forbiddenCharacter("\u{202E}", offset: 9),
            .forbiddenCharacter("\n", offset: 0), .forbiddenCharacter("|", offset: 1), .tooLong(99999),
            .schemeNotAllowed("javascript"), .portOutOfRange("99999"),
        ]
        let texts = problems.map(\.description)
        XCTAssertEqual(texts[0], "character U+001B at byte 3 is not allowed in a URI")
        XCTAssertEqual(texts[1], "character U+202E at byte 9 is not allowed in a URI")
        XCTAssertEqual(texts[3], "character '|' at byte 1 is not allowed in a URI")
        for text in texts {
            XCTAssertTrue(text.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F || $0 == "–" }, text)
        }
    }
}
