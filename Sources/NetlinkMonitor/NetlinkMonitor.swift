// NetlinkMonitor: the kernel side of reachd.
//
// Design (in the spirit of GLib's gnetworkmonitornetlink.c; every rule below was
// learned from a bug in a peer):
//
// * Two rtnetlink sockets. The EVENT socket joins RTNLGRP_LINK, RTNLGRP_IPV{4,6}_IFADDR,
//   RTNLGRP_IPV{4,6}_ROUTE and RTNLGRP_IPV{4,6}_RULE; it is non-blocking, has no sequence
//   checking, a large receive buffer (SO_RCVBUFFORCE when we may) and a message buffer
//   that fits any datagram. The REQUEST socket is blocking and carries dumps and FIB
//   lookups; answers are matched by sequence number and stale ones are skipped.
//
// * Never mirror the routing table (DESIGN rule 1). Only links, addresses and DEFAULT
//   routes (rtm_dst_len == 0, every table, every type incl. blackhole / unreachable /
//   prohibit) are tracked. A route message is judged by its raw `struct rtmsg` before
//   anything else is parsed; any other route only means "re-evaluate", so a flood of
//   100k route events costs two loads per message and memory never grows with the FIB.
//   No libnl cache is ever used.
//
// * Ask the kernel (rule 2). The answer per family is a fresh RTM_GETROUTE for a
//   well-known internet address, honouring `ip rule` and every table. NLMSG_ERROR
//   answers are read raw (libnl's mapping loses ENETUNREACH / EHOSTUNREACH):
//   ENETUNREACH no route, EHOSTUNREACH unreachable, EINVAL blackhole, EACCES prohibit.
//   IPv6 on older kernels answers reject routes with the route itself: its rtm_type
//   is mapped the same way (see FIBLookup.swift).
//
// * Silent kernel flushes (rule 3). Setting a link admin-down, or removing its last
//   IPv4 address, flushes its IPv4 routes without RTM_DELROUTE: the monitor drops
//   the IPv4 default routes through it itself. RTM_DELLINK (also a move to another
//   namespace) drops the link, its addresses and every default route through it.
//   RTNH_F_LINKDOWN also changes silently, and a lookup's answer never carries it: a
//   next hop's (and a lookup's) linkdown follows its output link's carrier, the
//   condition under which the kernel sets the flag.
//
// * Initial sync and resync: subscribe FIRST, then dump links, addresses and routes
//   (routes: every message's header is read, only defaults are kept). Events queued
//   before or during the dump may be older than the dump, so after it the event
//   socket is drained; if it held link / address / default-route events, everything
//   is dumped again (at most `maxSyncRounds` rounds). Dumps marked NLM_F_DUMP_INTR
//   are retried.
//
// * ENOBUFS on the event socket (libnl: -NLE_NOMEM) means events were lost (rule 4):
//   resync as above, count it in `resyncCount`, and report a change. -NLE_AGAIN means
//   drained; anything else is thrown.
//
// * No timers, no threads. The owner polls `eventFileDescriptor`, calls `drain()`,
//   then `snapshot()` once per drained batch (rule 5).

import CNetlink
import SystemPackage
import ReachabilityCore

/// Watches rtnetlink for link, address, route and rule changes and answers with
/// `NetworkSnapshot`s built from tracked links, addresses and default routes plus
/// fresh FIB lookups.
///
/// Not `Sendable`: one thread owns it (the daemon's engine thread), polls
/// `eventFileDescriptor`, then calls `drain()` and `snapshot()`.
public final class NetlinkMonitor {
    /// Where the FIB is asked about per family: 8.8.8.8 and 2001:4860:4860::8888.
    /// Only looked up, never contacted.
    public static let defaultLookupTargets: [AddressFamily: IPAddress] = [
        .ipv4: .v4(8, 8, 8, 8),
        .ipv6: IPAddress("2001:4860:4860::8888")!,
    ]

