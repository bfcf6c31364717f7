import CTOML
import Glibc

/// A TOML document as plain Swift values, read from toml++ through TOMLKit's C shim
/// (`CTOML`) with everything the shim allocates freed, and decoded by `TOMLDocumentDecoder`.
///
/// Why not TOMLKit's `TOMLTable` and `TOMLDecoder`: TOMLKit 0.6.0 frees nothing it
/// allocates (no `deinit` on `TOMLTable`; every key list, string, integer and boolean it
/// reads is a `malloc`/`strdup` it never frees): every reload leaked what it read.
indirect enum TOMLNode: Equatable {
    /// A table: its values by key, and the keys in toml++'s order (sorted).
    case table([String: TOMLNode], keys: [String])
    case array([TOMLNode])
    case string(String)
    case integer(Int64)
    case float(Double)
    case boolean(Bool)
    case date
    case time
    case dateTime

    /// The TOML type, as configuration messages name it ("found float").
    var typeName: String {
        switch self {
        case .table: "table"
        case .array: "array"
        case .string: "string"
        case .integer: "integer"
        case .float: "float"
        case .boolean: "boolean"
        case .date: "date"
        case .time: "time"
        case .dateTime: "date-time"
        }
    }

    /// The value at `key` of a table; nil for a missing key or another type.
    subscript(key: String) -> TOMLNode? {
        guard case let .table(values, _) = self else { return nil }
        return values[key]
    }

    /// toml++'s reading of `text`: the document, or its syntax error (description, line, column).
    package static func parse(_ text: String) -> Result<TOMLNode, TOMLSyntaxError> {
        // Written by the shim only when parsing fails.
        let failure = UnsafeMutablePointer<CTOMLParseError>.allocate(capacity: 1)
        defer { failure.deallocate() }
        guard let root = text.withCString({ tableCreateFromString($0, failure) }) else {
            let error = failure.pointee
            defer { free(UnsafeMutableRawPointer(mutating: error.description)) }
            let (line, column) = (Int(error.source.begin.line), Int(error.source.begin.column))
            return .failure(TOMLSyntaxError(description: String(cString: error.description), line: line, column: column))
        }
        let document = node(table: root)
        // The shim has no function that deletes the root table: emptying it frees every node
        // under it, and what is left (no children, no source path) is plain memory from
        // libstdc++'s `operator new`, which is `malloc`.
        tableClear(root)
        free(UnsafeMutableRawPointer(root))
        return .success(document)
    }

    private static func node(table: OpaquePointer) -> TOMLNode {
        let count = tableSize(table)
        guard count > 0 else { return .table([:], keys: []) }
        let keyList = tableGetKeys(table), valueList = tableGetValues(table)
        defer {
            for index in 0..<count { free(UnsafeMutableRawPointer(mutating: keyList[index])) }
            free(UnsafeMutableRawPointer(mutating: keyList))
            free(UnsafeMutableRawPointer(mutating: valueList))
        }
        var values: [String: TOMLNode] = [:], keys: [String] = []
        for index in 0..<count {
            let key = String(cString: keyList[index])
            keys.append(key)
            values[key] = node(valueList[index])
        }
        return .table(values, keys: keys)
    }

    private static func node(_ pointer: OpaquePointer) -> TOMLNode {
        if let table = nodeAsTable(pointer) { return node(table: table) }
        if let array = nodeAsArray(pointer) {
            return .array((0..<arraySize(array)).map { node(arrayGetNode(array, Int64($0))) })
        }
        // Each of these returns a copy the shim allocated: read it, then free it.
        if let string = nodeAsString(pointer) {
            defer { free(UnsafeMutableRawPointer(mutating: string)) }
            return .string(String(cString: string))
        }
        if let integer = nodeAsInt(pointer) {
            defer { free(UnsafeMutableRawPointer(mutating: integer)) }
            return .integer(integer.pointee)
        }
        if let float = nodeAsDouble(pointer) {
            defer { free(UnsafeMutableRawPointer(mutating: float)) }
            return .float(float.pointee)
        }
        if let boolean = nodeAsBool(pointer) {
            defer { free(UnsafeMutableRawPointer(mutating: boolean)) }
            return .boolean(boolean.pointee)
        }
        switch nodeType(pointer) {
        case .date: return .date
        case .timeType: return .time
        default: return .dateTime
        }
    }
}

/// A syntax error toml++ found: its message and where (one-based line and column).
struct TOMLSyntaxError: Error, Equatable {
    package var description: String
    package var line: Int
    var column: Int
}

