import ReachabilityCore
import XCTest

/// The rule for untrusted text, scalar class by scalar class, and its length bound.
final class UntrustedTextTests: XCTestCase {
    func testEscapes() {
        let cases: [(name: String, input: String, expected: String)] = [
            ("plain ASCII is kept", "https://portal.test/login?a=1&b=\"x\"", "https://portal.test/login?a=1&b=\"x\""),
            ("empty", "", ""),
            ("backslash doubled", #"C:\path\x1b"#, #"C:\\path\\x1b"#),
            ("OSC title sequence", "a\u{1b}]0;pwned\u{7}b", #"a\x1b]0;pwned\x07b"#),
            ("CSI", "\u{1b}[2J", #"\x1b[2J"#),
            ("NUL", "a\u{0}b", #"a\x00b"#),
            ("DEL", "a\u{7f}b", #"a\x7fb"#),
            ("TAB, CR, LF", "a\tb\rc\nd", #"a\tb\rc\nd"#),
            ("forged sd_notify lines", "x\n WATCHDOG=trigger\nSTATUS=forged", #"x\n WATCHDOG=trigger\nSTATUS=forged"#),
            ("C1 CSI", "a\u{9b}31mb", #"a\u{9B}31mb"#),
            ("C1 NEL", "a\u{85}b", #"a\u{85}b"#),
            ("right-to-left override", "evil\u{202E}gpj.exe", #"evil\u{202E}gpj.exe"#),
            ("bidi embeddings and isolates", "\u{202A}\u{202B}\u{202C}\u{202D}\u{2066}\u{2067}\u{2068}\u{2069}",
             #"\u{202A}\u{202B}\u{202C}\u{202D}\u{2066}\u{2067}\u{2068}\u{2069}"#),
            ("bidi marks", "a\u{200E}\u{200F}\u{61C}b", #"a\u{200E}\u{200F}\u{61C}b"#),
            ("zero-width", "a\u{200B}\u{200C}\u{200D}\u{2060}\u{FEFF}b", #"a\u{200B}\u{200C}\u{200D}\u{2060}\u{FEFF}b"#),
            ("line and paragraph separators", "a\u{2028}b\u{2029}c", #"a\u{2028}b\u{2029}c"#),
            ("non-ASCII spaces", "a\u{A0}b\u{3000}c", #"a\u{A0}b\u{3000}c"#),
            ("soft hyphen (Cf)", "a\u{AD}b", #"a\u{AD}b"#),
            ("tag characters (Cf, beyond the BMP)", "a\u{E0001}b", #"a\u{E0001}b"#),
            ("private use", "a\u{E000}b", #"a\u{E000}b"#),
            ("noncharacters", "a" + String(Unicode.Scalar(0xFFFE)!) + String(Unicode.Scalar(0xFDD0)!) + "b", #"a\u{FFFE}\u{FDD0}b"#),
            ("unassigned", "a\u{378}b", #"a\u{378}b"#),
            ("Hangul filler (default-ignorable letter)", "a\u{3164}b", #"a\u{3164}b"#),
            ("variation selector kept (a mark: emoji presentation)", "\u{2764}\u{FE0F}", "\u{2764}\u{FE0F}"),
            ("letters, accents, CJK, emoji kept", "café Zürich 東京 🛜", "café Zürich 東京 🛜"),
            ("combining mark kept after a letter", "e\u{301}", "e\u{301}"),
            ("combining mark escaped at the start", "\u{301}e", #"\u{301}e"#),
            ("replacement character kept", "a\u{FFFD}b", "a\u{FFFD}b"),
        ]
        for test in cases {
            XCTAssertEqual(UntrustedText.escaped(test.input), test.expected, test.name)
            XCTAssertEqual(test.input.escapedForDisplay, test.expected, test.name)
        }
    }

    /// Whatever goes in, nothing a terminal or a line-based reader acts on comes out.
    func testOutputIsInert() {
        var everything = String.UnicodeScalarView()
        for value in UInt32(0)...0x3000 { if let scalar = Unicode.Scalar(value) { everything.append(scalar) } }
        for value in [0xFEFF, 0xE0001, 0xE007F, 0xF0000, 0x10FFFF] as [UInt32] { everything.append(Unicode.Scalar(value)!) }
        let output = UntrustedText.escaped(String(everything))
        for scalar in output.unicodeScalars {
            XCTAssertFalse(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value), "control U+\(String(scalar.value, radix: 16)) came out")
            XCTAssertFalse(scalar.properties.isBidiControl, "bidi control U+\(String(scalar.value, radix: 16)) came out")
            XCTAssertNotEqual(scalar.properties.generalCategory, .format, "format U+\(String(scalar.value, radix: 16)) came out")
            XCTAssertFalse([.lineSeparator, .paragraphSeparator].contains(scalar.properties.generalCategory))
        }
    }

    func testLengthBound() {
        let cases: [(name: String, input: String, limit: Int, expected: String)] = [
            ("short enough", "abcdef", 6, "abcdef"),
            ("cut with an ellipsis", "abcdefgh", 6, "abcde…"),
            ("an escape is never cut", "abcd\u{1b}xyz", 8, "abcd…"),
            ("escape fits", "abcd\u{1b}xyz", 12, #"abcd\x1bxyz"#),
            ("escape and ellipsis fit", "abcd\u{1b}xyz", 10, #"abcd\x1bx…"#),
            ("non-ASCII counted in scalars", "ééééé", 4, "ééé…"),
            ("limit 1", "abc", 1, "…"),
            ("limit 0", "abc", 0, ""),
        ]
        for test in cases {
            XCTAssertEqual(UntrustedText.escaped(test.input, limit: test.limit), test.expected, test.name)
            XCTAssertLessThanOrEqual(UntrustedText.escaped(test.input, limit: test.limit).unicodeScalars.count, test.limit, test.name)
        }
    }
}
