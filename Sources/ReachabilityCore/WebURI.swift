/// An `http` or `https` URI that reachd may fetch, publish or log, checked where it enters
/// (a Router Advertisement's option 37, an RFC 8908 answer, a probe's `Location`, the
/// configuration): one rule for all of them, and a typed reason when a URI is refused.
///
/// The rules (RFC 3986, narrowed to what reachd can use):
/// - at most `maximumLength` bytes;
/// - only the characters RFC 3986 allows: ASCII letters, digits, `-._~`, the delimiters
///   `:/?#[]@!$&'()*+,;=` and `%` followed by two hex digits. Anything else (a space, a
///   control, DEL, `"<>\^`{|}`, any non-ASCII scalar: C1 controls, bidi overrides such as
///   U+202E, format characters) is refused, never repaired or escaped;
/// - a scheme from the set the caller allows (`javascript:`, `file:` and the like never are);
/// - `//` and an authority without user information (`user@host`);
/// - a host: a DNS name (letters, digits, `-`, `_`, `.`), a dotted IPv4 address or an IPv6
///   address in brackets; never empty;
/// - a port of 1–65535 when one is given (`:` alone means the scheme's);
/// - `[` and `]` only around an IPv6 host, and at most one `#`.
///
/// Pure and table-tested; a refusal names the offending part by position and value, never
/// by echoing the URI, so it can be logged as it is.
package struct WebURI: Sendable, Hashable, CustomStringConvertible {
    /// The longest URI accepted, in bytes: browsers' practical limit for a login page,
    /// and far more than any portal or probe URL needs.
    package static let maximumLength = 2048

    /// The schemes reachd can use.
    package enum Scheme: String, Sendable, Hashable, CaseIterable {
        /// Plain HTTP.
        case http
        /// HTTP over TLS.
        case https

        /// The port used when the URI gives none.
        package var defaultPort: Int { self == .https ? 443 : 80 }
    }

    /// Why a URI is refused.
    package enum Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// No text at all.
        case empty
        /// Longer than `maximumLength` (the length in bytes).
        case tooLong(Int)
        /// A character RFC 3986 does not allow (or `[`, `]`, `#` where they may not be), at
        /// this byte offset.
        case forbiddenCharacter(Unicode.Scalar, offset: Int)
        /// A `%` not followed by two hex digits, at this byte offset.
        case malformedPercentEscape(offset: Int)
        /// No `scheme:` at the start.
        case noScheme
        /// A scheme the caller does not allow (lowercased, at most 32 characters).
        case schemeNotAllowed(String)
        /// No `//` and host, or an empty host.
        case noHost
        /// User information (`user@` or `user:password@`) before the host.
        case userInfo
        /// A host that is neither a DNS name nor an IP literal.
        case invalidHost
        /// A port that is not all digits.
        case invalidPort
        /// A port outside 1–65535 (its digits, at most 20).
        case portOutOfRange(String)

        /// One line for the log or a configuration error; safe to print as it is.
        package var description: String {
            switch self {
            case .empty: return "empty URI"
            case let .tooLong(length): return "URI of \(length) bytes, longer than \(WebURI.maximumLength)"
            case let .forbiddenCharacter(scalar, offset):
                return "character \(Self.name(of: scalar)) at byte \(offset) is not allowed in a URI"
            case let .malformedPercentEscape(offset): return "malformed percent escape at byte \(offset)"
            case .noScheme: return "no scheme"
            case let .schemeNotAllowed(scheme): return "scheme \(scheme): not allowed here"
            case .noHost: return "no host"
            case .userInfo: return "user information before the host"
            case .invalidHost: return "host is neither a DNS name nor an IP address"
            case .invalidPort: return "port is not a number"
            case let .portOutOfRange(digits): return "port \(digits) is not in 1–65535"
            }
        }

        private static func name(of scalar: Unicode.Scalar) -> String {
            if scalar.isASCII && scalar.value >= 0x21 && scalar.value < 0x7F { return "'\(scalar)'" }
            let hex = String(scalar.value, radix: 16, uppercase: true)
            return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
    }

    /// The scheme.
    package var scheme: Scheme
    /// The host, without the brackets of an IPv6 literal, as written.
    package var host: String
    /// The port: the one given, or the scheme's.
    package var port: Int
    /// Path and query as sent in a request line (`/` when the path is empty); the fragment
    /// is not part of it.
    package var target: String
    /// The URI as given (it passed every rule above).
    package var text: String

    /// The URI as given.
    package var description: String { text }

    /// `text` as a URI with one of `schemes`, or why not.
    package static func validate(_ text: String, schemes: Set<Scheme>) -> Result<WebURI, Problem> {
        let length = text.utf8.count
        guard length > 0 else { return .failure(.empty) }
        guard length <= maximumLength else { return .failure(.tooLong(length)) }
        var offset = 0
        for scalar in text.unicodeScalars {
            guard scalar.isASCII, isAllowed(UInt8(scalar.value)) else { return .failure(.forbiddenCharacter(scalar, offset: offset)) }
            offset += 1
        }
        // ASCII from here on: a byte is a character and an offset.
        let bytes = Array(text.utf8)
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "%") {
            guard index + 2 < bytes.count, bytes[index + 1].isASCIIHexDigitByte, bytes[index + 2].isASCIIHexDigitByte else {
                return .failure(.malformedPercentEscape(offset: index))
            }
        }

        // scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), then ":".
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0, bytes[0].isASCIILetterByte,
              bytes[..<colon].allSatisfy({ $0.isASCIILetterByte || $0.isASCIIDigitByte || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") })
        else { return .failure(.noScheme) }
        let name = String(decoding: bytes[..<colon], as: UTF8.self).lowercased()
        guard let scheme = Scheme(rawValue: name), schemes.contains(scheme) else {
            return .failure(.schemeNotAllowed(String(name.prefix(32))))
        }

        // "//" authority, ending at the first "/", "?" or "#".
        let authorityStart = colon + 3
        guard authorityStart <= bytes.count, bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/") else {
            return .failure(.noHost)
        }
        let authorityEnd = bytes[authorityStart...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.count
        let authority = bytes[authorityStart..<authorityEnd]
        guard !authority.contains(UInt8(ascii: "@")) else { return .failure(.userInfo) }

        let host: String
        let portText: ArraySlice<UInt8>?
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { return .failure(.invalidHost) }
            let literal = String(decoding: authority[(authority.startIndex + 1)..<close], as: UTF8.self)
            guard literal.contains(":"), IPAddress(literal) != nil else { return .failure(.invalidHost) }
            host = literal
            let after = authority[(close + 1)...]
            if after.isEmpty {
                portText = nil
            } else if after.first == UInt8(ascii: ":") {
                portText = after.dropFirst()
            } else {
                return .failure(.forbiddenCharacter(Unicode.Scalar(after[after.startIndex]), offset: after.startIndex))
            }
        } else {
            let hostEnd = authority.firstIndex(of: UInt8(ascii: ":")) ?? authority.endIndex
            let name = authority[authority.startIndex..<hostEnd]
            guard !name.isEmpty else { return .failure(.noHost) }
            guard name.allSatisfy({ $0.isASCIILetterByte || $0.isASCIIDigitByte || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") }) else {
                if let bracket = name.firstIndex(where: { $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "]") }) {
                    return .failure(.forbiddenCharacter(Unicode.Scalar(bytes[bracket]), offset: bracket))
                }
                return .failure(.invalidHost)
            }
            host = String(decoding: name, as: UTF8.self)
            // All digits and dots is an IPv4 address or nothing (never a name to resolve).
            if name.allSatisfy({ $0.isASCIIDigitByte || $0 == UInt8(ascii: ".") }) && IPAddress(host) == nil { return .failure(.invalidHost) }
            portText = hostEnd == authority.endIndex ? nil : authority[(hostEnd + 1)...]
        }

        var port = scheme.defaultPort
        if let portText, !portText.isEmpty {
            guard portText.allSatisfy(\.isASCIIDigitByte) else { return .failure(.invalidPort) }
            // At most five digits are read as a number, so no port text can overflow an Int.
            let digits = portText.drop { $0 == UInt8(ascii: "0") }
            guard digits.count <= 5, let value = Int(String(decoding: digits.isEmpty ? [UInt8(ascii: "0")] : Array(digits), as: UTF8.self)),
                  (1...65535).contains(value)
            else { return .failure(.portOutOfRange(String(decoding: portText.prefix(20), as: UTF8.self))) }
            port = value
        }

        // path-abempty [ "?" query ] [ "#" fragment ]: brackets belong to the host only,
        // and a fragment cannot hold another "#".
        let rest = bytes[authorityEnd...]
        if let bad = rest.firstIndex(where: { $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "]") }) {
            return .failure(.forbiddenCharacter(Unicode.Scalar(bytes[bad]), offset: bad))
        }
        let fragment = rest.firstIndex(of: UInt8(ascii: "#")) ?? rest.endIndex
        if fragment < rest.endIndex, let second = rest[(fragment + 1)...].firstIndex(of: UInt8(ascii: "#")) {
            return .failure(.forbiddenCharacter("#", offset: second))
        }
        let request = rest[..<fragment]
        let target = request.first == UInt8(ascii: "/") ? String(decoding: request, as: UTF8.self) : "/" + String(decoding: request, as: UTF8.self)
        return .success(WebURI(scheme: scheme, host: host, port: port, target: target, text: text))
    }

    /// RFC 3986's characters: unreserved, reserved (gen-delims and sub-delims) and `%`.
    private static func isAllowed(_ byte: UInt8) -> Bool {
        if byte.isASCIILetterByte || byte.isASCIIDigitByte { return true }
        switch byte {
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"),
             UInt8(ascii: ":"), UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "@"),
             UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: "%"):
            return true
        default:
            return false
        }
    }
}

private extension UInt8 {
    var isASCIILetterByte: Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self | 0x20) }
    var isASCIIDigitByte: Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) }
    var isASCIIHexDigitByte: Bool { isASCIIDigitByte || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self | 0x20) }
}
