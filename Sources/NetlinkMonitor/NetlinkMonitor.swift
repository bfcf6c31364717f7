// NetlinkMonitor: the kernel side of reachd, and the only module that calls libnl.
//
// Two rtnetlink sockets (events; dumps and FIB lookups), datagrams read here, messages
// parsed by libnl-route without any libnl cache. Only links, addresses, default routes and
// the neighbour entries of their gateways are tracked; the answer per family is asked of the kernel. No timers and no threads: the
// owner polls `eventDescriptor`, then calls `drain()` and `snapshot()`. Why, and the rules
// kept here: docs/DESIGN.md rules 1-6 and "The kernel side in more detail".
//
// Over 500 lines because it is one class, the owner of both sockets and the tracked state,
// which its dumps, drain, gateway reads and snapshots share; the rules they apply are in
// files of their own (TrackedState, GatewayFollowing, MonitorLifecycle).

import CNetlink
import Glibc
import LinuxSystem
import ReachabilityCore
import SystemPackage

/// Watches rtnetlink for link, address, route and rule changes and answers with
/// `NetworkSnapshot`s built from tracked links, addresses and default routes plus
/// fresh FIB lookups.
///
/// Not `Sendable`: one thread owns it (the daemon's engine thread), polls
/// `eventDescriptor`, then calls `drain()` and `snapshot()`.
package final class NetlinkMonitor {
    /// Where the FIB is asked about per family: 8.8.8.8 and 2001:4860:4860::8888.
    /// Only looked up, never contacted.
    package static let defaultLookupTargets: [AddressFamily: IPAddress] = [
        .ipv4: .v4(8, 8, 8, 8),
        .ipv6: IPAddress("2001:4860:4860::8888")!,
    ]

    /// Dump rounds an initial sync or resync may take before it settles.
    static let maxSyncRounds = 5
    /// Attempts per dump when the kernel keeps marking it interrupted.
    static let maxDumpAttempts = 10
    /// Datagrams one `drain()` reads at most; the rest wait for the next poll.
    static let maxDatagramsPerDrain = 1 << 16
    /// The multicast groups the event socket joins.
    static let groups: [rtnetlink_groups] = [
        RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR,
        RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE, RTNLGRP_IPV4_RULE, RTNLGRP_IPV6_RULE,
        // RA options the kernel hands to userspace: RFC 8910's captive-portal URI.
        RTNLGRP_ND_USEROPT,
        // Neighbour entries: only the watched gateways' pass the filter (`RouteEventFilter`).
        RTNLGRP_NEIGH,
    ]
    private let events: NetlinkSocket
    private let requests: NetlinkSocket
    private let sysfs: SysfsDeviceFacts
    private let lookupTargets: [AddressFamily: IPAddress]
    private var state = TrackedState()
    /// Subscribed yet, started yet, routes still to read, resyncs so far.
    private var lifecycle = MonitorLifecycle()
    /// What the installed route-event filter lets through, besides the gateways.
    private var watched = WatchedDestinations()
    /// The gateways' neighbour entries, and what the filter lets through about them.
    private var gateways = GatewayFollowing()
    /// How often RA options may change what is tracked, per link.
    private var announcements: AnnouncementAdmission

    /// Resyncs so far (the initial sync is not counted): after lost events, and each
    /// `resynchronize()` or repeated `start()`.
    package var resyncCount: Int { lifecycle.resyncCount }

    /// Opens and configures both sockets; nothing is subscribed or dumped until `start()`.
    ///
    /// - Parameters:
    ///   - sysfsRoot: where sysfs is mounted (device facts come from `class/net/IF`).
    ///   - receiveBufferSize: the event socket's kernel receive buffer in bytes.
    ///   - lookupTargets: the destination looked up per family in `snapshot()`.
    ///   - announcementBudget: how often RA options may change a link's tracked state.
    package init(
        sysfsRoot: String = "/sys", receiveBufferSize: Int = 8 << 20,
        lookupTargets: [AddressFamily: IPAddress] = NetlinkMonitor.defaultLookupTargets,
        announcementBudget: AnnouncementLimiter<String?>.Configuration = .routerAdvertisements
    ) throws(NetlinkError) {
        announcements = AnnouncementAdmission(budget: announcementBudget)
        events = try NetlinkSocket(role: "event", blocking: false)
        requests = try NetlinkSocket(role: "request", blocking: true)
        try events.setReceiveBufferSize(receiveBufferSize)
        sysfs = SysfsDeviceFacts(root: sysfsRoot)
        self.lookupTargets = lookupTargets
    }

    /// The event socket: poll it for input, then call `drain()`.
    package var eventDescriptor: FileDescriptor { events.descriptor }

    /// Subscribes to the multicast groups (first call only), then dumps links, addresses
    /// and default routes (the initial sync). A later call resyncs.
    ///
    /// With `deferringRoutes`, only links and addresses are dumped: snapshots then say the
    /// routes of both families are pending, until `readRoutes(of:)` or `finishStart()`.
    package func start(deferringRoutes: Bool = false) throws(NetlinkError) {
        if lifecycle.phase == .unsubscribed {
            // The filter first, so no irrelevant route event is ever queued.
            try installRouteFilter()
            try events.join(Self.groups)
            lifecycle.subscribed()
        }
        lifecycle.starting()
        if deferringRoutes {
            var fresh = TrackedState(announcedCaptivePortals: state.announcedCaptivePortals, nat64Prefixes: state.nat64Prefixes)
            try apply([.links, .addresses], to: &fresh)
            state = fresh
            lifecycle.started(pendingRoutes: Set(AddressFamily.allCases))
        } else {
            _ = try synchronize()
            lifecycle.started(pendingRoutes: [])
        }
    }

    /// Dumps the default routes of `families` that a deferred start left pending.
    package func readRoutes(of families: Set<AddressFamily>) throws(NetlinkError) {
        for family in AddressFamily.allCases where families.contains(family) && lifecycle.pendingRouteFamilies.contains(family) {
            try apply([.routes(family)], to: &state)
            lifecycle.routesRead(family)
        }
    }

    /// Ends a deferred start: dumps the routes still pending, then drains the event
    /// socket, and when it held tracked-state events (they may predate the dumps) syncs
    /// again from scratch, as `start()` does. Nothing to do after a complete start.
    ///
    /// The answer was already published, so events lost meanwhile (ENOBUFS) are what they
    /// are in `drain()`: counted as a resync and reported in the outcome.
    @discardableResult
    package func finishStart() throws(NetlinkError) -> DrainOutcome {
        let pending = lifecycle.pendingRouteFamilies
        guard !pending.isEmpty else { return DrainOutcome() }
        try readRoutes(of: pending)
        let (stale, lost, removed) = try drainAfterDump()
        var outcome = DrainOutcome(changed: true, resynchronizedAfterLostEvents: lost, removedDefaultRoutes: Set(removed))
        guard stale else { return outcome }
        if lost { lifecycle.resynchronizing() }
        outcome.removedDefaultRoutes.formUnion(try synchronize())
        return outcome
    }

    /// Reads everything readable now (at most `maxDatagramsPerDrain` datagrams) without
    /// blocking and applies it; resyncs by itself when events were lost (ENOBUFS).
    ///
    /// - Throws: a read error other than EAGAIN / ENOBUFS, or a failed resync; call
    ///   `resynchronize()` (with backoff) before trusting the state again.
    package func drain() throws(NetlinkError) -> DrainOutcome {
        var outcome = DrainOutcome()
        for _ in 0..<Self.maxDatagramsPerDrain {
            let reception = try events.receive { message in
                outcome.events += 1
                let parsed = MessageParser.parse(message)
                guard parsed.isRelevant else { return }
                if let news = applyUndumped(parsed) {
                    if news { outcome.changed = true }
                    return
                }
                outcome.changed = true
                if parsed.touchesTrackedState { outcome.removedDefaultRoutes.formUnion(apply(parsed)) }
            }
            switch reception {
            case .datagram:
                continue
            case .drained:
                return outcome
            case .eventsLost:
                // The kernel dropped events: start over from dumps.
                outcome.changed = true
                outcome.resynchronizedAfterLostEvents = true
                outcome.removedDefaultRoutes.formUnion(try resynchronize())
                return outcome
            }
        }
        return outcome
    }

    /// When an RA option held over its link's budget may be applied, or a NAT64 prefix
    /// lapses (`releaseHeldAnnouncements(now:)`); nil when nothing is held or expires.
    package var nextAnnouncementRelease: ContinuousClock.Instant? {
        announcements.nextRelease(in: state)
    }

    /// Applies the held RA options whose link has budget again at `now` and drops the
    /// NAT64 prefixes that lapsed; whether any of it changed the tracked state (take a
    /// snapshot then). A link that went down meanwhile (a resync may have seen it without
    /// an event) keeps nothing of its old network.
    package func releaseHeldAnnouncements(now: ContinuousClock.Instant) -> Bool {
        announcements.release(now: now, to: &state)
    }

    /// Adds a NAT64 prefix another source learnt for `link` (DNS64: lifetime nil holds it
    /// until withdrawn or the link goes down; zero withdraws it). Whether what the link
    /// carries changed (take a snapshot then). Ignored for a link not up with carrier.
    package func learnNAT64Prefix(_ prefix: NAT64Prefix, lifetime: Duration?, on link: Int32, now: ContinuousClock.Instant) -> Bool {
        guard state.isConnected(link) else { return false }
        return state.learn(prefix, lifetime: lifetime, on: link, now: now)
    }

    /// Drops the NAT64 prefixes `source` gave `link`; whether what the link carries changed.
    package func withdrawNAT64Prefixes(_ source: NAT64Prefix.Source, on link: Int32) -> Bool {
        let before = state.nat64Prefixes.prefixes(on: link)
        state.nat64Prefixes.withdraw(source, on: link)
        return state.nat64Prefixes.prefixes(on: link) != before
    }

    /// The NAT64 prefixes each link holds, with their expiries.
    package var nat64Prefixes: NAT64PrefixStore { state.nat64Prefixes }

    /// Refits the route-event filter when the prefixes links carry changed since it was
    /// installed (before a snapshot's lookups, so no event about a synthesized address is
    /// dropped after its lookup). A failed refit keeps every event (`installRouteFilter`).
    private func refitForNAT64Prefixes() {
        guard watched.follow(state.nat64Prefixes.prefixesByLink) else { return }
        try? installRouteFilter()
    }

    /// The next snapshot reads the gateways' neighbour entries again (the machine woke: the
    /// kernel may have aged them while it slept).
    package func rereadGateways() {
        gateways.forgetFilter()
    }

    /// Dumps links, addresses and default routes again into a fresh state (after
    /// `drain()` threw, or whenever the owner no longer trusts the state).
    ///
    /// - Returns: the default routes no longer tracked afterwards (see
    ///   `DrainOutcome.removedDefaultRoutes`).
    @discardableResult
    package func resynchronize() throws(NetlinkError) -> Set<DefaultRoute> {
        lifecycle.resynchronizing()
        return try synchronize()
    }

    /// The tracked links, addresses and default routes, plus a fresh FIB lookup per
    /// family. `hasNameserver` is left false; the daemon fills it in.
    ///
    /// While a deferred start has routes pending, each pending family's default routes
    /// are only the one its lookup matched, if that is a default.
    package func snapshot() -> NetworkSnapshot {
        refitForNAT64Prefixes()
        let pending = lifecycle.pendingRouteFamilies
        guard !pending.isEmpty else {
            var snapshot = state.snapshot()
            for (family, target) in lookupTargets {
                snapshot.lookups[family] = lookup(target)
            }
            followGateways(of: &snapshot)
            return snapshot
        }
        var known = state
        for (family, target) in lookupTargets where pending.contains(family) {
            if let matched = FIBLookup.matchedRoute(target, on: requests), case .defaultRoute = matched {
                _ = known.apply(matched) { _ in DeviceFacts() }
            }
        }
        var snapshot = known.snapshot()
        for (family, target) in lookupTargets {
            snapshot.lookups[family] = lookup(target)
        }
        snapshot.pendingRouteFamilies = pending
        followGateways(of: &snapshot)
        return snapshot
    }

    // MARK: Gateways

    /// Follows the neighbour entries of the gateways `snapshot` names and hands them on,
    /// installing the filters and reading the entries `GatewayFollowing` asks for.
    private func followGateways(of snapshot: inout NetworkSnapshot) {
        var step = gateways.follow(used: GatewayNeighbours.watched(in: snapshot))
        while step != .fitted {
            // A filter that cannot be installed is replaced by one keeping every event.
            try? installRouteFilter()
            guard case let .refit(unread) = step else { break }
            for key in unread {
                if let state = readNeighbour(key) { gateways.record(key, state, now: Int(time(nil))) }
            }
            step = gateways.nextStep()
        }
        snapshot.gatewayNeighbours = gateways.usedEntries
    }

    /// The kernel's entry for one gateway now (RTM_GETNEIGH of that address on that
    /// interface): its state, `.some(nil)` when there is none, nil when the kernel did not say.
    private func readNeighbour(_ key: GatewayKey) -> NeighbourState?? {
        var found: NeighbourState?
        let answer = try? requests.request(type: Int32(RTM_GETNEIGH), flags: NLM_F_REQUEST) { (request) throws(NetlinkError) in
            var header = ndmsg()
            header.ndm_family = UInt8(key.address.family == .ipv4 ? AF_INET : AF_INET6)
            header.ndm_ifindex = key.interfaceIndex
            try request.append(header)
            try request.put(Int32(NDA_DST), key.address.bytes)
        } answer: { message in
            if case let .neighbour(_, state) = MessageParser.parse(message) { found = state }
        }
        switch answer {
        case .complete?: return .some(found)
        case .failed(.noSuchFileOrDirectory)?: return .some(nil)
        default: return nil
        }
    }

    /// Lets route events through when their prefix covers one of `addresses` (besides the
    /// lookup targets, always watched): the addresses the owner looks up with every
    /// snapshot. Replaces the previous set. Events dropped before the call are not
    /// replayed: look the new addresses up afterwards.
    package func watch(_ addresses: Set<IPAddress>) throws(NetlinkError) {
        guard watched.watch(addresses) else { return }
        try installRouteFilter()
    }

    /// Installs the route-event filter for the lookup targets and `watched`, with each
    /// watched IPv4 address's RFC 6052 addresses under the prefixes links carry (its answer
    /// may go through them); when the program would be too long for the kernel, one that
    /// keeps every event.
    private func installRouteFilter() throws(NetlinkError) {
        let program = RouteEventFilter.program(watching: watched.destinations(lookupTargets: lookupTargets.values), gateways: gateways.filter)
            ?? RouteEventFilter.keepEverything
        do {
            try events.descriptor.attachSocketFilter(program)
        } catch {
            // The old filter would drop events about the new addresses: better every event.
            try? events.descriptor.attachSocketFilter(RouteEventFilter.keepEverything)
            throw NetlinkError(operation: "SO_ATTACH_FILTER(event)", errno: error)
        }
    }

    /// One FIB lookup for `destination`, what `ip route get` does. No packet is sent.
    ///
    /// The kernel's answer for a resolved destination does not carry RTNH_F_LINKDOWN,
    /// so `isLinkDown` is also set when the tracked output link has no carrier, which
    /// is exactly when the kernel flags the route's next hop linkdown.
    /// With `uid`, the kernel applies that user's rules (`ip rule … uidrange`).
    package func lookup(_ destination: IPAddress, uid: UInt32? = nil) -> RouteLookup {
        lookup(destination, uid: uid, outputInterface: nil)
    }

    /// A lookup out of `outputInterface` (`RTA_OIF`) when given.
    private func lookup(_ destination: IPAddress, uid: UInt32?, outputInterface: Int32?) -> RouteLookup {
        let answer = FIBLookup.lookup(destination, uid: uid, outputInterface: outputInterface, on: requests)
        guard case .route(var result) = answer, !result.isLinkDown,
              let link = state.links[result.outputInterface], !link.carrier else { return answer }
        result.isLinkDown = true
        return .route(result)
    }

    /// The FIB lookup for one target address, as `lookup(_:uid:)`; a scoped one
    /// (`fe80::1%eth0`) out of its interface, found by name among the tracked links. A
    /// scope that names no link is answered `lookupFailed` without asking the kernel
    /// (`TargetDerivation` then says `noInterface`).
    package func lookup(_ key: TargetKey) -> RouteLookup {
        guard let scope = key.interface else { return lookup(key.address, uid: key.uid) }
        guard let index = TargetDerivation.interfaceIndex(named: scope, in: state.links) else {
            return .failure(.lookupFailed("no interface named \(UntrustedText.escaped(scope))"))
        }
        return lookup(key.address, uid: key.uid, outputInterface: index)
    }

    // MARK: Sync

    /// Applies one message; returns the default routes it took away.
    private func apply(_ parsed: ParsedMessage) -> [DefaultRoute] {
        let sysfs = self.sysfs
        announcements.void(by: parsed)
        return state.apply(parsed) { sysfs.facts(for: $0) }
    }

    /// Dumps everything into a fresh state, then drains the event socket; repeats
    /// while the drain saw events about tracked state (they may predate the dump).
    /// Returns the default routes taken away: tracked before and not after, or removed
    /// by an event drained in between.
    private func synchronize() throws(NetlinkError) -> Set<DefaultRoute> {
        let before = state
        lifecycle.synchronizing()
        // Events about gateways may have been lost too: the next snapshot reads them again.
        gateways.forgetFilter()
        var removed = Set<DefaultRoute>()
        for _ in 0..<Self.maxSyncRounds {
            // Router advertisements cannot be dumped: what they announced is carried over.
            var fresh = TrackedState(announcedCaptivePortals: state.announcedCaptivePortals, nat64Prefixes: state.nat64Prefixes)
            try apply([.links, .addresses, .routes(nil)], to: &fresh)
            state = fresh
            let (stale, _, drained) = try drainAfterDump()
            removed.formUnion(drained)
            if !stale { break }
        }
        return removed.union(TrackedState.defaultRoutes(in: before, missingFrom: state))
    }

    /// Reads the event socket dry, applying what it holds. `stale` if it held
    /// tracked-state events or overflowed (`lost`), i.e. the dump must be repeated;
    /// `removed`, the default routes those events took away.
    private func drainAfterDump() throws(NetlinkError) -> (stale: Bool, lost: Bool, removed: [DefaultRoute]) {
        var stale = false
        var removed: [DefaultRoute] = []
        while true {
            let reception = try events.receive { message in
                let parsed = MessageParser.parse(message)
                // Neither gateways' entries nor RAs are dumped, so they cannot make a dump stale.
                if applyUndumped(parsed) != nil { return }
                if parsed.touchesTrackedState {
                    stale = true
                    removed += apply(parsed)
                }
            }
            switch reception {
            case .datagram: continue
            case .drained: return (stale, false, removed)
            case .eventsLost: return (true, true, removed)
            }
        }
    }

    /// Takes what no dump holds, for both drains: a watched gateway's neighbour entry and a
    /// router advertisement's option. nil when `parsed` is something else; else whether it
    /// is news.
    private func applyUndumped(_ parsed: ParsedMessage) -> Bool? {
        switch parsed {
        case let .neighbour(key, reported):
            return gateways.event(key, reported, now: Int(time(nil)))
        case let .captivePortal(announcement):
            // Only an applied change is news: a repeat or a held one changes nothing yet.
            return announcements.admit(announcement, to: &state, now: .now)
        case let .pref64(announcement):
            return announcements.admit(announcement, to: &state, now: .now)
        default:
            return nil
        }
    }

    /// Applies what these dumps hold to `tracked`, in order.
    private func apply(_ requests: [Dump], to tracked: inout TrackedState) throws(NetlinkError) {
        let sysfs = self.sysfs
        for request in requests {
            for parsed in try dump(request) {
                tracked.apply(parsed) { sysfs.facts(for: $0) }
            }
        }
    }

    /// What a dump asks for: the request type and its zeroed family header (AF_UNSPEC,
    /// no filters; routes of one family when given).
    private enum Dump {
        case links, addresses, routes(AddressFamily?)

        var name: String {
            switch self {
            case .links: "RTM_GETLINK"
            case .addresses: "RTM_GETADDR"
            case let .routes(family): "RTM_GETROUTE" + (family.map { " (\($0))" } ?? "")
            }
        }

        var type: Int32 {
            switch self {
            case .links: Int32(RTM_GETLINK)
            case .addresses: Int32(RTM_GETADDR)
            case .routes: Int32(RTM_GETROUTE)
            }
        }

        func appendHeader(to request: inout NetlinkRequest) throws(NetlinkError) {
            switch self {
            case .links: try request.append(ifinfomsg())
            case .addresses: try request.append(ifaddrmsg())
            case let .routes(family):
                var header = rtmsg()
                if let family { header.rtm_family = UInt8(family == .ipv4 ? AF_INET : AF_INET6) }
                try request.append(header)
            }
        }
    }

    /// One complete, consistent dump: the messages that touch tracked state
    /// (non-default routes are dropped at their header). Retried while the kernel marks
    /// it interrupted or fails it with EINTR / EBUSY.
    private func dump(_ request: Dump) throws(NetlinkError) -> [ParsedMessage] {
        for _ in 0..<Self.maxDumpAttempts {
            var collected: [ParsedMessage] = []
            let answer = try requests.request(type: request.type, flags: NLM_F_REQUEST | NLM_F_DUMP) { (message) throws(NetlinkError) in
                try request.appendHeader(to: &message)
            } answer: { message in
                let parsed = MessageParser.parse(message)
                if parsed.touchesTrackedState { collected.append(parsed) }
            }
            switch answer {
            case .complete:
                return collected
            case .interrupted, .failed(.interrupted), .failed(.resourceBusy):
                continue
            case .failed(let errno):
                throw NetlinkError(operation: "dump \(request.name)", errno: errno)
            }
        }
        throw NetlinkError(operation: "dump \(request.name)", libnlCode: NLE_DUMP_INTR)
    }
}

