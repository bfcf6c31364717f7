import LinuxSystem
import SystemPackage

/// Reads the configuration file from disk.
package enum ConfigurationLoader {
    /// Where the configuration came from.
    package enum Source: Sendable, Equatable {
        /// The file at this path.
        case file(String)
        /// No file: the built-in defaults.
        case defaults
    }

    /// Loads `explicitPath` (from `--config`: it must exist), or else `defaultPath`,
    /// whose absence means the built-in defaults.
    package static func load(
        explicitPath: String?, defaultPath: String = ReachdConfiguration.defaultPath
    ) throws(ConfigurationError) -> (configuration: ReachdConfiguration, source: Source) {
        let path = explicitPath ?? defaultPath
        let text: String
        do {
            text = try read(path)
        } catch .notFound where explicitPath == nil {
            return (ReachdConfiguration(), .defaults)
        }
        return (try ReachdConfiguration(parsing: text, file: path), .file(path))
    }

    /// The file's text; `notFound` only for ENOENT, `unreadable` for anything else.
    package static func read(_ path: String) throws(ConfigurationError) -> String {
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.contents(of: path, limit: 1 << 20)
        } catch .noSuchFileOrDirectory {
            throw .notFound(path: path)
        } catch .isDirectory, .invalidArgument {
            throw .unreadable(path: path, reason: "not a regular file")
        } catch .fileTooLarge {
            throw .unreadable(path: path, reason: "larger than 1 MiB")
        } catch {
            throw .unreadable(path: path, reason: error.description)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .unreadable(path: path, reason: "not UTF-8 text")
        }
        return text
    }
}

/// Why a configuration could not be used.
package enum ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file named with `--config` does not exist.
    case notFound(path: String)
    /// The file exists but cannot be read (permissions, not a regular file, not UTF-8).
    case unreadable(path: String, reason: String)
    /// The file was read but is not a valid configuration; every problem found is listed.
    case invalid([ConfigurationDiagnostic])

    /// One problem per line.
    package var description: String {
        switch self {
        case let .notFound(path): "\(path): no such configuration file"
        case let .unreadable(path, reason): "\(path): cannot read: \(reason)"
        case let .invalid(diagnostics): diagnostics.map(\.description).joined(separator: "\n")
        }
    }

    /// The problems on one line, for `STATUS=` and single-line logs.
    package var summary: String {
        guard case let .invalid(diagnostics) = self else { return description }
        return diagnostics.map(\.description).joined(separator: "; ")
    }
}

/// One problem found in a configuration file, located as precisely as the file allows.
package struct ConfigurationDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// The file the problem is in.
    package var file: String
    /// One-based line, when known.
    package var line: Int?
    /// One-based column, when known (syntax errors only).
    package var column: Int?
    /// The key the problem is about, as TOML writes it (`interfaces.override[1].type`), if any.
    package var key: String?
    /// What is wrong, without file, line or key.
    package var message: String

    /// Creates a diagnostic.
    package init(file: String, line: Int? = nil, column: Int? = nil, key: String? = nil, message: String) {
        (self.file, self.line, self.column, self.key, self.message) = (file, line, column, key, message)
    }

    /// `FILE:LINE[:COLUMN]: [KEY: ]MESSAGE`, the form compilers use so editors can jump to it.
    package var description: String {
        let position = line.map { ":\($0)" + (column.map { ":\($0)" } ?? "") } ?? ""
        return "\(file)\(position): " + (key.map { "\($0): " } ?? "") + message
    }
}

extension ReachdConfiguration {
    /// Parses and checks `text`, read from `file` (used only in messages). Throws every
    /// problem found, in file order, e.g. `/etc/reachd/reachd.toml:7: interfaces.override[1].type:
    /// unknown interface type "wlan" (…)`; array positions count from zero.
    ///
    /// Text that would crash TOMLKit's parser never reaches it (`TOMLInputGuard`): it is
    /// refused with a located syntax error like any other.
    package init(parsing text: String, file: String) throws(ConfigurationError) {
        if let problem = TOMLInputGuard.problem(in: text) {
            // What comes before the item holding the problem is safe to parse: an error
            // toml++ finds there comes first in the file, so it is the one reported.
            let before = String(String.UnicodeScalarView(text.unicodeScalars.prefix(problem.itemStart)))
            if case .failure(let error) = Self.parseTable(before, file: file) { throw error }
            throw .invalid([ConfigurationDiagnostic(file: file, line: problem.line, column: problem.column, message: problem.message)])
        }
        let table = try Self.parseTable(text, file: file).get()
        do {
            self = try TOMLDocumentDecoder.decode(ReachdConfiguration.self, from: table)
        } catch {
            let lines = Self.keyLines(text)
            let errors = (error as? ConfigurationProblems)?.errors ?? [error]
            throw .invalid(errors.map { Self.diagnostic($0, file: file, table: table, lines: lines) }.sorted {
                ($0.line ?? 0, $0.key ?? "") < ($1.line ?? 0, $1.key ?? "")
            })
        }
    }

