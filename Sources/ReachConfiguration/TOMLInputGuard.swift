// TOMLKit's bundled toml++ aborts on four malformed shapes and stops at a NUL; this lexer
// refuses them before it parses (docs/testing.md, "The TOML input guard").

/// Finds what TOMLKit's bundled toml++ cannot be given: the four malformed shapes that make
/// its parser abort (docs/testing.md, "The TOML input guard") and NUL characters.
///
/// It is a lexer, not a parser: it follows strings, comments and brackets, so it knows
/// whether a `[` starts a table header (first thing on a line, outside any array or inline
/// table) or an array, and where a value starts, and flags a shape only where toml++
/// would reach its broken path. No shape is valid TOML there, so a valid document is never
/// refused; on the way to any one, toml++ has parsed everything before it, so the lexer's view of strings,
/// comments and brackets is toml++'s view there. Input that toml++ would have refused
/// earlier for another reason may be flagged by the guard instead, which is still a
/// located error; `ReachdConfiguration(parsing:file:)` reports toml++'s own error for
/// anything before the flagged item first, so errors still come in file order.
enum TOMLInputGuard {
    /// Where the input stops being safe to parse, and why.
    package struct Problem: Equatable {
        /// Offset, in Unicode scalars, where the document item (table header or key/value
        /// line) holding the problem starts; what comes before it is safe to parse.
        var itemStart: Int
        /// One-based line, counted as toml++ counts (after `\n`).
        var line: Int
        /// One-based column in Unicode scalars, as toml++ counts (a leading byte-order mark
        /// is not counted).
        var column: Int
        /// What is wrong, in toml++'s wording where toml++ has one.
        var message: String
    }

    /// The first problem in `text`, or nil when toml++ can be given all of it.
    package static func problem(in text: String) -> Problem? {
        var scanner = Scanner(scalars: Array(text.unicodeScalars))
        return scanner.run()
    }

    private struct Scanner {
        let scalars: [Unicode.Scalar]
        var index = 0
        /// Open arrays (`[`) and inline tables (`{`) of the current key/value line.
        var open: [Unicode.Scalar] = []
        var itemStart = 0

        init(scalars: [Unicode.Scalar]) {
            self.scalars = scalars
        }

        mutating func run() -> Problem? {
            // toml++ skips a UTF-8 byte-order mark and counts columns without it.
            if scalars.first == "\u{FEFF}" { index = 1 }
            var atItemStart = true
            while index < scalars.count {
                let scalar = scalars[index]
                if scalar == "\0" {
                    return problem(at: index, "NUL characters (U+0000) are not allowed in TOML")
                }
                if atItemStart && open.isEmpty {
                    switch scalar {
                    case " ", "\t", "\n", "\r":
                        index += 1
                        continue
                    case "#":
                        skipComment()
                        continue
                    case "[":
                        itemStart = index
                        if let problem = tableHeaderProblem() { return problem }
                        skipTableHeader()
                        atItemStart = false
                        continue
                    default:
                        itemStart = index
                        atItemStart = false
                    }
                }
                switch scalar {
                case "\n":
                    if open.isEmpty { atItemStart = true }
                    index += 1
                case "#":
                    skipComment()
                case "\"", "'":
                    skipString()
                case "[":
                    open.append("[")
                    index += 1
                    if let problem = arrayValueProblem() { return problem }
                case "{":
                    open.append("{")
                    index += 1
                case "]", "}":
                    _ = open.popLast()
                    index += 1
                case ",":
                    index += 1
                    if open.last == "[", let problem = arrayValueProblem() { return problem }
                case "=":
                    // Outside a string, `=` ends a key: a value follows (parse_key_value_pair).
                    index += 1
                    var position = index
                    while position < scalars.count, scalars[position] == " " || scalars[position] == "\t" { position += 1 }
                    if let problem = valueProblem(at: position) { return problem }
                default:
                    index += 1
                }
            }
            return nil
        }

