/// The source address a target's traffic would leave with, and whether it can carry it.
/// Pure; the target's own rule, apart from the system path's (which wants an address that
/// reaches the internet).
///
/// The kernel names the source it would use in its FIB answer (`RTA_PREFSRC`): that address
/// counts when the snapshot holds it (on any interface: Linux is weak-host) and it is
/// neither still tentative (DAD running, unless optimistic) nor DAD-failed. A link-local
/// source (169.254/16, fe80::/10, or link scope) counts only towards a link-local
/// destination or one on the link itself (no gateway): a host with only a link-local
/// address still reaches its router's own global address on the link, never a host behind
/// the router. When the kernel names no source, an address of the output interface that
/// passes the same rule counts.
package enum TargetSource {
    /// What the rule found.
    package enum Choice: Sendable, Hashable {
        /// The kernel's preferred source, which can carry the traffic.
        case preferred(IPAddress)
        /// The kernel named none; an address of the output interface can carry it.
        case interfaceAddress
        /// No address the kernel would use can carry it (`noAddress`).
        case none
    }

    /// The source for traffic to `destination` leaving by `outputInterface` (`onLink`: the
    /// route has no gateway), given the kernel's `preferred` source and every address held.
    package static func choose(
        for destination: IPAddress, onLink: Bool, outputInterface: Int32, preferred: IPAddress?, addresses: [InterfaceAddress]
    ) -> Choice {
        let mayBeLinkLocal = onLink || destination.isLinkLocal
        func usable(_ candidate: InterfaceAddress) -> Bool {
            guard candidate.family == destination.family, candidate.scope != .host, candidate.scope != .nowhere,
                  !candidate.address.isLoopback, !candidate.flags.contains(.dadFailed),
                  !candidate.flags.contains(.tentative) || candidate.flags.contains(.optimistic)
            else { return false }
            return mayBeLinkLocal || !(candidate.address.isLinkLocal || candidate.scope == .link)
        }
        if let preferred {
            return addresses.contains { $0.address == preferred && usable($0) } ? .preferred(preferred) : .none
        }
        return addresses.contains { $0.interfaceIndex == outputInterface && usable($0) } ? .interfaceAddress : .none
    }
}