    /// toml++'s reading of `text`, its syntax error located.
    static func parseTable(_ text: String, file: String) -> Result<TOMLNode, ConfigurationError> {
        TOMLNode.parse(text).mapError { error in
            .invalid([ConfigurationDiagnostic(file: file, line: error.line, column: error.column, message: error.description)])
        }
    }

    /// A decoding error as users see it: the key's path, its line, and what is wrong.
    static func diagnostic(
        _ error: any Error, file: String, table: TOMLNode, lines: [String: Int]
    ) -> ConfigurationDiagnostic {
        var steps: [String] = [], message = "\(error)", showsKey = true
        switch error {
        case let error as UnknownKey:
            (steps, showsKey) = (error.steps, false)
            message = "unknown key \"\(steps.joined())\"" + (error.suggestion.map { " (did you mean \"\($0)\"?)" } ?? "")
        case let DecodingError.typeMismatch(type, context):
            steps = Self.steps(context.codingPath)
            // A table or an array of tables that is something else names no `Setting` type.
            var expected = (type as? any Setting.Type)?.expected ?? "a table"
            if expected.hasSuffix("of tables") { expected += " ([[\(steps.joined())]])" }
            message = "expected \(expected), found \(typeName(at: context.codingPath, in: table))"
        case let DecodingError.dataCorrupted(context), let DecodingError.keyNotFound(_, context):
            (steps, message) = (Self.steps(context.codingPath), context.debugDescription)
        default:
            break
        }
        let line = (0...steps.count).reversed().lazy.compactMap { lines[steps.prefix($0).joined()] }.first
        let key = showsKey && !steps.isEmpty ? steps.joined() : nil
        return ConfigurationDiagnostic(file: file, line: line, key: key, message: message)
    }

    /// The TOML type of the value at `codingPath`, named as messages name it.
    static func typeName(at codingPath: [any CodingKey], in table: TOMLNode) -> String {
        let value = codingPath.reduce(table as TOMLNode?) { value, key in
            guard let index = key.intValue else { return value?[key.stringValue] }
            guard case let .array(elements)? = value, elements.indices.contains(index) else { return nil }
            return elements[index]
        }
        return value?.typeName ?? "nothing"
    }

    /// `codingPath` as TOML writes it, a piece per step (`interfaces`, `.override`, `[1]`,
    /// `.type`), so that joined pieces and their prefixes name a key and its ancestors.
    static func steps(_ codingPath: [any CodingKey]) -> [String] {
        codingPath.enumerated().map { position, key in
            if let index = key.intValue { return "[\(index)]" }
            let escaped = key.stringValue.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"")
            let name = isBare(key.stringValue) ? key.stringValue : "\"\(escaped)\""
            return position == 0 ? name : "." + name
        }
    }

    private static func isBare(_ key: some StringProtocol) -> Bool {
        !key.isEmpty && key.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }

    /// The line of each table header and `key =` line, by the path `steps` gives it; the
    /// first occurrence wins.
    ///
    /// A small scan, not a TOML parser: it counts `[[arrays]]` of tables and knows bare keys
    /// only, so a quoted key is not recorded, nor anything under a header that has one; a
    /// `[a.b]` header after `[[a]]` is taken for `a.b`, not `a[n].b`. Lines inside multi-line
    /// strings and arrays are scanned like any other, so one reading `key = …` is taken for a
    /// key. Values in inline tables and arrays have no line of their own: `diagnostic` uses
    /// the nearest ancestor's.
    static func keyLines(_ text: String) -> [String: Int] {
        var lines: [String: Int] = [:], arrayCounts: [String: Int] = [:], table: String? = ""
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = line.drop { $0 == " " || $0 == "\t" }, isHeader = line.hasPrefix("["), isArray = line.hasPrefix("[[")
            let keys = bareKeys(isHeader ? line.dropFirst(isArray ? 2 : 1).prefix { $0 != "]" } : line.prefix { $0 != "=" })
            if isHeader { table = nil }
            guard var path = isHeader ? "" : table, let keys, isHeader || line.contains("=") else { continue }
            for key in keys {
                path += (path.isEmpty ? "" : ".") + key
                if lines[path] == nil { lines[path] = index + 1 }
            }
            if isArray {
                let count = arrayCounts[path, default: 0]
                arrayCounts[path] = count + 1
                path += "[\(count)]"
                lines[path] = index + 1
            }
            if isHeader { table = path }
        }
        return lines
    }

    /// `a . b` → ["a", "b"]; nil unless every part is a bare key.
    private static func bareKeys(_ text: Substring) -> [String]? {
        let keys = text.split(separator: ".", omittingEmptySubsequences: false).map { part in
            String(part.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
        }
        return keys.allSatisfy(isBare) ? keys : nil
    }
}

