/// The one rule for writing text reachd did not write itself — captive-portal URLs, API
/// URIs, probe answers, certificate names, interface names (anyone may name one in their
/// own network namespace) — to a terminal, the log, the journal, `STATUS=` or a metric label.
///
/// The text stays readable, and every scalar that could control a terminal, end a line,
/// reorder or hide text is written visibly instead:
///
/// - printable ASCII (U+0020–U+007E) is kept, except `\`, written `\\` so that an escape
///   in the output always came from this rule;
/// - TAB, LF and CR are written `\t`, `\n`, `\r`; every other C0 control and DEL as `\xHH`
///   (`\x1b`, `\x07`, `\x00`, `\x7f`): the output is always one line;
/// - a non-ASCII scalar is written `\u{HHHH}` (upper-case hex, as in a Swift literal) when it
///   is a control (C1, U+0080–U+009F), a format character (general category Cf: bidi
///   embeddings and overrides U+202A–U+202E, isolates U+2066–U+2069, marks U+200E/U+200F,
///   U+061C, zero-width U+200B–U+200D, U+2060, U+FEFF, tags, …), a line or paragraph
///   separator (U+2028/U+2029), a space other than U+0020, private-use, unassigned, a
///   noncharacter, default-ignorable (a Hangul filler) or a bidi control; and a combining
///   mark at the very start (it would join whatever precedes the text; later marks, such as
///   an emoji's variation selector, only change the character before them);
/// - everything else (letters, digits, punctuation, symbols, emoji) is kept.
///
/// Invalid UTF-8 never reaches this rule: Swift strings hold scalars, and decoding already
/// replaced broken sequences with U+FFFD, which is shown as it is.
///
/// A `limit` bounds the result for one-line contexts: a longer result is cut, never inside
/// an escape, and ends in `…` (the result then has at most `limit` scalars, `…` included).
public enum UntrustedText {
    /// `text` under the rule, optionally cut to `limit` scalars.
    public static func escaped(_ text: some StringProtocol, limit: Int? = nil) -> String {
        // Fast path: plain ASCII text (nearly every log line) is returned as it is.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }) {
            guard let limit, text.utf8.count > limit else { return String(text) }
        }
        if let whole = render(text, budget: limit, cut: false) { return whole }
        // Too long: whole pieces (never half an escape) while they and the ellipsis fit.
        guard let limit, limit > 0 else { return "" }
        return (render(text, budget: limit - 1, cut: true) ?? "") + "…"
    }

    /// `text` under the rule in at most `budget` scalars: nil when it needs more, unless
    /// `cut`, which keeps the pieces that fit.
    private static func render(_ text: some StringProtocol, budget: Int?, cut: Bool) -> String? {
        var output = String.UnicodeScalarView()
        var count = 0
        for (offset, scalar) in text.unicodeScalars.enumerated() {
            let piece = escape(scalar, atStart: offset == 0)
            let length = piece.map(\.unicodeScalars.count) ?? 1
            if let budget, count + length > budget {
                if cut { break } else { return nil }
            }
            count += length
            if let piece { output.append(contentsOf: piece.unicodeScalars) } else { output.append(scalar) }
        }
        return String(output)
    }

    /// Whether `scalar` is written as an escape (anywhere but at the start, where a
    /// combining mark is escaped too).
    package static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        escape(scalar, atStart: false) != nil
    }

    /// The escape for `scalar`, or nil when it is written as it is.
    private static func escape(_ scalar: Unicode.Scalar, atStart: Bool) -> String? {
        let value = scalar.value
        switch value {
        case 0x5C: return "\\\\"
        case 0x09: return "\\t"
        case 0x0A: return "\\n"
        case 0x0D: return "\\r"
        case 0x20..<0x7F: return nil
        case 0..<0x20, 0x7F: return "\\x" + hex(value, digits: 2, uppercase: false)
        default: break
        }
        let properties = scalar.properties
        let hidden: Bool
        switch properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .spaceSeparator, .privateUse, .surrogate, .unassigned:
            hidden = true
        case .nonspacingMark, .spacingMark, .enclosingMark:
            hidden = atStart
        default:
            hidden = properties.isDefaultIgnorableCodePoint || properties.isBidiControl || properties.isNoncharacterCodePoint
        }
        return hidden ? "\\u{" + hex(value, digits: 1, uppercase: true) + "}" : nil
    }

    private static func hex(_ value: UInt32, digits: Int, uppercase: Bool) -> String {
        let text = String(value, radix: 16, uppercase: uppercase)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}

extension StringProtocol {
    /// The text under `UntrustedText`'s rule: controls, format and bidi characters and `\`
    /// escaped visibly, always one line.
    package var escapedForDisplay: String { UntrustedText.escaped(self) }
}
