import Logging
import ReachabilityCore

/// Reads `reachd.toml` text into a `ReachdConfiguration`, checking every key.
///
/// Pure: text in, configuration or every problem found out. Each problem names the file,
/// the line and the key, e.g.
/// `/etc/reachd/reachd.toml:7: interfaces.override[1].type: unknown interface type "wlan" (…)`.
/// Array positions in key paths count from zero.
public enum ConfigurationParser {
    /// Keys `[log] level` accepts, in increasing severity.
    public static let logLevelNames = Logger.Level.allCases.map(\.rawValue)

    /// Parses and validates `text`, read from `file` (used only in messages).
    public static func parse(_ text: String, file: String) throws(ConfigurationError) -> ReachdConfiguration {
        let root = try ConfigurationDocument.parse(text, file: file)
        var validation = ConfigurationValidation(file: file, locator: ConfigurationKeyLocator(text: text))
        let configuration = validation.configuration(from: root)
        guard validation.diagnostics.isEmpty else { throw .invalid(validation.sortedDiagnostics) }
        return configuration
    }
}

/// Walks the document against the schema, collecting every problem rather than the first.
struct ConfigurationValidation {
    let file: String
    let locator: ConfigurationKeyLocator
    private(set) var diagnostics: [ConfigurationDiagnostic] = []

    init(file: String, locator: ConfigurationKeyLocator) {
        self.file = file
        self.locator = locator
    }

    /// Problems in the order they appear in the file.
    var sortedDiagnostics: [ConfigurationDiagnostic] {
        diagnostics.sorted { ($0.line ?? 0, $0.key?.description ?? "") < ($1.line ?? 0, $1.key?.description ?? "") }
    }

    mutating func configuration(from root: [String: ConfigurationValue]) -> ReachdConfiguration {
        var configuration = ReachdConfiguration()
        let rootPath = ConfigurationKeyPath()
        for (key, value) in root {
            let path = rootPath.appending(key)
            switch key {
            case "socket": socket(value, at: path, into: &configuration)
            case "log": log(value, at: path, into: &configuration)
            case "interfaces": interfaces(value, at: path, into: &configuration)
            case "netlink": netlink(value, at: path, into: &configuration)
            default: unknownKey(path, known: ["socket", "log", "interfaces", "netlink"])
            }
        }
        return configuration
    }

    // MARK: - Sections

    private mutating func socket(_ value: ConfigurationValue, at path: ConfigurationKeyPath, into configuration: inout ReachdConfiguration) {
        guard let table = table(value, at: path) else { return }
        for (key, value) in table {
            let path = path.appending(key)
            switch key {
            case "path":
                guard let text = string(value, at: path) else { continue }
                if let problem = Self.socketPathProblem(text) {
                    report(path, problem)
                } else {
                    configuration.socketPath = text
                }
            case "mode":
                guard let text = string(value, at: path) else { continue }
                if let mode = Self.parseMode(text) {
                    configuration.socketMode = mode
                } else {
                    report(path, "\"\(text)\" is not a file mode (expected 3 or 4 octal digits up to 0777, such as \"0666\")")
                }
            default:
                unknownKey(path, known: ["path", "mode"])
            }
        }
    }

    private mutating func log(_ value: ConfigurationValue, at path: ConfigurationKeyPath, into configuration: inout ReachdConfiguration) {
        guard let table = table(value, at: path) else { return }
        for (key, value) in table {
            let path = path.appending(key)
            switch key {
            case "level":
                guard let text = string(value, at: path) else { continue }
                if let level = Logger.Level(rawValue: text) {
                    configuration.logLevel = level
                } else {
                    report(path, "unknown log level \"\(text)\" (expected \(ConfigurationParser.logLevelNames.joined(separator: ", ")))")
                }
            default:
                unknownKey(path, known: ["level"])
            }
        }
    }

    private mutating func interfaces(_ value: ConfigurationValue, at path: ConfigurationKeyPath, into configuration: inout ReachdConfiguration) {
        guard let table = table(value, at: path) else { return }
        for (key, value) in table {
            let path = path.appending(key)
            switch key {
            case "ignore":
                guard let items = array(value, at: path) else { continue }
                var patterns: [String] = []
                for (index, item) in items.enumerated() {
                    if let pattern = glob(item, at: path.appending(index: index)) { patterns.append(pattern) }
                }
                configuration.policy.ignoredPatterns = patterns
            case "override":
                guard let items = array(value, at: path, expected: "an array of tables ([[interfaces.override]])") else { continue }
                var overrides: [InterfacePolicy.Override] = []
                for (index, item) in items.enumerated() {
                    if let override = override(item, at: path.appending(index: index)) { overrides.append(override) }
                }
                configuration.policy.overrides = overrides
            default:
                unknownKey(path, known: ["ignore", "override"])
            }
        }
    }

    private mutating func override(_ value: ConfigurationValue, at path: ConfigurationKeyPath) -> InterfacePolicy.Override? {
        guard let table = table(value, at: path) else { return nil }
        var result = InterfacePolicy.Override(pattern: "")
        var valid = true
        for (key, value) in table {
            let path = path.appending(key)
            switch key {
            case "match":
                if let pattern = glob(value, at: path) { result.pattern = pattern } else { valid = false }
            case "type":
                guard let text = string(value, at: path) else { valid = false; continue }
                if let type = InterfaceType(rawValue: text) {
                    result.type = type
                } else {
                    valid = false
                    let names = InterfaceType.allCases.map(\.rawValue).joined(separator: ", ")
                    report(path, "unknown interface type \"\(text)\" (expected \(names))")
                }
            case "expensive":
                if let flag = boolean(value, at: path) { result.isExpensive = flag } else { valid = false }
            case "constrained":
                if let flag = boolean(value, at: path) { result.isConstrained = flag } else { valid = false }
            default:
                valid = false
                unknownKey(path, known: ["match", "type", "expensive", "constrained"])
            }
        }
        if table["match"] == nil {
            report(path, "missing required key \"match\" (the interface-name glob this override applies to)")
            return nil
        }
        return valid ? result : nil
    }

