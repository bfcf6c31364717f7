import NetlinkMonitor
import ReachabilityCore

extension KernelView {
    /// The lookup for a target and, for an unscoped IPv4 address while some link carries a
    /// NAT64 prefix, the lookup of its RFC 6052 address (`NAT64Lookup.choose`), made with the
    /// same uid: `TargetDerivation` answers through it when IPv4 itself cannot reach.
    func targetLookup(_ key: TargetKey, nat64Prefixes: [Int32: [NAT64Prefix]]) -> TargetLookup {
        let nat64 = key.interface == nil && !nat64Prefixes.isEmpty
            ? NAT64Lookup.choose(for: key.address, prefixes: nat64Prefixes) { lookup($0, uid: key.uid) }
            : nil
        return TargetLookup(key, route: lookup(key), nat64: nat64)
    }
}