/// What one `NetlinkMonitor.drain()` did.
package struct DrainOutcome: Sendable, Equatable {
    /// Something arrived that may change the answer (link/address/route/rule event, or a resync).
    package var changed: Bool
    /// Set when events were lost (ENOBUFS) and the state was re-dumped.
    package var resynchronizedAfterLostEvents: Bool
    /// The default routes the batch took out of the tracked state: named by RTM_DELROUTE,
    /// displaced by NLM_F_REPLACE, flushed with their link or its last IPv4 address
    /// (just the hops through it), or gone after a resync. Also when the same batch added
    /// them back. A lookup may still see them for a moment (docs/DESIGN.md rule 6): hand them to
    /// `LookupRecheck` with the snapshot taken after the batch.
    package var removedDefaultRoutes: Set<DefaultRoute>
    /// Kernel messages read from the event socket, relevant or not.
    package var events: Int

    /// Creates an outcome; by default nothing happened.
    package init(changed: Bool = false, resynchronizedAfterLostEvents: Bool = false, removedDefaultRoutes: Set<DefaultRoute> = [], events: Int = 0) {
        self.changed = changed
        self.resynchronizedAfterLostEvents = resynchronizedAfterLostEvents
        self.removedDefaultRoutes = removedDefaultRoutes
        self.events = events
    }
}
