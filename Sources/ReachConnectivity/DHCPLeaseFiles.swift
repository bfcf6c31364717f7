import Glibc
import LinuxSystem
import NIOCore
import ReachabilityCore
import SystemPackage

/// Reads the leases DHCP clients keep, for `DHCPLeases`: systemd-networkd's
/// `leases/IFINDEX`, ISC dhclient's `dhclient*.leases` (ifupdown's `dhclient.IF.leases`) and
/// what reachd's dhcpcd hook (packaging/dhcpcd-hook) writes, `IFNAME` in networkd's format.
/// World-readable files, so no privilege; read off the loop when the IPv4 addresses change
/// and when `DHCPLeaseWatch` sees a lease written. NetworkManager's own DHCP guess arrives over
/// D-Bus (`Metered` guess-yes); dhcpcd's own lease files are root's alone and udhcpc keeps none
/// (docs/untrusted-networks.md).
package struct DHCPLeaseFiles: Sendable, Equatable {
    /// systemd-networkd's lease directory.
    package var networkd = "/run/systemd/netif/leases"
    /// ISC dhclient's lease directory.
    package var dhclient = "/var/lib/dhcp"
    /// Where reachd's dhcpcd hook writes (`/usr/lib/dhcpcd/dhcpcd-hooks/90-reachd`).
    package var hook = "/run/reachd-leases"

    /// Files read at most per directory: a host with more leases lying around is no laptop.
    static let fileLimit = 32

    /// The directories `DHCPLeaseWatch` watches.
    package var directories: [String] { [networkd, dhclient, hook] }

    /// Whether an entry of those directories is a lease reachd reads: networkd's `IFINDEX`
    /// (not its `.#…` temporary file), dhclient's `dhclient*.leases` or the hook's `IFNAME`
    /// (not its `.IFNAME.…` temporary file). The watch merges the directories' names, so
    /// another name fit for an interface wakes a read too, which finds nothing new.
    package static func isLease(_ name: String) -> Bool {
        (!name.isEmpty && name.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
            || (name.hasPrefix("dhclient") && name.hasSuffix(".leases")) || isInterfaceName(name)
    }

    /// Whether `name` can be an interface's, so a file name in a directory: 1 to 15 bytes,
    /// no `/`, not starting with `.`.
    package static func isInterfaceName(_ name: String) -> Bool {
        (1...15).contains(name.utf8.count) && !name.hasPrefix(".") && !name.utf8.contains(UInt8(ascii: "/"))
    }

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
            // Named by a link that exists, never by a directory's entry.
            let hookLease = Self.isInterfaceName(link.name) ? read("\(hook)/\(link.name)").flatMap { DHCPLeases.networkdLease($0[...]) } : nil
            let dhclientLeases = dhclientTexts.compactMap { DHCPLeases.dhclientLease($0[...], interface: link.name) }
            if ([networkdLease, hookLease].compactMap { $0 } + dhclientLeases).contains(where: { $0.isMetered(holding: held) }) { metered.insert(index) }
        }
        return metered
    }

    private func read(_ path: String) -> String? {
        (try? FileSystem.contents(of: path, limit: DHCPLeases.textLimit)).map { String(decoding: $0, as: UTF8.self) }
    }
}

/// Says when a lease file may have changed: an inotify watch of the lease directories on the
/// event loop (`LoopReadiness`), asleep in its epoll while nothing changes (no timer, no
/// system call). A client may write its lease after it set the address (dhclient does), so
/// the read that follows an address change can come too early; this read comes after the
/// write. Lives on the event loop.
package final class DHCPLeaseWatch {
    private let directories: [String]
    private let eventLoop: any EventLoop
    private let inotify: DirectoryWatch
    private var readiness: LoopReadiness?
    /// Runs `changed` once a burst of events settled.
    private var settling: Scheduled<Void>?
    private var changed: (() -> Void)?

    /// A burst of writes (a client rewriting its whole file) is told once, this long after
    /// its first event.
    static let settle: Duration = .milliseconds(50)

    /// Watches `files.directories` from `eventLoop`; `changed` is called there after a lease
    /// (`DHCPLeaseFiles.isLease`) was written, renamed in or removed, and `lost` if the watch
    /// cannot go on (then nothing more is heard).
    package init(_ files: DHCPLeaseFiles, eventLoop: any EventLoop, changed: @escaping () -> Void,
                 lost: @escaping (any Error) -> Void) throws(Errno) {
        (directories, self.eventLoop, self.changed) = (files.directories, eventLoop, changed)
        inotify = try DirectoryWatch()
        let failed = { [weak self] (error: any Error) -> Void in
            self?.stop()
            lost(error)
        }
        readiness = try LoopReadiness(inotify.descriptor, eventLoop: eventLoop, ready: { [weak self] _ in self?.drain() }, failed: failed)
        rewatch()
        readiness?.request(Int16(POLLIN))
    }

    /// Ends the watch at once.
    package func stop() {
        readiness?.close()
        readiness = nil
        settling?.cancel()
        settling = nil
        changed = nil
    }

    /// Watches the directories that did not exist when last tried (a client installed or
    /// started since); a directory watched already costs one inotify_add_watch(2).
    package func rewatch() {
        for directory in directories { _ = try? inotify.add(directory, watching: .entriesAndWrites) }
    }

    private func drain() {
        let events = inotify.drain()
        readiness?.request(Int16(POLLIN))
        // Unnamed: events were lost or a directory went; a lease may have changed.
        guard settling == nil, events.unnamed || events.names.contains(where: DHCPLeaseFiles.isLease) else { return }
        settling = eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(Self.settle)) { [weak self] in
            self?.settling = nil
            self?.changed?()
        }
    }
}
