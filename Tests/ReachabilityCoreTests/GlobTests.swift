import ReachabilityCore
import XCTest

final class GlobTests: XCTestCase {
    func testMatchesWholeName() {
        let cases: [(name: String, pattern: String, text: String, matches: Bool)] = [
            ("literal equal", "eth0", "eth0", true),
            ("literal is not a prefix match", "eth", "eth0", false),
            ("literal is not a suffix match", "eth0", "xeth0", false),
            ("star alone", "*", "anything", true),
            ("star matches empty", "*", "", true),
            ("empty pattern, empty name", "", "", true),
            ("empty pattern, some name", "", "eth0", false),
            ("trailing star", "docker*", "docker0", true),
            ("trailing star, empty rest", "docker*", "docker", true),
            ("trailing star, other prefix", "docker*", "dock0", false),
            ("leading star", "*0", "wlan0", true),
            ("leading star, wrong end", "*0", "wlan1", false),
            ("question mark one char", "eth?", "eth1", true),
            ("question mark needs a char", "eth?", "eth", false),
            ("question mark only one char", "eth?", "eth10", false),
            ("star in the middle", "br-*-x", "br-abc-x", true),
            ("star in the middle needs the tail", "br-*-x", "br-abc-y", false),
            ("backtracking", "a*b*c", "aXbYbZc", true),
            ("backtracking fails", "a*b*c", "aXbYbZ", false),
            ("consecutive stars", "**0", "eth0", true),
            ("dot is literal", "flannel.*", "flannel.1", true),
            ("dot is literal, not any char", "flannel.*", "flannelX1", false),
            ("case sensitive", "ETH0", "eth0", false),
        ]
        for c in cases {
            XCTAssertEqual(Glob.matches(c.pattern, c.text), c.matches, "\(c.name): \(c.pattern) vs \(c.text)")
        }
    }

    /// Beyond ASCII, a character is Swift's `Character`: `?` takes one whole grapheme
    /// cluster, however many bytes, and canonically equivalent spellings match.
    func testCharactersBeyondASCII() {
        let cases: [(name: String, pattern: String, text: String, matches: Bool)] = [
            ("question mark takes a two-byte letter", "?", "\u{E9}", true),
            ("question mark takes a letter and its combining mark", "?", "e\u{301}", true),
            ("a letter and its mark are one character", "??", "e\u{301}", false),
            ("a base letter does not match it with a mark", "e*", "e\u{301}", false),
            ("question mark takes a flag (two scalars)", "?", "\u{1F1EB}\u{1F1F7}", true),
            ("question mark takes a ZWJ family", "?", "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}", true),
            ("question mark takes a four-byte emoji", "wlan?", "wlan\u{1F600}", true),
            ("one question mark per CJK character", "??", "\u{65E5}\u{672C}", true),
            ("too few question marks", "?", "\u{65E5}\u{672C}", false),
            ("star takes non-ASCII", "*", "\u{65E5}\u{672C}", true),
            ("precomposed pattern, decomposed name", "caf\u{E9}", "cafe\u{301}", true),
            ("decomposed pattern, precomposed name", "cafe\u{301}*", "caf\u{E9}0", true),
            ("star then non-ASCII literal", "*\u{E9}", "cafe\u{301}", true),
            ("non-ASCII literal is not its base letter", "eth\u{E9}", "ethe", false),
            ("ASCII question mark, non-ASCII name", "eth?", "eth\u{E9}", true),
            ("CR LF is one character", "?", "\r\n", true),
            ("CR LF is not two", "??", "\r\n", false),
            ("CR alone does not start CR LF", "\r*", "\r\n", false),
            ("lone CR is one character", "?", "\r", true),
            ("lone LF is one character", "eth?", "eth\n", true),
        ]
        for c in cases {
            XCTAssertEqual(Glob.matches(c.pattern, c.text), c.matches, "\(c.name): \(c.pattern.debugDescription) vs \(c.text.debugDescription)")
        }
    }

    /// Every short pattern against every short name, ASCII (the byte path) and not (the
    /// character path), agrees with a plain recursive matcher over characters.
    func testAgreesWithARecursiveMatcher() {
        func reference(_ pattern: Substring, _ name: Substring) -> Bool {
            guard let first = pattern.first else { return name.isEmpty }
            if first == "*" {
                return reference(pattern.dropFirst(), name) || (!name.isEmpty && reference(pattern, name.dropFirst()))
            }
            guard let head = name.first, first == "?" || first == head else { return false }
            return reference(pattern.dropFirst(), name.dropFirst())
        }
        func strings(over alphabet: [String], upTo length: Int) -> [String] {
            var all = [""], last = [""]
            for _ in 0..<length {
                last = last.flatMap { prefix in alphabet.map { prefix + $0 } }
                all += last
            }
            return all
        }
        for letters in [["a", "b"], ["a", "\u{E9}", "e\u{301}"]] {
            let names = strings(over: letters, upTo: 4)
            for pattern in strings(over: letters + ["*", "?"], upTo: 4) {
                for name in names {
                    let expected = reference(pattern[...], name[...])
                    if Glob.matches(pattern, name) != expected {
                        XCTFail("\(pattern.debugDescription) vs \(name.debugDescription): expected \(expected)")
                    }
                }
            }
        }
    }
}
