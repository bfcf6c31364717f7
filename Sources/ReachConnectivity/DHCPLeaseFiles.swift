import LinuxSystem
import ReachabilityCore

/// Reads the leases DHCP clients keep, for `DHCPLeases`: systemd-networkd's
/// `leases/IFINDEX` and ISC dhclient's `dhclient*.leases` (ifupdown's `dhclient.IF.leases`).
/// World-readable files, so no privilege; read only when links or addresses change (a lease
/// comes with an address), off the loop. NetworkManager's own DHCP guess arrives over D-Bus
/// (`Metered` guess-yes); dhcpcd and udhcpc keep nothing reachd reads (docs/untrusted-networks.md).
package struct DHCPLeaseFiles: Sendable, Equatable {
    /// systemd-networkd's lease directory.
    package var networkd = "/run/systemd/netif/leases"
    /// ISC dhclient's lease directory.
    package var dhclient = "/var/lib/dhcp"

    /// Files read at most per directory: a host with more leases lying around is no laptop.
    static let fileLimit = 32

    /// The defaults.
    package init() {}

    /// The interfaces of `links` whose lease in use (its address is among `addresses`) came
    /// from a DHCP server that sent `ANDROID_METERED`.
    package func meteredInterfaces(_ links: [Int32: Link], addresses: [InterfaceAddress]) -> Set<Int32> {
        var metered: Set<Int32> = []
        let dhclientFiles = ((try? FileSystem.names(in: dhclient)) ?? [])
            .filter { $0.hasPrefix("dhclient") && $0.hasSuffix(".leases") }.sorted().prefix(Self.fileLimit)
        let dhclientTexts = dhclientFiles.compactMap { read("\(dhclient)/\($0)") }
        for (index, link) in links {
            let held = addresses.filter { $0.interfaceIndex == index && $0.family == .ipv4 }.map(\.address)
            guard !held.isEmpty else { continue }
            let networkdLease = read("\(networkd)/\(index)").flatMap { DHCPLeases.networkdLease($0[...]) }
            let dhclientLeases = dhclientTexts.compactMap { DHCPLeases.dhclientLease($0[...], interface: link.name) }
            if ([networkdLease].compactMap { $0 } + dhclientLeases).contains(where: { $0.isMetered(holding: held) }) { metered.insert(index) }
        }
        return metered
    }

    private func read(_ path: String) -> String? {
        (try? FileSystem.contents(of: path, limit: DHCPLeases.textLimit)).map { String(decoding: $0, as: UTF8.self) }
    }
}
