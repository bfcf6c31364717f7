import Logging
import NIOCore
import ReachabilityCore
import ReachTargets

/// When the DHCP leases are read again and which read's answer counts. Pure:
/// `DHCPLeaseSource` carries it out.
struct DHCPLeaseReads: Equatable {
    /// The interfaces whose DHCP server said `ANDROID_METERED`, by the latest answer applied.
    private(set) var metered: Set<Int32> = []
    /// The IPv4 addresses the leases were last read for: a lease comes with one, so only
    /// their change reads again (a carrier flap or an IPv6 address does not).
    private var readFor: [InterfaceAddress]?
    /// The reads started: only the latest one's answer is applied.
    private var started = 0
    /// `stop()` ran: nothing is read or watched again.
    private(set) var isStopped = false

    /// The kernel's addresses are now `addresses`: whether to read the leases (and watch
    /// their directories), which is when the IPv4 ones changed since the last read.
    mutating func addressesChanged(_ addresses: [InterfaceAddress]) -> Bool {
        let ipv4 = addresses.filter { $0.family == .ipv4 }
        if isStopped || readFor == ipv4 { return false }
        readFor = ipv4
        return true
    }

    /// A read starts: its number, to hand to `readFinished`; nil once stopped.
    mutating func readStarting() -> Int? {
        guard !isStopped else { return nil }
        started += 1
        return started
    }

    /// Read number `read` found `metered`: the interfaces that are newly metered when its
    /// answer is applied (possibly none); nil when it is not, because a later read started
    /// since (its answer, from newer files and addresses, decides) or nothing changed.
    mutating func readFinished(_ read: Int, metered answer: Set<Int32>) -> Set<Int32>? {
        guard read == started, answer != metered else { return nil }
        defer { metered = answer }
        return answer.subtracting(metered)
    }

    /// reachd stops, or the settings are replaced.
    mutating func stop() { isStopped = true }
}

/// What the DHCP servers said through option 43 `ANDROID_METERED` (`DHCPLeaseFiles`): the
/// lease files read on `BlockingWork` when the IPv4 addresses changed and whenever
/// `DHCPLeaseWatch` sees a lease written (a client may write it after it set the address);
/// `DHCPLeaseReads` decides. Lives on the event loop.
final class DHCPLeaseSource {
    private let files: DHCPLeaseFiles
    private let eventLoop: any EventLoop
    private let logger: Logger
    private let work: BlockingWork
    private var reads = DHCPLeaseReads()
    /// Tells when a lease was written (started with the first read); nil once stopped.
    private var watch: DHCPLeaseWatch?
    /// The kernel's latest links and addresses: what a read the watch wakes reads for.
    private var latest: (links: [Int32: Link], addresses: [InterfaceAddress])?
    /// Called on the loop when a read changed `metered`.
    var onChange: () -> Void = {}

    /// A source reading `files` on `work`.
    init(files: DHCPLeaseFiles, eventLoop: any EventLoop, logger: Logger, work: BlockingWork) {
        self.files = files
        self.eventLoop = eventLoop
        self.logger = logger
        self.work = work
    }

    /// The interfaces whose DHCP server said `ANDROID_METERED`.
    var metered: Set<Int32> { reads.metered }

    /// The kernel's view changed: reads the leases, off the loop, when the IPv4 addresses
    /// changed since (a lease counts only while its address is held).
    func update(_ snapshot: NetworkSnapshot) {
        latest = (snapshot.links, snapshot.addresses)
        guard reads.addressesChanged(snapshot.addresses) else { return }
        watchLeases()
        read()
    }

    /// The machine woke: the leases are read again (a client may have renewed, or lost, its
    /// lease as it woke, before the addresses say so).
    func woke() {
        guard latest != nil else { return }
        read()
    }

    /// Ends the watch; no read starts again.
    func stop() {
        watch?.stop()
        watch = nil
        reads.stop()
    }

    /// Starts the lease watch the first time; later, has it watch directories that appeared.
    private func watchLeases() {
        guard !reads.isStopped else { return }
        if let watch { return watch.rewatch() }
        let lost = { [weak self] (error: any Error) -> Void in
            self?.logger.error("the DHCP lease directories cannot be watched: leases are read when the addresses change only",
                               metadata: ["reason": "\(error)"])
        }
        watch = try? DHCPLeaseWatch(files, eventLoop: eventLoop, changed: { [weak self] in self?.read() }, lost: lost)
    }

    private func read() {
        guard let latest, let number = reads.readStarting() else { return }
        let (files, links, addresses) = (files, latest.links, latest.addresses)
        work.run { files.meteredInterfaces(links, addresses: addresses) }.assumeIsolated().whenSuccess { [self] metered in
            guard let newly = reads.readFinished(number, metered: metered) else { return }
            for index in newly.sorted() {
                let name = self.latest?.links[index]?.name ?? "\(index)"
                logger.info("the network's DHCP server says ANDROID_METERED", metadata: ["interface": "\(name)"])
            }
            onChange()
        }
    }
}
