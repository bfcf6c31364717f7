/// Finds the line on which each key of a TOML document is written.
///
/// TOMLKit reports positions only for syntax errors, so validation messages locate keys by
/// scanning the text: `[table]` and `[[array]]` headers set the current table (array
/// headers count their elements), `key = value` lines name keys below it, and multi-line
/// strings and arrays are skipped so their contents are never mistaken for keys. The
/// document is assumed to have parsed already; anything unrecognised is passed over.
public struct ConfigurationKeyLocator: Sendable {
    private var lines: [String: Int] = [:]

    /// Scans `text`.
    public init(text: String) {
        var scanner = Scanner()
        var number = 0
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            number += 1
            scanner.scan(Array(rawLine), line: number, into: &lines)
        }
    }

    /// The line `path` is written on or, when it has none of its own (a value inside an
    /// inline table or an array), the line of its nearest ancestor that has one.
    public func line(of path: ConfigurationKeyPath) -> Int? {
        var candidate = path
        while !candidate.components.isEmpty {
            if let line = lines[candidate.description] { return line }
            candidate = candidate.parent
        }
        return nil
    }

    /// The line of exactly `path`, with no fallback to an ancestor.
    public func exactLine(of path: ConfigurationKeyPath) -> Int? {
        lines[path.description]
    }
}

private struct Scanner {
    /// The table that `key = value` lines currently add to.
    var table = ConfigurationKeyPath()
    /// Elements seen so far per array of tables, by the array's path.
    var arrayCounts: [String: Int] = [:]
    /// Brackets and braces still open in a value that spans lines.
    var depth = 0
    /// The closing delimiter of a multi-line string still open.
    var openString: [Character]?

    mutating func scan(_ line: [Character], line number: Int, into lines: inout [String: Int]) {
        var chars = line
        if chars.last == "\r" { chars.removeLast() }
        if depth > 0 || openString != nil {
            skipValue(chars, from: 0)
            return
        }
        var index = skipSpace(chars, 0)
        guard index < chars.count, chars[index] != "#" else { return }

        if chars[index] == "[" {
            let isArray = index + 1 < chars.count && chars[index + 1] == "["
            index += isArray ? 2 : 1
            guard let keys = parseKey(chars, &index), !keys.isEmpty else { return }
            if isArray {
                let container = resolve(Array(keys.dropLast())).appending(keys[keys.count - 1])
                let count = arrayCounts[container.description, default: 0]
                arrayCounts[container.description] = count + 1
                table = container.appending(index: count)
                record(container, number, &lines)
            } else {
                table = resolve(keys)
            }
            record(table, number, &lines)
            return
        }

        guard let keys = parseKey(chars, &index), !keys.isEmpty else { return }
        index = skipSpace(chars, index)
        guard index < chars.count, chars[index] == "=" else { return }
        var path = table
        for key in keys {
            path = path.appending(key)
            record(path, number, &lines)
        }
        skipValue(chars, from: index + 1)
    }

    /// Maps header keys to a path, stepping into the latest element of every array of
    /// tables on the way (`[[a]]` then `[a.b]` means `a[last].b`).
    func resolve(_ keys: [String]) -> ConfigurationKeyPath {
        var path = ConfigurationKeyPath()
        for key in keys {
            path = path.appending(key)
            if let count = arrayCounts[path.description] { path = path.appending(index: count - 1) }
        }
        return path
    }

    func record(_ path: ConfigurationKeyPath, _ line: Int, _ lines: inout [String: Int]) {
        if lines[path.description] == nil { lines[path.description] = line }
    }

    /// Walks a value, tracking open brackets and multi-line strings; stops at a comment.
    mutating func skipValue(_ chars: [Character], from start: Int) {
        var index = start
        while index < chars.count {
            if let delimiter = openString {
                if chars[index] == "\\" && delimiter.first == "\"" {
                    index += 2
                } else if hasPrefix(chars, index, delimiter) {
                    openString = nil
                    index += 3
                    // A closing delimiter may be followed by up to two more quotes.
                    while index < chars.count && chars[index] == delimiter[0] { index += 1 }
                } else {
                    index += 1
                }
                continue
            }
            let character = chars[index]
            switch character {
            case "#":
                return
            case "\"", "'":
                let triple = [character, character, character]
                if hasPrefix(chars, index, triple) {
                    openString = triple
                    index += 3
                } else {
                    index = skipString(chars, index)
                }
            case "[", "{":
                depth += 1
                index += 1
            case "]", "}":
                depth = max(0, depth - 1)
                index += 1
            default:
                index += 1
            }
        }
    }

    /// Parses `key`, `"quoted key"`, `a.b."c"` up to the first character that cannot
    /// continue it; nil when there is no key.
    func parseKey(_ chars: [Character], _ index: inout Int) -> [String]? {
        var keys: [String] = []
        while true {
            index = skipSpace(chars, index)
            guard index < chars.count else { return nil }
            let character = chars[index]
            if character == "\"" || character == "'" {
                let end = skipString(chars, index)
                guard end <= chars.count, end - 1 > index else { return nil }
                keys.append(unquote(Array(chars[(index + 1)..<(end - 1)]), basic: character == "\""))
                index = end
            } else {
                let start = index
                while index < chars.count && Self.isBare(chars[index]) { index += 1 }
                guard index > start else { return nil }
                keys.append(String(chars[start..<index]))
            }
            index = skipSpace(chars, index)
            guard index < chars.count, chars[index] == "." else { return keys }
            index += 1
        }
    }

    /// The index just past a one-line string starting at `start` (or the line's end).
    func skipString(_ chars: [Character], _ start: Int) -> Int {
        let quote = chars[start]
        var index = start + 1
        while index < chars.count {
            if chars[index] == "\\" && quote == "\"" {
                index += 2
                continue
            }
            if chars[index] == quote { return index + 1 }
            index += 1
        }
        return chars.count
    }

    func unquote(_ body: [Character], basic: Bool) -> String {
        guard basic else { return String(body) }
        var text = ""
        var index = 0
        while index < body.count {
            if body[index] == "\\" && index + 1 < body.count {
                let escaped = body[index + 1]
                switch escaped {
                case "n": text.append("\n")
                case "t": text.append("\t")
                default: text.append(escaped)
                }
                index += 2
            } else {
                text.append(body[index])
                index += 1
            }
        }
        return text
    }

    func skipSpace(_ chars: [Character], _ start: Int) -> Int {
        var index = start
        while index < chars.count && (chars[index] == " " || chars[index] == "\t") { index += 1 }
        return index
    }

    func hasPrefix(_ chars: [Character], _ index: Int, _ prefix: [Character]) -> Bool {
        index + prefix.count <= chars.count && Array(chars[index..<(index + prefix.count)]) == prefix
    }

    static func isBare(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || character == "_" || character == "-")
    }
}
