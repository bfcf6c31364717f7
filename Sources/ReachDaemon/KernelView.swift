import NetlinkMonitor
import ReachabilityCore
import SystemPackage

/// What the engine needs from the kernel side: `NetlinkMonitor`, or a stand-in that
/// tests script (the engine's timing decisions can then be tested without a kernel).
protocol KernelView: AnyObject {
    /// Readable when `drain()` has something to read.
    var eventDescriptor: SystemPackage.FileDescriptor { get }
    /// Resyncs so far, for the log.
    var resyncCount: Int { get }
    /// Applies everything queued.
    func drain() throws(NetlinkError) -> DrainOutcome
    /// Starts over from dumps; returns the default routes no longer tracked.
    func resynchronize() throws(NetlinkError) -> Set<DefaultRoute>
    /// Reads the default routes of these families, which a deferred start left pending.
    func readRoutes(of families: Set<AddressFamily>) throws(NetlinkError)
    /// Reads every route still pending and settles the state; says what it took away and
    /// whether events were lost meanwhile, as `drain()` does.
    func finishStart() throws(NetlinkError) -> DrainOutcome
    /// The tracked state plus fresh FIB lookups.
    func snapshot() -> NetworkSnapshot
    /// One FIB lookup, with a user's rules when `uid` is given.
    func lookup(_ destination: IPAddress, uid: UInt32?) -> RouteLookup
    /// The lookup for a target: a scoped address out of its interface.
    func lookup(_ key: TargetKey) -> RouteLookup
    /// Route events about these addresses (besides the well-known lookup targets) must
    /// reach `drain()`; others may be dropped before they are queued.
    func watch(_ addresses: Set<IPAddress>) throws(NetlinkError)
    /// When an RA option held over its link's budget may be applied or a NAT64 prefix lapses; nil: neither.
    var nextAnnouncementRelease: ContinuousClock.Instant? { get }
    /// The host's TCP sockets (sock_diag), at most `limit`, attributed by `addresses`.
    func readSockets(addresses: [InterfaceAddress], limit: Int) throws(NetlinkError) -> TCPSocketDiagnostics.Reading
    /// Opens a watch on the TCP sockets the kernel destroys (sock_diag's destroy broadcast);
    /// closed when released.
    func openDestroyWatch() throws(NetlinkError) -> any DestroyedSocketWatch
    /// A Wi-Fi interface's station (nl80211): its signal and transmit bit rate; nil when not associated.
    func readStation(interfaceIndex: Int32) throws(NetlinkError) -> WirelessStation?
    /// Applies the held RA options now due and drops lapsed NAT64 prefixes; whether the tracked state changed.
    func releaseHeldAnnouncements(now: ContinuousClock.Instant) -> Bool
    /// Adds a NAT64 prefix learnt for `link` (nil lifetime: until withdrawn or the link goes
    /// down); whether what the link carries changed.
    func learnNAT64Prefix(_ prefix: NAT64Prefix, lifetime: Duration?, on link: Int32, now: ContinuousClock.Instant) -> Bool
    /// Drops the NAT64 prefixes `source` gave `link`; whether what the link carries changed.
    func withdrawNAT64Prefixes(_ source: NAT64Prefix.Source, on link: Int32) -> Bool
    /// The gateways' neighbour entries are read again with the next snapshot (after a sleep).
    func rereadGateways()
}

extension KernelView {
    var nextAnnouncementRelease: ContinuousClock.Instant? { nil }
    func releaseHeldAnnouncements(now: ContinuousClock.Instant) -> Bool { false }
    func learnNAT64Prefix(_ prefix: NAT64Prefix, lifetime: Duration?, on link: Int32, now: ContinuousClock.Instant) -> Bool { false }
    func withdrawNAT64Prefixes(_ source: NAT64Prefix.Source, on link: Int32) -> Bool { false }
    func lookup(_ key: TargetKey) -> RouteLookup { lookup(key.address, uid: key.uid) }
    func rereadGateways() {}
    func readSockets(addresses: [InterfaceAddress], limit: Int) throws(NetlinkError) -> TCPSocketDiagnostics.Reading {
        try TCPSocketDiagnostics.read(addresses: addresses, limit: limit)
    }
    func openDestroyWatch() throws(NetlinkError) -> any DestroyedSocketWatch {
        try TCPSocketDiagnostics.DestroyWatch()
    }
    func readStation(interfaceIndex: Int32) throws(NetlinkError) -> WirelessStation? {
        try WirelessStationInfo.read(interfaceIndex: interfaceIndex)
    }
}

/// The TCP sockets destroyed since the last drain: `TCPSocketDiagnostics.DestroyWatch`, or a
/// test's stand-in.
protocol DestroyedSocketWatch: AnyObject {
    /// What was destroyed since the last drain, at most `limit`, attributed by `addresses`.
    func drain(addresses: [InterfaceAddress], limit: Int) throws(NetlinkError) -> TCPSocketDiagnostics.Destroyed
}

extension TCPSocketDiagnostics.DestroyWatch: DestroyedSocketWatch {}

extension NetlinkMonitor: KernelView {}
