/// A NAT64 prefix a network announced (RFC 6052 formats, RFC 8781 PREF64, RFC 7050 DNS64):
/// the IPv6 prefix under which its translator reaches every IPv4 address, and where reachd
/// learnt it. Held per link by `NAT64PrefixStore`.
public struct NAT64Prefix: Sendable, Hashable {
    /// How a prefix was learnt.
    public enum Source: String, Sendable, Hashable, Codable, CaseIterable {
        /// A router advertisement's PREF64 option (RFC 8781).
        case routerAdvertisement
        /// The network's DNS64 resolver, asked for `ipv4only.arpa` (RFC 7050).
        case dns64
    }

    /// The prefix lengths RFC 6052 section 2.2 defines.
    public static let lengths: Set<Int> = [32, 40, 48, 56, 64, 96]

    /// The well-known prefix 64:ff9b::/96 (RFC 6052 section 2.1), as DNS64 resolvers commonly use it.
    public static let wellKnown = NAT64Prefix(address: .v6([0, 0x64, 0xFF, 0x9B] + [UInt8](repeating: 0, count: 12)), length: 96, source: .dns64)!

    /// The prefix's 16 bytes; every bit past `length` is zero.
    public let bytes: [UInt8]
    /// 32, 40, 48, 56, 64 or 96.
    public let length: Int
    /// Where reachd learnt it.
    public var source: Source

    /// A prefix of `length` bits of `address` (the rest is cleared); nil when `address` is
    /// not IPv6 or the length is not one RFC 6052 defines.
    public init?(address: IPAddress, length: Int, source: Source) {
        guard case let .v6(bytes) = address, Self.lengths.contains(length) else { return nil }
        self.bytes = bytes.enumerated().map { $0.offset < length / 8 ? $0.element : 0 }
        self.length = length
        self.source = source
    }

    /// Parses `2001:db8::/96` text; nil for anything `init(address:length:source:)` refuses,
    /// and for set bits past the length (a typo, not a prefix).
    public init?(_ text: some StringProtocol, source: Source) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].count <= 2, parts[1].allSatisfy({ $0.isASCII && $0.isWholeNumber }),
              let length = Int(parts[1]), let address = IPAddress(parts[0]),
              let prefix = NAT64Prefix(address: address, length: length, source: source),
              prefix.bytes == address.bytes else { return nil }
        self = prefix
    }

    /// The prefix as an address (`64:ff9b::`).
    public var address: IPAddress { .v6(bytes) }

    /// RFC 6052 section 2.2: the IPv6 address through which this prefix's translator
    /// reaches `ipv4`. The IPv4 bytes follow the prefix, skipping bits 64–71 (the "u"
    /// octet, always zero); the suffix is zero. Nil when `ipv4` is not IPv4.
    public func synthesize(_ ipv4: IPAddress) -> IPAddress? {
        guard case let .v4(a, b, c, d) = ipv4 else { return nil }
        var result = bytes
        for (index, byte) in Self.ipv4Positions(length: length).enumerated() {
            result[byte] = [a, b, c, d][index]
        }
        return .v6(result)
    }

    /// The IPv4 address `ipv6` embeds under this prefix (the inverse of `synthesize`);
    /// nil when `ipv6` is not under the prefix or its u octet is not zero.
    public func extract(_ ipv6: IPAddress) -> IPAddress? {
        guard case let .v6(address) = ipv6, Array(address[0..<(length / 8)]) == Array(bytes[0..<(length / 8)]) else { return nil }
        if length != 96, address[8] != 0 { return nil }
        return IPAddress(bytes: Self.ipv4Positions(length: length).map { address[$0] })
    }

    /// The byte offsets that hold the IPv4 address's four bytes for a prefix of `length`.
    private static func ipv4Positions(length: Int) -> [Int] {
        if length == 96 { return [12, 13, 14, 15] }
        // Four consecutive octets after the prefix, with octet 8 (bits 64–71) skipped.
        return Array(((length / 8)..<16).filter { $0 != 8 }.prefix(4))
    }
}

extension NAT64Prefix: CustomStringConvertible {
    /// `64:ff9b::/96`.
    public var description: String { "\(address)/\(length)" }
}

extension NAT64Prefix: Codable {
    private enum CodingKeys: String, CodingKey { case prefix, source }

    /// Decodes `{"prefix": "64:ff9b::/96", "source": "routerAdvertisement"}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let text = try container.decode(String.self, forKey: .prefix)
        let source = try container.decode(Source.self, forKey: .source)
        guard let prefix = NAT64Prefix(text, source: source) else {
            throw DecodingError.dataCorruptedError(forKey: .prefix, in: container, debugDescription: "not a NAT64 prefix: \(text)")
        }
        self = prefix
    }

    /// Encodes as the prefix text and its source.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(description, forKey: .prefix)
        try container.encode(source, forKey: .source)
    }
}

