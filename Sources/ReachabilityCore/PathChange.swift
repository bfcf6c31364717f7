/// What changed between two published answers, so an app can decide whether to
/// reconnect (the way Tailscale's ChangeDelta tells "default interface changed" from
/// "nothing that matters").
public enum PathChange: String, Sendable, Hashable, Codable, CaseIterable {
    /// satisfied / unsatisfied / requiresConnection, or the reason, changed.
    case status
    /// The AFNetworking-style reachability changed.
    case reachability
    /// Traffic leaves by another interface.
    case primaryInterface
    /// The gateways changed.
    case gateways
    /// IPv4 became usable or stopped being usable, natively, through a NAT64 (`ipv4ViaNAT64`)
    /// or a CLAT (`ipv4ProvidedBy`).
    case ipv4
    /// IPv6 became usable or stopped being usable.
    case ipv6
    /// The primary interface gained or lost a usable address.
    case addresses
    /// DNS configuration availability changed.
    case dns
    /// Expensive or constrained changed.
    case cost
    /// SCNetworkReachability flags changed.
    case flags
    /// The ordered list of usable interfaces changed.
    case availableInterfaces
    /// Connectivity (the probes' verdict) or the captive-portal facts changed.
    case connectivity
    /// The link-quality class changed (not its estimates, which move often).
    case linkQuality

    /// The changes from `old` to `new`; `oldAddresses`/`newAddresses` are the usable
    /// addresses of each side's primary interface. Empty when nothing in the answer changed.
    package static func between(
        _ old: Path, addresses oldAddresses: Set<IPAddress>,
        and new: Path, addresses newAddresses: Set<IPAddress>
    ) -> [PathChange] {
        var changes: [PathChange] = []
        if old.status != new.status || old.unsatisfiedReason != new.unsatisfiedReason { changes.append(.status) }
        if old.reachability != new.reachability { changes.append(.reachability) }
        if old.primaryInterface != new.primaryInterface || old.primaryInterfaceType != new.primaryInterfaceType {
            changes.append(.primaryInterface)
        }
        if old.gateways != new.gateways { changes.append(.gateways) }
        if old.supportsIPv4 != new.supportsIPv4 || old.ipv4ViaNAT64 != new.ipv4ViaNAT64 || old.ipv4ProvidedBy != new.ipv4ProvidedBy {
            changes.append(.ipv4)
        }
        if old.supportsIPv6 != new.supportsIPv6 { changes.append(.ipv6) }
        if oldAddresses != newAddresses { changes.append(.addresses) }
        if old.supportsDNS != new.supportsDNS { changes.append(.dns) }
        if old.isExpensive != new.isExpensive || old.expensiveReason != new.expensiveReason || old.isConstrained != new.isConstrained { changes.append(.cost) }
        if old.flags != new.flags { changes.append(.flags) }
        if old.availableInterfaces != new.availableInterfaces { changes.append(.availableInterfaces) }
        if old.connectivity != new.connectivity || old.captivePortal != new.captivePortal || old.connectivityCause != new.connectivityCause {
            changes.append(.connectivity)
        }
        if old.linkQuality != new.linkQuality { changes.append(.linkQuality) }
        return changes
    }
}

extension NetworkSnapshot {
    /// The usable internet addresses of the named interface (the primary one, usually).
    package func usableAddresses(ofInterfaceNamed name: String?) -> Set<IPAddress> {
        guard let name, let link = links.values.first(where: { $0.name == name }) else { return [] }
        return Set(addresses(of: link.index).filter(\.isUsableForInternet).map(\.address))
    }
}
