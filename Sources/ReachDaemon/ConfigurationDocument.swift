import TOMLKit

/// A parsed TOML document as plain Swift values, so validation never touches TOMLKit.
public indirect enum ConfigurationValue: Sendable, Equatable {
    /// A string.
    case string(String)
    /// A 64-bit integer.
    case integer(Int)
    /// A floating-point number.
    case float(Double)
    /// `true` or `false`.
    case boolean(Bool)
    /// An array (including an array of tables).
    case array([ConfigurationValue])
    /// A table (including an inline table).
    case table([String: ConfigurationValue])
    /// A date, time or date-time, which no setting takes; carries the TOML type's name.
    case other(typeName: String)

    /// The TOML type's name, as messages show it.
    public var typeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .float: "float"
        case .boolean: "boolean"
        case .array: "array"
        case .table: "table"
        case let .other(typeName): typeName
        }
    }
}

/// Turns configuration text into a `ConfigurationValue` tree with TOMLKit (toml++).
public enum ConfigurationDocument {
    /// Parses `text`; a syntax error (including a key defined twice) is reported with the
    /// line and column toml++ gives.
    public static func parse(_ text: String, file: String) throws(ConfigurationError) -> [String: ConfigurationValue] {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw .invalid([
                ConfigurationDiagnostic(
                    file: file, line: error.source.begin.line, column: error.source.begin.column,
                    message: error.description
                )
            ])
        } catch {
            throw .invalid([ConfigurationDiagnostic(file: file, message: "\(error)")])
        }
        return convert(table)
    }

    private static func convert(_ table: TOMLTable) -> [String: ConfigurationValue] {
        var result: [String: ConfigurationValue] = [:]
        for (key, value) in table {
            result[key] = convert(value)
        }
        return result
    }

    private static func convert(_ value: any TOMLValueConvertible) -> ConfigurationValue {
        switch value.type {
        case .string: .string(value.string ?? "")
        case .int: .integer(value.int ?? 0)
        case .double: .float(value.double ?? 0)
        case .bool: .boolean(value.bool ?? false)
        case .array: .array(value.array.map { $0.map(convert) } ?? [])
        case .table: .table(value.table.map(convert) ?? [:])
        case .date: .other(typeName: "date")
        case .time: .other(typeName: "time")
        case .dateTime: .other(typeName: "date-time")
        }
    }
}