        /// Path 1: `index` is at the `[` of a table header. Mirrors `parse_table_header()`
        /// up to its call of `parse_key()`; nil wherever toml++ reports an error itself.
        func tableHeaderProblem() -> Problem? {
            var position = index + 1
            /// Skips spaces and tabs; nil where toml++ refuses other horizontal whitespace.
            func skipBlanks() -> Bool? {
                var skipped = false
                while position < scalars.count {
                    let scalar = scalars[position]
                    if scalar == " " || scalar == "\t" {
                        skipped = true
                        position += 1
                    } else if Self.isNonASCIIHorizontalWhitespace(scalar) {
                        return nil
                    } else {
                        break
                    }
                }
                return skipped
            }
            guard let hadBlanks = skipBlanks(), position < scalars.count else { return nil }
            if scalars[position] == "[" {
                // `[ [` is refused by toml++ ("brackets must be contiguous").
                if hadBlanks { return nil }
                position += 1
                guard skipBlanks() != nil, position < scalars.count else { return nil }
            }
            let scalar = scalars[position]
            // toml++ sees a NUL as the end of its input: an error of its own.
            if scalar == "]" || scalar == "\0" || Self.startsKey(scalar) { return nil }
            return problem(
                at: position,
                "Error while parsing key: expected bare key starting character or string delimiter, saw '\(Self.escaped(scalar))'"
            )
        }

        /// Path 2: `index` is just after an array's `[` or a `,` in an array. Mirrors the
        /// skipping in `parse_array()`; nil unless the next character would be handed to
        /// `parse_value()` while being a value terminator.
        func arrayValueProblem() -> Problem? {
            var position = index
            while position < scalars.count {
                switch scalars[position] {
                case " ", "\t", "\n":
                    position += 1
                case "\r":
                    // A lone CR is refused by toml++.
                    guard position + 1 < scalars.count, scalars[position + 1] == "\n" else { return nil }
                    position += 2
                case "#":
                    while position < scalars.count, scalars[position] != "\n", scalars[position] != "\0" { position += 1 }
                case "}", "\u{85}", "\u{2028}", "\u{2029}":
                    let scalar = scalars[position]
                    return problem(at: position, "Error while parsing array: expected a value or ']', saw '\(Self.escaped(scalar))'")
                default:
                    return valueProblem(at: position)
                }
            }
            return nil
        }

        /// Paths 3 and 4: a value starts at `position`. Flags what `parse_value()` would
        /// take for a date-time and then abort on. Both shapes are wider than toml++'s exact
        /// conditions (which also weigh the letters and signs in the value) but never valid
        /// TOML: a date-time needs an hour after its `T`, and no value is followed by a
        /// space and a digit.
        func valueProblem(at position: Int) -> Problem? {
            guard position < scalars.count, Self.isDigit(scalars[position]) else { return nil }
            // Path 3: `YYYY-MM-DD` then `T` or `t` then anything but a digit.
            if position + 11 < scalars.count,
               scalars[position..<(position + 10)].enumerated().allSatisfy({ $0 == 4 || $0 == 7 ? $1 == "-" : Self.isDigit($1) }) {
                let separator = scalars[position + 10], next = scalars[position + 11]
                if separator == "T" || separator == "t", !Self.isDigit(next), next != "\0" {
                    return problem(
                        at: position + 11,
                        "Error while parsing date-time: expected a 2-digit hour after '\(separator)', saw '\(Self.escaped(next))'"
                    )
                }
            }
            // Path 4: ten characters up to a space, `_` not counted, the 5th and 8th `-`; then
            // the space, a digit and a value terminator.
            var counted: [Unicode.Scalar] = [], end = position
            while end < scalars.count, !Self.isValueTerminator(scalars[end]), scalars[end] != "\0", counted.count <= 10 {
                if scalars[end] != "_" { counted.append(scalars[end]) }
                end += 1
            }
            guard counted.count == 10, counted[4] == "-", counted[7] == "-", end + 2 < scalars.count,
                  scalars[end] == " ", Self.isDigit(scalars[end + 1]), Self.isValueTerminator(scalars[end + 2]) else { return nil }
            return problem(
                at: end + 2,
                "Error while parsing date-time: expected a time after the date, saw '\(Self.escaped(scalars[end + 2]))'"
            )
        }