    /// Dump rounds an initial sync or resync may take before it settles.
    static let maxSyncRounds = 5
    /// Attempts per dump when the kernel keeps marking it interrupted.
    static let maxDumpAttempts = 10
    /// Datagrams one `drain()` reads at most; the rest wait for the next poll.
    static let maxDatagramsPerDrain = 1 << 16

    private let events: NetlinkSocket
    private let requests: NetlinkSocket
    private let sysfs: SysfsDeviceFacts
    private let lookupTargets: [AddressFamily: IPAddress]
    private var state = TrackedState()
    private var started = false

    /// How many resyncs ENOBUFS (lost events) forced so far.
    public private(set) var resyncCount = 0

    /// Opens and configures both sockets; nothing is subscribed or dumped until `start()`.
    ///
    /// - Parameters:
    ///   - sysfsRoot: where sysfs is mounted (device facts come from `class/net/IF`).
    ///   - receiveBufferSize: the event socket's kernel receive buffer in bytes.
    ///   - lookupTargets: the destination looked up per family in `snapshot()`.
    public init(
        sysfsRoot: String = "/sys", receiveBufferSize: Int = 8 << 20,
        lookupTargets: [AddressFamily: IPAddress] = NetlinkMonitor.defaultLookupTargets
    ) throws(NetlinkError) {
        events = try NetlinkSocket(role: "event", blocking: false)
        requests = try NetlinkSocket(role: "request", blocking: true)
        try events.setReceiveBufferSize(receiveBufferSize)
        sysfs = SysfsDeviceFacts(root: sysfsRoot)
        self.lookupTargets = lookupTargets
    }

    /// The event socket's file descriptor: poll it for POLLIN, then call `drain()`.
    public var eventFileDescriptor: Int32 { events.fileDescriptor }

    /// Subscribes to the multicast groups, then performs the initial sync. Calling it
    /// again only resyncs.
    public func start() throws(NetlinkError) {
        if !started {
            try events.join(Kernel.groups)
            started = true
        }
        try synchronize()
    }

    /// Reads everything readable now without blocking and applies it. Returns true
    /// if anything that may affect the answer arrived (a link, address, route or rule
    /// event, or a resync after lost events).
    public func drain() throws(NetlinkError) -> DrainOutcome {
        var relevant = false
        var lost = false
        events.receiver.expect(nil)
        events.receiver.handler = { [unowned self] message in
            let parsed = MessageParser.parse(message)
            guard parsed.isRelevant else { return }
            relevant = true
            if parsed.touchesTrackedState { apply(parsed) }
        }
        defer { events.receiver.handler = { _ in } }
        for _ in 0..<Self.maxDatagramsPerDrain {
            let result = events.receiveOnce()
            if result >= 0 { continue }
            if result == -Int32(NLE_AGAIN) { break }
            if result == -Int32(NLE_NOMEM) {
                // ENOBUFS: the kernel dropped events. Start over from dumps.
                resyncCount += 1
                relevant = true
                lost = true
                try synchronize()
                break
            }
            throw NetlinkError(operation: "nl_recvmsgs(event)", libnlCode: result)
        }
        return DrainOutcome(changed: relevant, resynchronizedAfterLostEvents: lost)
    }

    /// Dumps everything again (after `drain()` threw).
    public func resynchronize() throws(NetlinkError) {
        resyncCount += 1
        try synchronize()
    }

    /// The event socket as a descriptor to poll.
    public var eventDescriptor: FileDescriptor { FileDescriptor(rawValue: events.fileDescriptor) }

    /// The tracked links, addresses and default routes, plus a fresh FIB lookup per
    /// family. `hasNameserver` is left false; the daemon fills it in.
    public func snapshot() -> NetworkSnapshot {
        var snapshot = state.snapshot()
        for (family, target) in lookupTargets {
            snapshot.lookups[family] = lookup(target)
        }
        return snapshot
    }

