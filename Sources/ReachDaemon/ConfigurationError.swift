/// One problem found in a configuration file, located as precisely as the file allows.
public struct ConfigurationDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// The file the problem is in.
    public var file: String
    /// One-based line, when known.
    public var line: Int?
    /// One-based column, when known (syntax errors only).
    public var column: Int?
    /// The key the problem is about, if any.
    public var key: ConfigurationKeyPath?
    /// What is wrong, without file, line or key.
    public var message: String

    /// Creates a diagnostic.
    public init(file: String, line: Int? = nil, column: Int? = nil, key: ConfigurationKeyPath? = nil, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.key = key
        self.message = message
    }

    /// `FILE:LINE[:COLUMN]: [KEY: ]MESSAGE`, the form compilers use so editors can jump to it.
    public var description: String {
        var text = file
        if let line { text += ":\(line)" }
        if line != nil, let column { text += ":\(column)" }
        text += ": "
        if let key, !key.components.isEmpty { text += "\(key): " }
        return text + message
    }
}

/// Why a configuration could not be used.
public enum ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file named with `--config` does not exist.
    case notFound(path: String)
    /// The file exists but cannot be read (permissions, not a regular file, not UTF-8).
    case unreadable(path: String, reason: String)
    /// The file was read but is not a valid configuration; every problem found is listed.
    case invalid([ConfigurationDiagnostic])

    /// One problem per line.
    public var description: String {
        switch self {
        case let .notFound(path):
            "\(path): no such configuration file"
        case let .unreadable(path, reason):
            "\(path): cannot read: \(reason)"
        case let .invalid(diagnostics):
            diagnostics.map(\.description).joined(separator: "\n")
        }
    }

    /// The problems on one line, for `STATUS=` and single-line logs.
    public var summary: String {
        switch self {
        case .notFound, .unreadable:
            description
        case let .invalid(diagnostics):
            diagnostics.map(\.description).joined(separator: "; ")
        }
    }
}
