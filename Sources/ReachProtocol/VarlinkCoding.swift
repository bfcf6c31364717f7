import FoundationEssentials

/// JSON encoding and decoding of Varlink messages, configured once for both ends.
package enum VarlinkCoding {
    /// Encodes `value` as compact JSON.
    package static func encode(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        // Stable key order makes replies diffable and tests exact.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    /// Encodes `value` as compact JSON text.
    package static func encodeText(_ value: some Encodable) throws -> String {
        String(decoding: try encode(value), as: UTF8.self)
    }

    /// Encodes `value` as one frame: JSON followed by NUL.
    package static func encodeFrame(_ value: some Encodable) throws -> [UInt8] {
        var bytes = try encode(value)
        bytes.append(VarlinkFraming.terminator)
        return bytes
    }

    /// Decodes a message (without its NUL).
    package static func decode<Value: Decodable>(_ type: Value.Type, from bytes: some Sequence<UInt8>) throws -> Value {
        try JSONDecoder().decode(type, from: Data(bytes))
    }
}