    /// One FIB lookup for `destination`, what `ip route get` does. No packet is sent.
    ///
    /// The kernel's answer for a resolved destination does not carry RTNH_F_LINKDOWN,
    /// so `isLinkDown` is also set when the tracked output link has no carrier, which
    /// is exactly when the kernel flags the route's next hop linkdown.
    public func lookup(_ destination: IPAddress) -> RouteLookup {
        let answer = FIBLookup.lookup(destination, on: requests)
        guard case .route(var result) = answer, !result.isLinkDown,
              let link = state.links[result.outputInterface], !link.carrier else { return answer }
        result.isLinkDown = true
        return .route(result)
    }

    // MARK: Sync

    private func apply(_ parsed: ParsedMessage) {
        let sysfs = self.sysfs
        state.apply(parsed) { sysfs.facts(for: $0) }
    }

    /// Dumps everything into a fresh state, then drains the event socket; repeats
    /// while the drain saw events about tracked state (they may predate the dump).
    private func synchronize() throws(NetlinkError) {
        for _ in 0..<Self.maxSyncRounds {
            var fresh = TrackedState()
            let sysfs = self.sysfs
            for request in [Kernel.getLink, Kernel.getAddress, Kernel.getRoute] {
                for parsed in try dump(request) {
                    fresh.apply(parsed) { sysfs.facts(for: $0) }
                }
            }
            state = fresh
            if try !drainAfterDump() { return }
        }
    }

    /// Reads the event socket dry, applying what it holds. True if it held tracked-state
    /// events or overflowed, i.e. the dump must be repeated.
    private func drainAfterDump() throws(NetlinkError) -> Bool {
        var stale = false
        events.receiver.expect(nil)
        events.receiver.handler = { [unowned self] message in
            let parsed = MessageParser.parse(message)
            if parsed.touchesTrackedState {
                stale = true
                apply(parsed)
            }
        }
        defer { events.receiver.handler = { _ in } }
        while true {
            let result = events.receiveOnce()
            if result >= 0 { continue }
            if result == -Int32(NLE_AGAIN) { return stale }
            if result == -Int32(NLE_NOMEM) { return true }
            throw NetlinkError(operation: "nl_recvmsgs(event)", libnlCode: result)
        }
    }

    /// One complete, consistent dump of `type` for all families: the messages that
    /// touch tracked state (non-default routes are dropped at their header).
    private func dump(_ type: UInt16) throws(NetlinkError) -> [ParsedMessage] {
        for _ in 0..<Self.maxDumpAttempts {
            let sequence = try requests.send(type: type, flags: Kernel.flagRequest | Kernel.flagDump) { (message) throws(NetlinkError) in
                // A zeroed family header of the right size: AF_UNSPEC, no filters.
                let size = switch type {
                case Kernel.getLink: Kernel.ifinfomsgLength
                case Kernel.getAddress: Kernel.ifaddrmsgLength
                default: Kernel.rtmsgLength
                }
                let header = [UInt8](repeating: 0, count: size)
                let result = header.withUnsafeBytes {
                    nlmsg_append(message, UnsafeMutableRawPointer(mutating: $0.baseAddress), size, Int32(NLMSG_ALIGNTO))
                }
                if result < 0 { throw NetlinkError(operation: "build dump request", libnlCode: result) }
            }
            var collected: [ParsedMessage] = []
            try requests.awaitAnswer(to: sequence) { message in
                let parsed = MessageParser.parse(message)
                if parsed.touchesTrackedState { collected.append(parsed) }
            }
            if let errno = requests.receiver.kernelErrno {
                if errno == 4 /* EINTR */ || errno == 16 /* EBUSY */ { continue }
                throw NetlinkError(operation: "dump \(type)", errno: errno)
            }
            if !requests.receiver.interrupted { return collected }
        }
        throw NetlinkError(operation: "dump \(type)", libnlCode: -Int32(NLE_DUMP_INTR))
    }
}

/// What one `drain()` did.
public struct DrainOutcome: Sendable, Equatable {
    /// Something arrived that may change the answer.
    public var changed: Bool
    /// Events were lost (ENOBUFS) and the state was re-dumped.
    public var resynchronizedAfterLostEvents: Bool
}
