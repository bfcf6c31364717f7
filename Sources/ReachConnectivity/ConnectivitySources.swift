import Logging
import NIOCore
import ReachabilityCore
import ReachConfiguration
import ReachTargets

/// What the network and the sources outside the kernel say of each link for one snapshot,
/// and how it is written into the connectivity table. Pure: `ConnectivityMonitor` merges
/// with it at every `update`.
struct SourceFacts: Equatable {
    /// The captive-portal API URI each link's network announced: RA option 37 first, then
    /// systemd-networkd.
    var announced: [Int32: String] = [:]
    /// What NetworkManager says of each link, by interface index.
    var managed: [Int32: NetworkManagerDevice] = [:]
    /// The links whose DHCP server said `ANDROID_METERED`.
    var metered: Set<Int32> = []

    /// The facts for `links`: an index the links lack is left out.
    init(links: [Int32: Link], routerAdvertisements: [Int32: String], networkd: [Int32: String],
         networkManager: [String: NetworkManagerDevice], dhcpMetered: Set<Int32>) {
        announced = routerAdvertisements
        // Nothing known from a source: the common case costs nothing more.
        if !networkd.isEmpty {
            announced.merge(networkd.filter { links[$0.key] != nil }) { fromRA, _ in fromRA }
        }
        if !networkManager.isEmpty {
            for link in links.values { managed[link.index] = networkManager[link.name] }
        }
        metered = dhcpMetered.filter { links[$0] != nil }
    }

    /// Nothing announced, managed or metered.
    var isEmpty: Bool { announced.isEmpty && managed.isEmpty && metered.isEmpty }

    /// `table` with these facts written in, and without the links `links` lacks. A link
    /// whose announced API changed (or went) loses what the old one said: another API is
    /// another network.
    func merged(into table: ConnectivityTable, links: [Int32: Link]) -> ConnectivityTable {
        var next = table
        for index in Set(next.keys).union(announced.keys).union(managed.keys).union(metered) {
            var facts = next[index] ?? InterfaceConnectivity()
            if facts.captivePortal?.apiURI != announced[index] {
                facts.captivePortal = announced[index].map { CaptivePortal(apiURI: $0) }
            }
            facts.networkManager = managed[index]
            facts.dhcpMetered = metered.contains(index)
            next[index] = facts == InterfaceConnectivity() ? nil : facts
        }
        for index in next.keys where links[index] == nil { next[index] = nil }
        return next
    }
}

/// The sources of facts outside the kernel, each a carrier of its own: systemd-networkd's
/// captive portals (`NetworkdPortalSource`), NetworkManager (`NetworkManagerSource`) and
/// the DHCP leases (`DHCPLeaseSource`). Lives on the event loop.
final class ConnectivitySources {
    private let networkd: NetworkdPortalSource
    private let networkManager: NetworkManagerSource
    private let leases: DHCPLeaseSource

    /// Sources as `settings` configure them; networkd's answers and the leases are read on `work`.
    init(settings: ConnectivitySettings, eventLoop: any EventLoop, logger: Logger, work: BlockingWork) {
        networkd = NetworkdPortalSource(socket: settings.captivePortal.networkd ? settings.networkdSocket : nil, work: work)
        networkManager = NetworkManagerSource(isEnabled: settings.readsNetworkManager, eventLoop: eventLoop, logger: logger)
        leases = DHCPLeaseSource(files: settings.dhcpLeases, eventLoop: eventLoop, logger: logger, work: work)
    }

    /// Called on the loop when a source's answer arrived: the facts may have changed.
    var onChange: () -> Void {
        get { networkd.onChange }
        set { (networkd.onChange, networkManager.onChange, leases.onChange) = (newValue, newValue, newValue) }
    }

    /// The kernel's view changed: networkd is asked and the leases are read when it
    /// changed what they answer for.
    func update(_ snapshot: NetworkSnapshot) {
        networkd.update(snapshot)
        leases.update(snapshot)
    }

    /// What the sources say of `snapshot`'s links, with `routerAdvertisements`' portals first.
    func facts(for snapshot: NetworkSnapshot, routerAdvertisements: [Int32: String]) -> SourceFacts {
        SourceFacts(links: snapshot.links, routerAdvertisements: routerAdvertisements, networkd: networkd.portals,
                    networkManager: networkManager.devices, dhcpMetered: leases.metered)
    }

    /// Starts following NetworkManager (`NetworkManagerSource.start`).
    func startReadingNetworkManager() { networkManager.start() }

    /// The machine woke: what may have changed while it slept is read again (the leases).
    func woke() { leases.woke() }

    /// Ends the watches (reachd stops, or the settings are replaced).
    func stop() {
        networkManager.stop()
        leases.stop()
    }
}
