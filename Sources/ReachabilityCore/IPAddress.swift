/// An IPv4 or IPv6 address as raw network-order bytes.
///
/// reachd keeps addresses as bytes (what netlink hands over) and formats them only
/// when a human or a client asks, so this type does both without any C call.
public enum IPAddress: Sendable, Hashable {
    /// Four bytes in network order.
    case v4(UInt8, UInt8, UInt8, UInt8)
    /// Sixteen bytes in network order.
    case v6([UInt8])

    /// Creates an address from 4 or 16 network-order bytes; nil for any other length.
    public init?(bytes: [UInt8]) {
        switch bytes.count {
        case 4: self = .v4(bytes[0], bytes[1], bytes[2], bytes[3])
        case 16: self = .v6(bytes)
        default: return nil
        }
    }

    /// Parses dotted-quad IPv4 or RFC 4291 IPv6 text (with `::` compression).
    public init?(_ text: some StringProtocol) {
        if text.contains(":") {
            guard let bytes = Self.parseIPv6(Substring(text)) else { return nil }
            self = .v6(bytes)
        } else {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 4 else { return nil }
            var bytes: [UInt8] = []
            for part in parts {
                // Digits only: UInt8("+1") and UInt8("-0") would otherwise let signs through.
                guard !part.isEmpty, part.count <= 3, part.allSatisfy(\.isASCIIDigit),
                      let value = UInt8(part) else { return nil }
                bytes.append(value)
            }
            self = .v4(bytes[0], bytes[1], bytes[2], bytes[3])
        }
    }

    /// The address family.
    public var family: AddressFamily {
        switch self {
        case .v4: return .ipv4
        case .v6: return .ipv6
        }
    }

    /// The raw network-order bytes.
    public var bytes: [UInt8] {
        switch self {
        case let .v4(a, b, c, d): return [a, b, c, d]
        case let .v6(bytes): return bytes
        }
    }

    /// True for 169.254.0.0/16 and fe80::/10: usable on the link only, never towards the internet.
    public var isLinkLocal: Bool {
        switch self {
        case let .v4(a, b, _, _): return a == 169 && b == 254
        case let .v6(bytes): return bytes[0] == 0xFE && (bytes[1] & 0xC0) == 0x80
        }
    }

    /// True for 127.0.0.0/8 and ::1.
    public var isLoopback: Bool {
        switch self {
        case let .v4(a, _, _, _): return a == 127
        case let .v6(bytes): return bytes == [UInt8](repeating: 0, count: 15) + [1]
        }
    }

    private static func parseIPv6(_ text: Substring) -> [UInt8]? {
        // Split around a single "::"; each side is a list of 16-bit groups.
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: Substring) -> [UInt16]? {
            if part.isEmpty { return [] }
            var result: [UInt16] = []
            for group in part.split(separator: ":", omittingEmptySubsequences: false) {
                guard !group.isEmpty, group.count <= 4, group.allSatisfy(\.isHexDigit),
                      let value = UInt16(group, radix: 16) else { return nil }
                result.append(value)
            }
            return result
        }
        guard let head = groups(halves[0]) else { return nil }
        var words = head
        if halves.count == 2 {
            guard let tail = groups(halves[1]), head.count + tail.count <= 7 else { return nil }
            words += [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
        }
        guard words.count == 8 else { return nil }
        return words.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }
}

extension Substring {
    fileprivate func components(separatedBy separator: String) -> [Substring] {
        var result: [Substring] = []
        var rest = self[...]
        while let range = rest.firstRange(of: separator) {
            result.append(rest[..<range.lowerBound])
            rest = rest[range.upperBound...]
        }
        result.append(rest)
        return result
    }
}

extension IPAddress: CustomStringConvertible {
    /// Conventional text: dotted quad, or RFC 5952 IPv6 (lower case, longest zero run as `::`).
    public var description: String {
        switch self {
        case let .v4(a, b, c, d):
            return "\(a).\(b).\(c).\(d)"
        case let .v6(bytes):
            let words = stride(from: 0, to: 16, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
            // Longest run of zero words (length >= 2) becomes "::".
            var bestStart = -1, bestLength = 0, runStart = -1
            for index in 0...8 {
                if index < 8 && words[index] == 0 {
                    if runStart < 0 { runStart = index }
                } else if runStart >= 0 {
                    if index - runStart > bestLength { bestStart = runStart; bestLength = index - runStart }
                    runStart = -1
                }
            }
            let hex = words.map { String($0, radix: 16) }
            guard bestLength >= 2 else { return hex.joined(separator: ":") }
            let head = hex[..<bestStart].joined(separator: ":")
            let tail = hex[(bestStart + bestLength)...].joined(separator: ":")
            return head + "::" + tail
        }
    }
}

extension IPAddress: Codable {
    /// Decodes from the textual form.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let address = IPAddress(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an IP address: \(text)")
        }
        self = address
    }

    /// Encodes as the textual form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// An IP protocol family.
public enum AddressFamily: String, Sendable, Hashable, Codable, CaseIterable {
    /// IPv4 (AF_INET).
    case ipv4
    /// IPv6 (AF_INET6).
    case ipv6
}

extension Character {
    /// 0–9 in ASCII (Character.isNumber would also take other scripts' digits).
    fileprivate var isASCIIDigit: Bool { isASCII && isWholeNumber }
}

/// An interface name as a client, a resolver or an address's scope (`fe80::1%eth0`) gives
/// it: what the kernel would accept (`dev_valid_name`: 1–15 bytes, not `.` or `..`, no `/`,
/// `:` or white space), further held to printable ASCII so that it can be shown as it is.
package enum InterfaceName {
    /// The most bytes a name has (IFNAMSIZ less its terminating NUL).
    package static let maximumLength = 15

    /// Whether `name` could name an interface.
    package static func isValid(_ name: some StringProtocol) -> Bool {
        let bytes = name.utf8
        guard (1...maximumLength).contains(bytes.count), name != ".", name != ".." else { return false }
        return bytes.allSatisfy { byte in
            (0x21...0x7E).contains(byte) && byte != UInt8(ascii: "/") && byte != UInt8(ascii: ":")
        }
    }
}