/// The NAT64 prefixes each link's network announced, with their expiry, and the rules for
/// what each announcement does. Pure: the caller gives the time. A link's prefixes are
/// what its network said, so a link that goes down forgets them (`forget`).
///
/// A link carries its router-advertised prefixes when it has any, else those DNS64 gave:
/// a router's PREF64 is the network's own word and wins over the RFC 7050 heuristic.
package struct NAT64PrefixStore: Sendable, Hashable {
    /// One prefix held for a link.
    package struct Entry: Sendable, Hashable {
        /// The prefix and its source.
        package var prefix: NAT64Prefix
        /// When it lapses; nil when it holds until its source withdraws it or the link goes down.
        package var expiry: ContinuousClock.Instant?

        /// An entry.
        package init(prefix: NAT64Prefix, expiry: ContinuousClock.Instant?) {
            self.prefix = prefix
            self.expiry = expiry
        }
    }

    /// What one announcement did.
    package enum Outcome: Sendable, Hashable {
        /// A new prefix for the link.
        case added
        /// A lifetime of zero took a held prefix away.
        case withdrawn
        /// A held prefix got a new expiry; nothing anyone sees changed.
        case refreshed
        /// Nothing: a withdrawal of a prefix not held.
        case unchanged
        /// The link holds `maximumPerSource` prefixes of this source already: ignored.
        case refused
    }

    /// The most prefixes a link holds from one source (a network may announce several, a
    /// flood of distinct ones must not grow the state).
    package static let maximumPerSource = 4

    private var entries: [Int32: [Entry]] = [:]

    /// An empty store.
    package init() {}

    /// Applies an announcement of `prefix` on `link` at `now`, valid for `lifetime` (nil:
    /// until withdrawn or the link goes down; zero: withdraw it now, RFC 8781 section 4).
    @discardableResult
    package mutating func learn(_ prefix: NAT64Prefix, lifetime: Duration?, on link: Int32, now: ContinuousClock.Instant) -> Outcome {
        var held = entries[link] ?? []
        defer { entries[link] = held.isEmpty ? nil : held }
        let index = held.firstIndex { $0.prefix == prefix }
        if lifetime == .zero {
            guard let index else { return .unchanged }
            held.remove(at: index)
            return .withdrawn
        }
        let expiry = lifetime.map { now + $0 }
        if let index {
            held[index].expiry = expiry
            return .refreshed
        }
        guard held.count(where: { $0.prefix.source == prefix.source }) < Self.maximumPerSource else { return .refused }
        held.append(Entry(prefix: prefix, expiry: expiry))
        return .added
    }

    /// Drops what `source` gave `link` (DNS64 no longer applies there); whether it held any.
    @discardableResult
    package mutating func withdraw(_ source: NAT64Prefix.Source, on link: Int32) -> Bool {
        guard let held = entries[link], held.contains(where: { $0.prefix.source == source }) else { return false }
        let kept = held.filter { $0.prefix.source != source }
        entries[link] = kept.isEmpty ? nil : kept
        return true
    }

    /// Drops the prefixes whose expiry is at or before `now`; whether any went.
    @discardableResult
    package mutating func expire(now: ContinuousClock.Instant) -> Bool {
        var changed = false
        for (link, held) in entries {
            let kept = held.filter { entry in entry.expiry.map { $0 > now } ?? true }
            guard kept.count != held.count else { continue }
            changed = true
            entries[link] = kept.isEmpty ? nil : kept
        }
        return changed
    }

    /// Forgets everything `link` held (it went down, lost carrier or is gone); whether it held any.
    @discardableResult
    package mutating func forget(_ link: Int32) -> Bool {
        entries.removeValue(forKey: link) != nil
    }

    /// The earliest expiry of any held prefix; nil when none expires (no timer needed).
    package var nextExpiry: ContinuousClock.Instant? {
        var earliest: ContinuousClock.Instant?
        for held in entries.values {
            for case let expiry? in held.lazy.map(\.expiry) where earliest.map({ expiry < $0 }) ?? true { earliest = expiry }
        }
        return earliest
    }

    /// The entries `link` holds, in the order they were learnt.
    package func entries(on link: Int32) -> [Entry] { entries[link] ?? [] }

    /// The prefixes `link` carries: its router-advertised ones, else its DNS64 ones.
    package func prefixes(on link: Int32) -> [NAT64Prefix] {
        let held = entries[link]?.map(\.prefix) ?? []
        let announced = held.filter { $0.source == .routerAdvertisement }
        return announced.isEmpty ? held : announced
    }

    /// `prefixes(on:)` of every link that carries any.
    package var prefixesByLink: [Int32: [NAT64Prefix]] {
        entries.keys.reduce(into: [:]) { result, link in result[link] = prefixes(on: link) }
    }
}

/// The kernel's answer for an IPv4 address's RFC 6052 address under a link's NAT64 prefix:
/// how traffic to that IPv4 address would go on a network that has no IPv4 of its own.
package struct NAT64Lookup: Sendable, Hashable {
    /// The prefix the address was synthesized under.
    package var prefix: NAT64Prefix
    /// The synthesized IPv6 address.
    package var address: IPAddress
    /// What the kernel answered for it.
    package var route: RouteLookup

    /// Pairs a synthesized address with its lookup.
    package init(prefix: NAT64Prefix, address: IPAddress, route: RouteLookup) {
        self.prefix = prefix
        self.address = address
        self.route = route
    }

    /// The lookup to judge `ipv4` by through NAT64: each link's prefixes are tried in index
    /// order, and the first whose synthesized address the kernel routes out of that same link
    /// wins (its network runs the translator; a VPN that takes IPv6 elsewhere does not). Nil
    /// when `ipv4` is not IPv4, no link carries a prefix, or none is routed out of its link.
    package static func choose(for ipv4: IPAddress, prefixes: [Int32: [NAT64Prefix]], lookup: (IPAddress) -> RouteLookup) -> NAT64Lookup? {
        guard ipv4.family == .ipv4 else { return nil }
        for link in prefixes.keys.sorted() {
            for prefix in prefixes[link] ?? [] {
                guard let address = prefix.synthesize(ipv4) else { continue }
                let found = NAT64Lookup(prefix: prefix, address: address, route: lookup(address))
                if case let .route(result) = found.route, result.outputInterface == link { return found }
            }
        }
        return nil
    }
}

extension NetworkSnapshot {
    /// The lookup of a monitored target as the snapshot holds it, with its NAT64 lookup.
    package func targetLookup(_ key: TargetKey) -> TargetLookup? {
        targets[key].map { TargetLookup(key, route: $0, nat64: nat64Targets[key]) }
    }
}
