import ReachabilityCore

/// The destinations whose route events the route-event filter lets through: the lookup
/// targets, the addresses the owner looks up with every snapshot (`NetlinkMonitor.watch`), and
/// each watched IPv4 address's RFC 6052 addresses under the NAT64 prefixes links carry (its
/// answer may go through them). Pure: says when the filter must be refitted and for what.
package struct WatchedDestinations {
    /// The addresses the owner looks up with every snapshot.
    private(set) var addresses: Set<IPAddress> = []
    /// The NAT64 prefixes each link carried when the filter was last fitted.
    private(set) var nat64Prefixes: [Int32: [NAT64Prefix]] = [:]

    /// Watches nothing but the lookup targets.
    package init() {}

    /// Replaces the watched addresses; whether the filter must be refitted.
    package mutating func watch(_ addresses: Set<IPAddress>) -> Bool {
        guard addresses != self.addresses else { return false }
        self.addresses = addresses
        return true
    }

    /// Takes the NAT64 prefixes links carry now; whether the filter must be refitted.
    package mutating func follow(_ prefixes: [Int32: [NAT64Prefix]]) -> Bool {
        guard prefixes != nat64Prefixes else { return false }
        nat64Prefixes = prefixes
        return true
    }

    /// Every destination the filter watches, `lookupTargets` included.
    package func destinations(lookupTargets: some Sequence<IPAddress>) -> Set<IPAddress> {
        let synthesized = nat64Prefixes.values.joined().flatMap { prefix in addresses.compactMap(prefix.synthesize) }
        return addresses.union(lookupTargets).union(synthesized)
    }
}
