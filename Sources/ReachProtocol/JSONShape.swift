import FoundationEssentials

/// A linear look at a message's JSON before anything decodes it: how deep it nests, and
/// whether its top-level object names a key twice.
///
/// Decoding cost must stay bounded and linear in what a client sends: `JSONDecoder` on a
/// value nested hundreds of levels deep costs seconds of event-loop time, so depth is
/// checked first, in one pass over the bytes. A call naming `method` twice is ambiguous
/// (decoders silently keep one of them), so it is refused rather than guessed at. The scan
/// trusts nothing: whatever it lets through still goes through the real decoder.
package enum JSONShape {
    /// Why a message was refused before decoding.
    package enum Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// Arrays and objects nest deeper than `limit`.
        case tooDeep(limit: Int)
        /// The top-level object names `key` more than once.
        case duplicateKey(String)

        /// One line for logs.
        package var description: String {
            switch self {
            case let .tooDeep(limit): "JSON nested deeper than \(limit) levels"
            case let .duplicateKey(key): "the key \"\(key)\" appears twice"
            }
        }
    }

    /// The first problem with `bytes`, or nil when its shape is fine (it may still be
    /// invalid JSON: the decoder decides that).
    package static func problem(in bytes: some Sequence<UInt8>, maximumDepth: Int) -> Problem? {
        // One tight loop over contiguous memory (a ByteBuffer, an Array): fast in any build.
        if let found = bytes.withContiguousStorageIfAvailable({ scan($0, maximumDepth: maximumDepth) }) { return found }
        return Array(bytes).withUnsafeBufferPointer { scan($0, maximumDepth: maximumDepth) }
    }

    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) -> Problem? {
        var depth = 0
        var inString = false
        var escaped = false
        // The string being read at depth 1, and the last one closed there while nothing but
        // white space followed it: a key, if a ':' comes next.
        var topLevelString: [UInt8] = []
        var stringHasEscape = false
        var candidateKey: (bytes: [UInt8], hasEscape: Bool)?
        var keys: Set<String> = []
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                    stringHasEscape = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    if depth == 1 { candidateKey = (topLevelString, stringHasEscape) }
                    continue
                }
                if depth == 1 { topLevelString.append(byte) }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
                stringHasEscape = false
                topLevelString.removeAll(keepingCapacity: true)
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > maximumDepth { return .tooDeep(limit: maximumDepth) }
                candidateKey = nil
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
                candidateKey = nil
            case UInt8(ascii: ":"):
                if depth == 1, let candidate = candidateKey {
                    let key = text(candidate.bytes, hasEscape: candidate.hasEscape)
                    if !keys.insert(key).inserted { return .duplicateKey(key) }
                }
                candidateKey = nil
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                continue
            default:
                candidateKey = nil
            }
        }
        return nil
    }

    /// A key as text: its bytes, or decoded when it has escapes (`"\u006dethod"` is `method`).
    private static func text(_ raw: [UInt8], hasEscape: Bool) -> String {
        guard hasEscape else { return String(decoding: raw, as: UTF8.self) }
        let quoted = [UInt8(ascii: "\"")] + raw + [UInt8(ascii: "\"")]
        return (try? JSONDecoder().decode(String.self, from: Data(quoted))) ?? String(decoding: raw, as: UTF8.self)
    }
}