/// Decodes a `Decodable` from a `TOMLNode`, with the errors TOMLKit's `TOMLDecoder` gives:
/// a value of the wrong type is `typeMismatch` at its coding path, a missing key `keyNotFound`.
struct TOMLDocumentDecoder: Decoder {
    let node: TOMLNode
    let codingPath: [any CodingKey]
    package var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(_ node: TOMLNode, codingPath: [any CodingKey] = []) {
        self.node = node
        self.codingPath = codingPath
    }

    /// Decodes the whole document as `T`.
    package static func decode<T: Decodable>(_ type: T.Type, from node: TOMLNode) throws -> T {
        try T(from: TOMLDocumentDecoder(node))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case let .table(values, keys) = node else { throw mismatch([String: TOMLNode].self) }
        return KeyedDecodingContainer(Keyed<Key>(values: values, keys: keys, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case let .array(elements) = node else { throw mismatch([TOMLNode].self) }
        return Unkeyed(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(node: node, codingPath: codingPath) }

    private func mismatch(_ type: Any.Type) -> DecodingError {
        .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "found a \(node.typeName)"))
    }

    /// An array index as a coding key.
    package struct Index: CodingKey {
        var intValue: Int?
        var stringValue: String { "\(intValue ?? 0)" }
        init(intValue: Int) { self.intValue = intValue }
        init?(stringValue: String) { nil }
    }

    private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let values: [String: TOMLNode]
        let keys: [String]
        let codingPath: [any CodingKey]
        var allKeys: [Key] { keys.compactMap(Key.init(stringValue:)) }

        func contains(_ key: Key) -> Bool { values[key.stringValue] != nil }

        func decodeNil(forKey key: Key) throws -> Bool { values[key.stringValue] == nil }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try T(from: decoder(for: key))
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            try decoder(for: key).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try decoder(for: key).unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder { TOMLDocumentDecoder(.table(values, keys: keys), codingPath: codingPath) }

        func superDecoder(forKey key: Key) throws -> any Decoder { try decoder(for: key) }

        private func decoder(for key: Key) throws -> TOMLDocumentDecoder {
            guard let value = values[key.stringValue] else {
                throw DecodingError.keyNotFound(key, .init(codingPath: codingPath + [key], debugDescription: "no key \"\(key.stringValue)\""))
            }
            return TOMLDocumentDecoder(value, codingPath: codingPath + [key])
        }
    }

    private struct Unkeyed: UnkeyedDecodingContainer {
        let elements: [TOMLNode]
        let codingPath: [any CodingKey]
        var currentIndex = 0
        var count: Int? { elements.count }
        var isAtEnd: Bool { currentIndex >= elements.count }

        init(elements: [TOMLNode], codingPath: [any CodingKey]) {
            self.elements = elements
            self.codingPath = codingPath
        }

        mutating func decodeNil() throws -> Bool { false }

        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: next()) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            try next().container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }

        mutating func superDecoder() throws -> any Decoder { try next() }

        private mutating func next() throws -> TOMLDocumentDecoder {
            let path = codingPath + [Index(intValue: currentIndex)]
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(TOMLNode.self, .init(codingPath: path, debugDescription: "past the end of the array"))
            }
            defer { currentIndex += 1 }
            return TOMLDocumentDecoder(elements[currentIndex], codingPath: path)
        }
    }

    private struct Single: SingleValueDecodingContainer {
        let node: TOMLNode
        let codingPath: [any CodingKey]

        func decodeNil() -> Bool { false }

        func decode(_ type: Bool.Type) throws -> Bool {
            guard case let .boolean(value) = node else { throw mismatch(type) }
            return value
        }

        func decode(_ type: String.Type) throws -> String {
            guard case let .string(value) = node else { throw mismatch(type) }
            return value
        }

        func decode(_ type: Double.Type) throws -> Double {
            guard case let .float(value) = node else { throw mismatch(type) }
            return value
        }

        func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }
        func decode(_ type: Int.Type) throws -> Int { try integer(type) }
        func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
        func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
        func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
        func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
        func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

        func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: TOMLDocumentDecoder(node, codingPath: codingPath)) }

        /// An integer that fits `type` (TOMLKit's decoder would trap on one that does not).
        private func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
            guard case let .integer(value) = node else { throw mismatch(type) }
            guard let exact = T(exactly: value) else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "\(value) is out of range"))
            }
            return exact
        }

        private func mismatch(_ type: Any.Type) -> DecodingError {
            .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "found a \(node.typeName)"))
        }
    }
}