// MARK: - Decoding helpers

/// A value read from one TOML key; `expected` names the TOML type it takes, for messages.
protocol Setting: Decodable {
    static var expected: String { get }
}

/// A TOML table; its `init(from:)` ends with `rejectUnknownKeys`.
protocol ConfigurationTable: Setting {}

extension ConfigurationTable { static var expected: String { "a table" } }
extension String: Setting { static var expected: String { "a string" } }
extension Int: Setting { static var expected: String { "an integer" } }
extension Bool: Setting { static var expected: String { "true or false" } }
extension Array: Setting where Element: Setting {
    static var expected: String { Element.self is any ConfigurationTable.Type ? "an array of tables" : "an array" }
}

/// Several problems: every unknown key of a table, or all that `ReachdConfiguration.init(from:)`
/// found (the first problem of each table, and each unknown table).
struct ConfigurationProblems: Error {
    package var errors: [any Error]
}

/// A key that the table's `CodingKeys` do not name, with the path of the known key closest to it.
struct UnknownKey: Error {
    var steps: [String]
    var suggestion: String?
}

/// Any key, to list all of a table's keys.
private struct AnyKey: CodingKey {
    package var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension KeyedDecodingContainer {
    /// The error for a key whose value does not fit with the rest of its table.
    package func invalid(_ key: Key, _ message: String) -> DecodingError {
        .dataCorruptedError(forKey: key, in: self, debugDescription: message)
    }

    /// The value at `key`, or nil when the file leaves it out. A type mismatch at `key`
    /// itself is re-thrown naming `T` (the decoder names the Swift type it tried, `String`
    /// for a `FileMode`), so that the message says what the setting expects.
    func setting<T: Setting>(_ type: T.Type, _ key: Key) throws -> T? {
        guard contains(key) else { return nil }
        do {
            return try decode(T.self, forKey: key)
        } catch let DecodingError.typeMismatch(_, context) where context.codingPath.count == codingPath.count + 1 {
            throw DecodingError.typeMismatch(T.self, context)
        }
    }
}

extension Decoder {
    /// The single value here as `T`; a wrong type is a `typeMismatch` with the path.
    func scalar<T: Decodable>() throws -> T { try singleValueContainer().decode(T.self) }

    /// The error for a value of the right type that is not acceptable.
    package func invalid(_ message: String) -> DecodingError {
        .dataCorrupted(DecodingError.Context(codingPath: codingPath, debugDescription: message))
    }

    /// This table's keys that `Keys` does not name, in key order, each as an `UnknownKey`.
    func unknownKeys<Keys: CodingKey & CaseIterable>(_: Keys.Type) throws -> [any Error] {
        let known = Keys.allCases.map(\.stringValue)
        return try container(keyedBy: AnyKey.self).allKeys.filter { !known.contains($0.stringValue) }.map { key in
            let guess = known.map { ($0, editDistance(key.stringValue, $0)) }.filter { $0.1 <= 2 }.min { $0.1 < $1.1 }?.0
            let suggestion = guess.map { ReachdConfiguration.steps(codingPath + [AnyKey(stringValue: $0)]).joined() }
            return UnknownKey(steps: ReachdConfiguration.steps(codingPath + [key]), suggestion: suggestion)
        }
    }

    /// Throws every key of this table that `Keys` does not name (as `ConfigurationProblems`).
    func rejectUnknownKeys<Keys: CodingKey & CaseIterable>(_ keys: Keys.Type) throws {
        let unknown = try unknownKeys(keys)
        if !unknown.isEmpty { throw ConfigurationProblems(errors: unknown) }
    }
}

/// Optimal-string-alignment distance: insertions, deletions, substitutions and
/// transpositions of neighbours ("sockte" → "socket") each cost one.
private func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    var d = (0...a.count).map { i in (0...b.count).map { j in i == 0 ? j : (j == 0 ? i : 0) } }
    for i in stride(from: 1, through: a.count, by: 1) {
        for j in stride(from: 1, through: b.count, by: 1) {
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
        }
    }
    return d[a.count][b.count]
}
