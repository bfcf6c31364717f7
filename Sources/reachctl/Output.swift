import FoundationEssentials
import LinuxSystem
import ReachProtocol

/// Writes a line to stdout unbuffered, so `watch` output reaches pipes at once.
func printLine(_ text: String) {
    StandardStreams.printLine(text)
}

/// Writes a line to stderr.
func printError(_ text: String) {
    StandardStreams.printError(text)
}

/// Pretty or compact JSON of a wire value.
func json(_ value: some Encodable, pretty: Bool) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(value) else { return "{}" }
    return String(decoding: data, as: UTF8.self)
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