    private mutating func netlink(_ value: ConfigurationValue, at path: ConfigurationKeyPath, into configuration: inout ReachdConfiguration) {
        guard let table = table(value, at: path) else { return }
        for (key, value) in table {
            let path = path.appending(key)
            switch key {
            case "receive-buffer-size":
                guard let size = integer(value, at: path) else { continue }
                let range = ReachdConfiguration.minimumReceiveBufferSize...ReachdConfiguration.maximumReceiveBufferSize
                if range.contains(size) {
                    configuration.receiveBufferSize = size
                } else {
                    report(path, "\(size) is out of range (\(range.lowerBound)…\(range.upperBound) bytes, 64 KiB…1 GiB)")
                }
            default:
                unknownKey(path, known: ["receive-buffer-size"])
            }
        }
    }

    // MARK: - Values

    static func socketPathProblem(_ path: String) -> String? {
        if !path.hasPrefix("/") { return "\"\(path)\" is not an absolute path" }
        if path.hasSuffix("/") { return "\"\(path)\" names a directory, not a socket file" }
        if path.utf8.contains(0) { return "the path contains a NUL byte" }
        let length = path.utf8.count
        let limit = ReachdConfiguration.maximumSocketPathLength
        if length > limit { return "the path is \(length) bytes long, more than a Unix socket address holds (\(limit))" }
        return nil
    }

    /// "666", "0666" → 0o666; anything else (including "0o666", "1777", "0888") → nil.
    static func parseMode(_ text: String) -> UInt32? {
        guard (3...4).contains(text.count), text.allSatisfy({ ("0"..."7").contains($0) }) else { return nil }
        guard let mode = UInt32(text, radix: 8), mode <= 0o777 else { return nil }
        return mode
    }

    private mutating func glob(_ value: ConfigurationValue, at path: ConfigurationKeyPath) -> String? {
        guard let pattern = string(value, at: path) else { return nil }
        if pattern.isEmpty {
            report(path, "empty pattern (expected an interface-name glob such as \"docker*\")")
            return nil
        }
        if pattern.contains(where: { $0.isWhitespace || $0 == "/" }) {
            report(path, "pattern \"\(pattern)\" can never match: interface names contain no whitespace or \"/\"")
            return nil
        }
        return pattern
    }

    private mutating func table(_ value: ConfigurationValue, at path: ConfigurationKeyPath) -> [String: ConfigurationValue]? {
        if case let .table(table) = value { return table }
        wrongType(value, at: path, expected: "a table")
        return nil
    }

    private mutating func array(_ value: ConfigurationValue, at path: ConfigurationKeyPath, expected: String = "an array") -> [ConfigurationValue]? {
        if case let .array(items) = value { return items }
        wrongType(value, at: path, expected: expected)
        return nil
    }

    private mutating func string(_ value: ConfigurationValue, at path: ConfigurationKeyPath) -> String? {
        if case let .string(text) = value { return text }
        wrongType(value, at: path, expected: "a string")
        return nil
    }

    private mutating func integer(_ value: ConfigurationValue, at path: ConfigurationKeyPath) -> Int? {
        if case let .integer(number) = value { return number }
        wrongType(value, at: path, expected: "an integer")
        return nil
    }

    private mutating func boolean(_ value: ConfigurationValue, at path: ConfigurationKeyPath) -> Bool? {
        if case let .boolean(flag) = value { return flag }
        wrongType(value, at: path, expected: "true or false")
        return nil
    }

    // MARK: - Reporting

    private mutating func wrongType(_ value: ConfigurationValue, at path: ConfigurationKeyPath, expected: String) {
        report(path, "expected \(expected), found \(value.typeName)")
    }

    private mutating func unknownKey(_ path: ConfigurationKeyPath, known: [String]) {
        var message = "unknown key \"\(path)\""
        if case let .key(name)? = path.components.last, let guess = Self.closest(to: name, in: known) {
            message += " (did you mean \"\(path.parent.appending(guess))\"?)"
        }
        diagnostics.append(ConfigurationDiagnostic(file: file, line: locator.line(of: path), message: message))
    }

    private mutating func report(_ path: ConfigurationKeyPath, _ message: String) {
        diagnostics.append(ConfigurationDiagnostic(file: file, line: locator.line(of: path), key: path, message: message))
    }

    /// The known key within edit distance 2 of a misspelt one, if any.
    static func closest(to name: String, in known: [String]) -> String? {
        known
            .map { ($0, editDistance(name, $0)) }
            .filter { $0.1 <= 2 }
            .min { $0.1 < $1.1 }?
            .0
    }

    /// Optimal-string-alignment distance: insertions, deletions, substitutions and
    /// transpositions of neighbours ("sockte" → "socket") each cost one.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var d = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in stride(from: 1, through: a.count, by: 1) {
            for j in stride(from: 1, through: b.count, by: 1) {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }
}
