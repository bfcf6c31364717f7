import FoundationEssentials
import LinuxSystem
import ReachabilityCore
import ReachProtocol

// Everything reachd answers may carry text from the network (portal URLs, interface names
// anyone may set in their own namespace): every string of a reply is written through
// `shown(_:)` (UntrustedText's rule: no terminal control, always one line), and JSON
// through `terminalSafe(json:)`.

/// Writes a line to stdout unbuffered, so `watch` output reaches pipes at once.
func printLine(_ text: String) {
    StandardStreams.printLine(text)
}

/// Writes a line to stderr.
func printError(_ text: String) {
    StandardStreams.printError(text)
}

/// Pretty or compact JSON of a wire value, safe for a terminal (`terminalSafe(json:)`).
func json(_ value: some Encodable, pretty: Bool) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(value) else { return "{}" }
    return terminalSafe(json: String(decoding: data, as: UTF8.self))
}

/// JSON text with every non-ASCII scalar `UntrustedText` escapes (C1 controls, bidi and
/// other format characters, U+2028, …) and DEL written as JSON escapes (`\u202e`, a
/// surrogate pair beyond the BMP). JSONEncoder escapes only C0 controls, `"` and `\`; the
/// rest would reach the terminal as they are. The JSON decodes to the same values: such
/// scalars can only stand inside strings, where any character may be escaped.
func terminalSafe(json: String) -> String {
    guard json.utf8.contains(where: { $0 >= 0x7F }) else { return json }
    var output = String.UnicodeScalarView()
    for scalar in json.unicodeScalars {
        guard scalar.value >= 0x7F, UntrustedText.needsEscape(scalar) else {
            output.append(scalar)
            continue
        }
        let units = scalar.value > 0xFFFF ? Array(String(scalar).utf16) : [UInt16(scalar.value)]
        for unit in units {
            let hex = String(unit, radix: 16)
            output.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
        }
    }
    return String(output)
}

/// A string from reachd's answer, as reachctl writes it: `UntrustedText`'s rule.
func shown(_ text: String) -> String {
    UntrustedText.escaped(text)
}

/// Text reachd sends as several lines, in a format of its own (the metrics exposition, a
/// refused configuration's reason): line breaks and `\` kept, so that the text still means
/// what it did (`reachctl metrics | promtool`), every other scalar `UntrustedText` escapes
/// written as its escape. reachd escapes label values itself; this guards the terminal.
func shownLines(_ text: String) -> String {
    var output = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
        if scalar == "\n" || scalar == "\\" || !UntrustedText.needsEscape(scalar) {
            output.append(scalar)
        } else {
            output.append(contentsOf: UntrustedText.escaped(String(scalar)).unicodeScalars)
        }
    }
    return String(output)
}

/// Pads cells into aligned columns.
func table(_ rows: [[String]]) -> String {
    guard let header = rows.first else { return "" }
    let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
    return rows.map { row in
        row.enumerated().map { index, cell in
            index == row.count - 1 ? cell : cell.padded(to: widths[index])
        }.joined(separator: "  ")
    }.joined(separator: "\n")
}

extension String {
    /// The string followed by spaces up to `width` characters (unchanged when longer).
    func padded(to width: Int) -> String {
        self + String(repeating: " ", count: max(0, width - count))
    }
}