        /// Skips the rest of a table header line: quoted keys, then a comment, if any.
        mutating func skipTableHeader() {
            index += 1
            while index < scalars.count, scalars[index] != "\n", scalars[index] != "\0" {
                switch scalars[index] {
                case "\"", "'": skipString()
                case "#": skipComment()
                default: index += 1
                }
            }
        }

        /// Skips a comment, up to (not including) the end of its line or a NUL.
        mutating func skipComment() {
            while index < scalars.count, scalars[index] != "\n", scalars[index] != "\0" { index += 1 }
        }

        /// Skips a string of any of TOML's four kinds; `index` is at its first quote.
        ///
        /// A multi-line string ends at three quotes, and takes up to two more right before
        /// them as content (`"""a"""""` is `a""`), as toml++ reads it. A single-line string
        /// ends at its quote or, unterminated, at the end of the line. Stops at a NUL.
        mutating func skipString() {
            let quote = scalars[index]
            let escapes = quote == "\""
            let multiLine = index + 2 < scalars.count && scalars[index + 1] == quote && scalars[index + 2] == quote
            index += multiLine ? 3 : 1
            while index < scalars.count, scalars[index] != "\0" {
                let scalar = scalars[index]
                if !multiLine && scalar == "\n" { return }
                if escapes && scalar == "\\" {
                    index += 1
                    if index < scalars.count, scalars[index] != "\0", multiLine || scalars[index] != "\n" { index += 1 }
                    continue
                }
                guard scalar == quote else {
                    index += 1
                    continue
                }
                guard multiLine else {
                    index += 1
                    return
                }
                var run = 0
                while run < 5, index < scalars.count, scalars[index] == quote {
                    run += 1
                    index += 1
                }
                if run >= 3 { return }
            }
        }

        func problem(at position: Int, _ message: String) -> Problem {
            let start = scalars.first == "\u{FEFF}" ? 1 : 0
            var line = 1, lineStart = start
            for offset in start..<position where scalars[offset] == "\n" {
                line += 1
                lineStart = offset + 1
            }
            return Problem(itemStart: itemStart, line: line, column: position - lineStart + 1, message: message)
        }

        /// A bare-key character (`A-Za-z0-9_-`) or a quote: what `parse_key()` accepts first.
        static func startsKey(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar {
            case "A"..."Z", "a"..."z", "0"..."9", "_", "-", "\"", "'": true
            default: false
            }
        }

        static func isDigit(_ scalar: Unicode.Scalar) -> Bool {
            ("0"..."9").contains(scalar)
        }

        /// toml++'s `is_value_terminator`: whitespace (its Unicode set), `]`, `}`, `,`, `#`.
        static func isValueTerminator(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar {
            case "\t", " ", "\n", "\u{0B}", "\u{0C}", "\r", "\u{85}", "\u{2028}", "\u{2029}", "]", "}", ",", "#": true
            default: isNonASCIIHorizontalWhitespace(scalar)
            }
        }

        /// toml++'s `is_non_ascii_horizontal_whitespace`, which `consume_leading_whitespace`
        /// refuses with an error of its own.
        static func isNonASCIIHorizontalWhitespace(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.value {
            case 0xA0, 0x1680, 0x180E, 0x2000...0x200B, 0x202F, 0x205F...0x2060, 0x3000, 0xFEFF: true
            default: false
            }
        }

        /// A character as toml++ quotes it in messages: control characters and line
        /// separators escaped.
        static func escaped(_ scalar: Unicode.Scalar) -> String {
            switch scalar {
            case "\n": return "\\n"
            case "\r": return "\\r"
            case "\t": return "\\t"
            default:
                let value = scalar.value
                guard value < 0x20 || value == 0x7F || value == 0x85 || value == 0x2028 || value == 0x2029 else {
                    return String(scalar)
                }
                let hex = String(value, radix: 16, uppercase: true)
                return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            }
        }
    }
}
