/// What a client asks about in `CheckTarget` / `SubscribeTarget`: a host name or an address.
public enum Target: Sendable, Hashable, CustomStringConvertible {
    /// A name to resolve (already checked: at most 253 bytes, labels of 1–63 letters, digits,
    /// `-` or `_`, no leading or trailing `-`; stored lowercased, without a final dot).
    case host(String)
    /// An address literal (also when given as `host`).
    case address(IPAddress)
    /// A link-local IPv6 address on one interface (`fe80::1%eth0`, RFC 4007's zone): the
    /// same address may be a different host on each link, so it means nothing without one.
    /// The name is checked (`InterfaceName.isValid`) but need not exist.
    case scopedAddress(IPAddress, interface: String)

    /// The name or the address as text, as replies carry it.
    public var description: String {
        switch self {
        case let .host(name): return name
        case let .address(address): return address.description
        case let .scopedAddress(address, interface): return "\(address)%\(interface)"
        }
    }

    /// Reads a host parameter: an address literal is an address; otherwise a valid name.
    public init?(host text: String) {
        guard case let .success(target) = Self.parse(host: text) else { return nil }
        self = target
    }

    /// Why a parameter names no target.
    public enum Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// Neither an address literal nor a valid host name.
        case invalid
        /// `0.0.0.0` or `::`: "any address" when binding, no host to reach (the kernel would
        /// send to this host itself, so the answer would say reachable via whatever route).
        case unspecifiedAddress(IPAddress)
        /// A link-local IPv6 address without `%INTERFACE`: which link it is on is unknown
        /// (`ping` refuses it too).
        case unscopedLinkLocal(IPAddress)
        /// `ADDRESS%INTERFACE` where the address is not link-local IPv6 or the name could not
        /// name an interface.
        case invalidScope

        /// What follows "'TEXT' is " in a message.
        public var description: String {
            switch self {
            case .invalid: return "neither an address nor a valid host name"
            case .unspecifiedAddress: return "an unspecified address: it names no host"
            case let .unscopedLinkLocal(address): return "a link-local address without an interface: write \(address)%INTERFACE"
            case .invalidScope: return "not a link-local IPv6 address followed by %INTERFACE (at most 15 printable characters, no '/' or ':')"
            }
        }
    }

    /// A host parameter as a target: an address literal (not an unspecified one) is an
    /// address; otherwise it must be a valid name.
    public static func parse(host text: String) -> Result<Target, Problem> {
        // No name holds a '%': a scoped address, or nothing.
        if IPAddress(text) != nil || text.contains("%") { return parse(address: text) }
        guard let name = validName(text) else { return .failure(.invalid) }
        return .success(.host(name))
    }

    /// An address parameter as a target: an IPv4 or IPv6 literal other than `0.0.0.0` and `::`;
    /// a link-local IPv6 one only with its interface (`fe80::1%eth0`), as `ping` wants it.
    public static func parse(address text: String) -> Result<Target, Problem> {
        if let percent = text.firstIndex(of: "%") {
            let interface = text[text.index(after: percent)...]
            guard let address = IPAddress(text[..<percent]) else { return .failure(.invalid) }
            guard address.family == .ipv6, address.isLinkLocal, InterfaceName.isValid(interface) else { return .failure(.invalidScope) }
            return .success(.scopedAddress(address, interface: String(interface)))
        }
        guard let address = IPAddress(text) else { return .failure(.invalid) }
        guard address.bytes.contains(where: { $0 != 0 }) else { return .failure(.unspecifiedAddress(address)) }
        if address.family == .ipv6 && address.isLinkLocal { return .failure(.unscopedLinkLocal(address)) }
        return .success(.address(address))
    }

    /// RFC 1123 host names (plus `_`, which real service names use), at most 253 bytes.
    static func validName(_ text: String) -> String? {
        var name = Substring(text)
        if name.hasSuffix(".") { name = name.dropLast() }
        guard !name.isEmpty, name.utf8.count <= 253 else { return nil }
        for label in name.split(separator: ".", omittingEmptySubsequences: false) {
            guard (1...63).contains(label.utf8.count), label.first != "-", label.last != "-" else { return nil }
            guard label.utf8.allSatisfy({ byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }) else { return nil }
        }
        return name.lowercased()
    }
}
