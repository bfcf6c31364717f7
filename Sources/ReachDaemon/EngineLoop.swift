import Glibc
import NIOCore
import NetlinkMonitor
import ReachServer
import ReachabilityCore
import ReachTargets

/// What woke the engine, gathered by its loop before anything is decided.
struct EngineWakeUp {
    /// When `poll(2)` returned.
    var now: ContinuousClock.Instant
    /// The signals taken from the signal descriptor, in arrival order.
    var signals: [Int32] = []
    /// The commands taken from the mailbox, oldest first.
    var commands: [EngineCommand] = []
    /// What reading the netlink event socket found; nil when it was not readable.
    var netlink: NetlinkRead?
    /// What draining the resolver watch found; nil when it was not readable.
    var resolverFiles: ResolverFilesRead?
    /// An event in the socket's directory may concern the socket file.
    var socketFileMayBeGone = false
    /// When an RA option held over its link's budget may be applied (nil: none held).
    var heldAnnouncementsDue: ContinuousClock.Instant?
}

/// What the engine read from the netlink event socket (or, at start, the routes it had
/// left for later).
enum NetlinkRead: Equatable {
    /// Everything queued was applied.
    case drained(DrainOutcome)
    /// The read failed: the tracked state can no longer be trusted.
    case failed
}

/// What the engine found when the resolver watch was readable: its events drained and,
/// when they concerned the files, the files read again.
enum ResolverFilesRead: Equatable {
    /// What the files say did not change (or the events were about other entries).
    case unchanged
    /// The files say something new, but not about whether a server is configured (another
    /// server, say): only the DNS64 discovery asks again.
    case rewritten
    /// What the files say changed.
    case changed
}

/// How a resync the loop asked for ended.
enum ResyncOutcome: Equatable {
    /// The state was dumped again; these default routes are no longer tracked.
    case resynchronized(removed: Set<DefaultRoute>)
    /// It failed, for this reason.
    case failed(String)
}

/// What the IO a wake-up's first actions asked for found out.
struct EngineOutcomes {
    /// When the IO was done.
    var now: ContinuousClock.Instant
    /// A reload's re-read of the resolver files changed what they say.
    var resolverChanged = false
    /// A reload's re-read of the resolver files found new text that changes no answer (`ResolverFilesRead.rewritten`).
    var resolverRewritten = false
    /// The outcome of `.resynchronize`, if asked for.
    var resync: ResyncOutcome?
    /// `.releaseHeldAnnouncements` changed the tracked state.
    var announcementsReleased = false
    /// `.learnDNS64` changed the NAT64 prefixes a link carries.
    var nat64Changed = false
    /// The interface policy a reload applied (nil: none, or unchanged).
    var policy: InterfacePolicy?
}

/// What the engine does, in order, for one wake-up.
enum EngineAction: Equatable {
    /// SIGTERM or SIGINT: return this signal.
    case stop(signal: Int32)
    /// Stop for good with this reason.
    case fail(String)
    /// Answer a command that will never be carried out (the engine stops first).
    case abandon(EngineCommand)
    /// Reload the configuration (a client's reply, or nil for SIGHUP), then re-read the
    /// resolver files and report whether they changed (`EngineOutcomes.resolverChanged`).
    case reload(reply: EventLoopPromise<ReloadOutcome>?)
    /// Look these targets up now and answer.
    case lookUp([TargetKey], reply: EventLoopPromise<[TargetLookup]>)
    /// Let route events about these addresses through the kernel-side filter.
    case watch(Set<IPAddress>)
    /// The socket file may have been deleted: look, and put it back.
    case restoreSocket
    /// Dump the kernel's state again and report how it went (`EngineOutcomes.resync`).
    case resynchronize
    /// Apply the held RA options now due and report whether any changed the state.
    case releaseHeldAnnouncements
    /// Read the TCP sockets and judge the interfaces for stalls (`DataStallDetector`).
    case readSockets
    /// Socket reads stopped: forget what they saw, and clear any stall.
    case forgetSockets
    /// Ask this link's resolver for `ipv4only.arpa` (RFC 7050) off the engine; the answer
    /// comes back as `EngineCommand.dns64Answered`.
    case askDNS64(Int32)
    /// The link's DNS64 prefixes are now these; report whether what it carries changed
    /// (`EngineOutcomes.nat64Changed`).
    case learnDNS64(Int32, [NAT64Prefix])
    /// Drop what DNS64 gave the link (it no longer qualifies).
    case withdrawDNS64(Int32)
    /// Say something only the log needs.
    case report(EngineReport)
    /// Take a snapshot and publish it, then hand it to `settle`.
    case evaluate
    /// Ping the systemd watchdog.
    case pingWatchdog
    /// Wait in `poll(2)` until this instant (nil: until an event), netlink and the resolver
    /// watch each polled or left out.
    case sleep(until: ContinuousClock.Instant?, pollingNetlink: Bool, pollingResolverFiles: Bool = true)
}

/// What an `EngineAction.report` tells the log.
enum EngineReport: Equatable {
    /// A resync failed; the next try is after `delay`.
    case resyncFailed(String, retryingAfter: Duration)
    /// A lookup still answers through a default route reported gone; it is made again after
    /// `delay` (`attempt` of the schedule's steps).
    case lookingAgain(after: Duration, attempt: Int)
    /// The lookups still answer through a route reported gone after every recheck: the
    /// kernel's answer stands.
    case gaveUpRechecking
}

/// What one wake-up found so far. Sources can only add to it, so nothing seen later in
/// the same wake-up (a batch that changed nothing) takes back an evaluation another source
/// asked for: a reload's re-read resolver files, a new target, a released RA option.
private struct WakeUpFindings: Equatable {
    /// Whether the wake-up must take a snapshot and publish it.
    enum Evaluation: Equatable {
        /// Nothing seen so far may change the answer.
        case notNeeded
        /// Something may have.
        case needed
    }

    /// Whether to evaluate.
    private(set) var evaluation = Evaluation.notNeeded
    /// The default routes reported gone, for `LookupRecheck`.
    private(set) var removed: Set<DefaultRoute> = []

    /// Something seen may change the answer: evaluate.
    mutating func mayChangeTheAnswer() {
        evaluation = .needed
    }

    /// The kernel reported these default routes gone.
    mutating func reportedGone(_ routes: Set<DefaultRoute>) {
        removed.formUnion(routes)
    }
}

/// The engine's loop, decided: what to do about what woke it. Pure; `ReachabilityEngine.run`
/// polls, gathers an `EngineWakeUp`, and carries out the actions.
///
/// One wake-up is three calls, each carried out before the next: `wokeUp` (signals,
/// commands, the drain, the files; asks for the IO whose outcome matters), `carriedOut`
/// (that IO's outcome; says whether to evaluate), `settle` (the snapshot, if one was taken;
/// schedules the timers and says how long to sleep). What may change the answer is
/// gathered in `WakeUpFindings`, which only grows within a wake-up.
struct EngineLoop {
    /// Whether the tracked state follows the kernel's events.
    enum Netlink: Equatable {
        /// Events are read as they come.
        case following
        /// A read or resync failed: the event socket is left out of `poll(2)` (it would spin)
        /// until the resync due at this instant succeeds.
        case resyncing(at: ContinuousClock.Instant)
    }

    /// When the lookups are made again (a lookup may predate a removal: `LookupRecheck`).
    enum Recheck: Equatable {
        /// The last lookups were trusted, or the schedule was spent.
        case idle
        /// A lookup may predate a removal: evaluate again at this instant.
        case due(at: ContinuousClock.Instant)
    }

    /// When the systemd watchdog is pinged.
    enum Watchdog: Equatable {
        /// systemd asked for no pings.
        case off
        /// Next at `next`, then every `interval`.
        case pinging(next: ContinuousClock.Instant, interval: Duration)
    }

    /// When the TCP sockets are read for stalls: only while someone listens (the server says
    /// so, `EngineCommand.someoneListens`) and the last snapshot's path is satisfied (the loop
    /// judges that itself, so a route that flaps costs the server no command).
    enum SocketReads: Equatable {
        /// Not read: nobody listens, the path is not satisfied, or `[stall]` is off.
        case off
        /// Next at this instant, then every `stallPollInterval`.
        case due(at: ContinuousClock.Instant)
    }

    /// Whether the resolver watch is polled.
    enum ResolverFiles: Equatable {
        /// Its events are read as they come.
        case polled
        /// Its events were just read: it is left out of `poll(2)` until this instant, so a
        /// process rewriting a file in a loop costs a drain and a read per rest, not per write.
        case resting(until: ContinuousClock.Instant)
    }

    /// Where in a wake-up the loop is; each call moves it on.
    private enum Phase: Equatable {
        /// In `poll(2)`, or before the first wake-up.
        case asleep
        /// `wokeUp` decided; its IO is being carried out.
        case carryingOut(WakeUpFindings)
        /// `carriedOut` decided; the snapshot (if any) is being taken.
        case settling(WakeUpFindings)
        /// A stop or failure was decided: nothing more.
        case stopped
    }

    /// Whether the tracked state follows the kernel's events.
    private(set) var netlink = Netlink.following
    /// The resync retries (after a failure, until one succeeds or they are spent).
    private(set) var backoff: RetryBackoff
    /// The lookup rechecks' schedule and suspects.
    private(set) var lookups: LookupRecheck
    /// When the lookups are made again.
    private(set) var recheck = Recheck.idle
    /// When the watchdog is pinged.
    private(set) var watchdog: Watchdog
    /// Whether the resolver watch is polled.
    private(set) var resolverFiles = ResolverFiles.polled
    /// How long the resolver watch rests after its events were read.
    let resolverRest: Duration
    /// When the TCP sockets are read next.
    private(set) var socketReads = SocketReads.off
    /// How often the sockets are read while wanted; nil: never (`[stall] enabled = false`).
    let stallPollInterval: Duration?
    /// Whether someone listens for what the reads find (a subscriber, the metrics).
    private(set) var someoneListens = false
    /// How interfaces are treated: the path the socket reads wait for is derived under it.
    private(set) var policy: InterfacePolicy
    /// The last snapshot taken, whose path decides whether the sockets are read.
    private var lastSnapshot = NetworkSnapshot()
    /// Target addresses looked up with every snapshot, and how many asked for each.
    private(set) var monitoredTargets: [TargetKey: Int] = [:]
    /// RFC 7050 discovery per link; nil when `[nat64] discover-dns64` is off.
    private(set) var dns64: DNS64Discovery?
    /// Bumped whenever the resolver files say something new: DNS64 is asked again then.
    private(set) var resolverGeneration = 0
    /// The links the last snapshot showed qualify for DNS64 discovery.
    private var qualifyingLinks: [Int32: DNS64Discovery.Conditions] = [:]
    /// A withdrawal of DNS64 prefixes after the snapshot was taken: evaluate again at this instant.
    private(set) var nat64Reevaluation: ContinuousClock.Instant?
    private var phase = Phase.asleep

    /// The loop of an engine started at `now`.
    ///
    /// - Parameters:
    ///   - watchdogInterval: how often to ping the watchdog (nil: never).
    ///   - recheckSchedule: the delays between lookup rechecks.
    ///   - backoff: when to retry a failed resync, and when to give up.
    ///   - resolverRest: how long the resolver watch is left out of `poll(2)` after its
    ///     events were read (a change is seen at once, the next one at most this late).
    ///   - stallPollInterval: how often the TCP sockets are read while wanted (nil: never).
    ///   - discoverDNS64: ask the resolvers of IPv6-only links for their NAT64 prefix (RFC 7050).
    ///   - policy: how interfaces are treated (a reload may bring another, `EngineOutcomes.policy`).
    init(
        now: ContinuousClock.Instant, watchdogInterval: Duration?, recheckSchedule: [Duration] = LookupRecheck.schedule,
        backoff: RetryBackoff = .netlinkResync, resolverRest: Duration = .milliseconds(100), stallPollInterval: Duration? = nil,
        discoverDNS64: Bool = false, policy: InterfacePolicy = InterfacePolicy()
    ) {
        self.policy = policy
        dns64 = discoverDNS64 ? DNS64Discovery() : nil
        self.backoff = backoff
        self.resolverRest = resolverRest
        self.stallPollInterval = stallPollInterval
        lookups = LookupRecheck(schedule: recheckSchedule)
        watchdog = watchdogInterval.map { .pinging(next: now + $0, interval: $0) } ?? .off
    }

    /// The target keys every snapshot looks up.
    var targets: Dictionary<TargetKey, Int>.Keys { monitoredTargets.keys }

    /// First call of a wake-up: what woke the engine. The actions end with `.stop` or
    /// `.fail` (then nothing more is called), or ask for the IO whose outcome `carriedOut`
    /// takes.
    mutating func wokeUp(_ wakeUp: EngineWakeUp) -> [EngineAction] {
        guard case .asleep = phase else { preconditionFailure("wokeUp while \(phase)") }
        var actions: [EngineAction] = []
        var findings = WakeUpFindings()

        for signal in wakeUp.signals {
            guard signal == SIGHUP else {
                return stop(actions + wakeUp.commands.map(EngineAction.abandon) + [.stop(signal: signal)])
            }
            actions.append(.reload(reply: nil))
        }
        for (position, command) in wakeUp.commands.enumerated() {
            switch command {
            case let .fail(reason):
                return stop(actions + wakeUp.commands[(position + 1)...].map(EngineAction.abandon) + [.fail(reason)])
            case let .reload(reply):
                actions.append(.reload(reply: reply))
            case let .lookUpTargets(keys, reply):
                actions.append(.lookUp(keys, reply: reply))
            case let .monitorTargets(add, remove):
                count(add: add, remove: remove)
                // Before the snapshot looks them up, so no route event about a new key is dropped.
                actions.append(.watch(Set(monitoredTargets.keys.map(\.address))))
                // Published with the next snapshot, so subscribers see the new key's answer.
                if !add.isEmpty { findings.mayChangeTheAnswer() }
            case let .someoneListens(listens):
                someoneListens = listens
                actions += followSocketReads(now: wakeUp.now)
            case let .dns64Answered(link, answer):
                actions += Self.actions(for: dns64?.answered(link, answer) ?? [])
            }
        }

        switch wakeUp.netlink {
        case let .drained(outcome)?:
            if outcome.changed { findings.mayChangeTheAnswer() }
            findings.reportedGone(outcome.removedDefaultRoutes)
        case .failed?:
            netlink = .resyncing(at: wakeUp.now)
        case nil:
            break
        }
        if case let .resyncing(due) = netlink, wakeUp.now >= due { actions.append(.resynchronize) }
        if let due = wakeUp.heldAnnouncementsDue, wakeUp.now >= due { actions.append(.releaseHeldAnnouncements) }
        if case let .resting(until) = resolverFiles, wakeUp.now >= until { resolverFiles = .polled }
        if let read = wakeUp.resolverFiles {
            if read == .changed { findings.mayChangeTheAnswer() }
            if read != .unchanged { actions += resolverConfigurationChanged() }
            resolverFiles = .resting(until: wakeUp.now + resolverRest)
        }
        if wakeUp.socketFileMayBeGone { actions.append(.restoreSocket) }
        if case let .due(at) = socketReads, wakeUp.now >= at, let interval = stallPollInterval {
            actions.append(.readSockets)
            socketReads = .due(at: wakeUp.now + interval)
        }
        // A due recheck is one more evaluation; a batch evaluated meanwhile already rescheduled it.
        if case let .due(at) = recheck, wakeUp.now >= at { findings.mayChangeTheAnswer() }
        if let at = nat64Reevaluation, wakeUp.now >= at {
            nat64Reevaluation = nil
            findings.mayChangeTheAnswer()
        }

        phase = .carryingOut(findings)
        return actions
    }

    /// Second call: what the IO `wokeUp` asked for found. The actions end with `.fail`, or
    /// say whether to `.evaluate` before `settle`.
    mutating func carriedOut(_ outcomes: EngineOutcomes) -> [EngineAction] {
        guard case .carryingOut(var findings) = phase else { preconditionFailure("carriedOut while \(phase)") }
        var actions: [EngineAction] = []
        if outcomes.resolverChanged || outcomes.resolverRewritten { actions += resolverConfigurationChanged() }
        if outcomes.resolverChanged || outcomes.announcementsReleased || outcomes.nat64Changed { findings.mayChangeTheAnswer() }
        if let policy = outcomes.policy, policy != self.policy {
            self.policy = policy
            findings.mayChangeTheAnswer()  // the path may be satisfied or not under it
        }
        switch outcomes.resync {
        case let .resynchronized(gone)?:
            backoff.succeeded()
            netlink = .following
            findings.reportedGone(gone)
            findings.mayChangeTheAnswer()
        case let .failed(reason)?:
            guard let delay = backoff.failed() else {
                return stop([.fail("netlink stayed broken through \(backoff.attempts) retries: \(reason)")])
            }
            netlink = .resyncing(at: outcomes.now + delay)
            actions.append(.report(.resyncFailed(reason, retryingAfter: delay)))
        case nil:
            break
        }
        if findings.evaluation == .needed { actions.append(.evaluate) }
        phase = .settling(findings)
        return actions
    }

    /// Last call: the snapshot `.evaluate` took (nil when none was asked for). Schedules the
    /// rechecks and the watchdog; the actions end with `.sleep`.
    ///
    /// - Parameter heldAnnouncementsDue: when the next held RA option may be applied, as
    ///   the kernel view says after this wake-up.
    mutating func settle(
        now: ContinuousClock.Instant, evaluated snapshot: NetworkSnapshot?, heldAnnouncementsDue: ContinuousClock.Instant?
    ) -> [EngineAction] {
        guard case let .settling(findings) = phase else { preconditionFailure("settle while \(phase)") }
        precondition((findings.evaluation == .needed) == (snapshot != nil), "a snapshot is settled exactly when one was asked for")
        var actions: [EngineAction] = []
        if let snapshot {
            switch lookups.evaluate(removed: findings.removed, snapshot: snapshot) {
            case .trusted:
                recheck = .idle
            case let .lookAgain(delay):
                recheck = .due(at: now + delay)
                actions.append(.report(.lookingAgain(after: delay, attempt: lookups.attempts)))
            case .gaveUp:
                recheck = .idle
                actions.append(.report(.gaveUpRechecking))
            }
            actions += discover(in: snapshot, now: now)
            lastSnapshot = snapshot
            actions += followSocketReads(now: now)
        }
        if case let .pinging(next, interval) = watchdog, now >= next {
            actions.append(.pingWatchdog)
            watchdog = .pinging(next: now + interval, interval: interval)
        }
        actions.append(.sleep(
            until: deadline(heldAnnouncementsDue: heldAnnouncementsDue), pollingNetlink: netlink == .following,
            pollingResolverFiles: resolverFiles == .polled
        ))
        phase = .asleep
        return actions
    }

    /// The earliest timer: a resync retry, a recheck, the watchdog, a held RA option or a NAT64 prefix's expiry, the
    /// resolver watch's rest, a socket read, an evaluation after a DNS64 withdrawal.
    private func deadline(heldAnnouncementsDue: ContinuousClock.Instant?) -> ContinuousClock.Instant? {
        var earliest = heldAnnouncementsDue
        func consider(_ instant: ContinuousClock.Instant) { earliest = min(earliest ?? instant, instant) }
        if case let .resyncing(at) = netlink { consider(at) }
        if case let .due(at) = recheck { consider(at) }
        if case let .pinging(next, _) = watchdog { consider(next) }
        if case let .resting(until) = resolverFiles { consider(until) }
        if case let .due(at) = socketReads { consider(at) }
        if let nat64Reevaluation { consider(nat64Reevaluation) }
        return earliest
    }

    /// Before the first wake-up: the links the snapshot taken at start shows qualifying are
    /// asked, as they would be after any later snapshot (a quiet start has no other).
    mutating func started(with snapshot: NetworkSnapshot, now: ContinuousClock.Instant) -> [EngineAction] {
        guard case .asleep = phase else { preconditionFailure("started while \(phase)") }
        lastSnapshot = snapshot
        return discover(in: snapshot, now: now)
    }

    /// Starts or stops the socket reads when whether they are wanted changed: someone
    /// listens, `[stall]` is on, and the last snapshot's path is satisfied.
    private mutating func followSocketReads(now: ContinuousClock.Instant) -> [EngineAction] {
        guard let interval = stallPollInterval else { return [] }
        let wanted = someoneListens && PathDerivation.isSatisfied(lastSnapshot, policy: policy)
        switch (wanted, socketReads) {
        case (true, .off):
            // The first read (the baseline) one interval on: a route that flaps costs no read.
            socketReads = .due(at: now + interval)
            return []
        case (false, .due):
            socketReads = .off
            return [.forgetSockets]
        case (true, .due), (false, .off):
            return []
        }
    }

    /// Which links to ask for their NAT64 prefix, from what `snapshot` shows; a withdrawal
    /// (which the snapshot still shows) asks for one more evaluation at once.
    private mutating func discover(in snapshot: NetworkSnapshot, now: ContinuousClock.Instant) -> [EngineAction] {
        guard dns64 != nil else { return [] }
        qualifyingLinks = DNS64Discovery.eligibleLinks(in: snapshot, resolverGeneration: resolverGeneration)
        let discovered = Self.actions(for: dns64?.update(eligible: qualifyingLinks) ?? [])
        if discovered.contains(where: { if case .withdrawDNS64 = $0 { true } else { false } }) { nat64Reevaluation = now }
        return discovered
    }

    /// The resolver files say something new: the links that qualify are asked again (no
    /// snapshot needed, they are the ones the last one showed).
    private mutating func resolverConfigurationChanged() -> [EngineAction] {
        resolverGeneration += 1
        guard dns64 != nil else { return [] }
        qualifyingLinks = qualifyingLinks.mapValues { DNS64Discovery.Conditions(gateways: $0.gateways, resolverGeneration: resolverGeneration) }
        return Self.actions(for: dns64?.update(eligible: qualifyingLinks) ?? [])
    }

    /// What the engine does for each of `DNS64Discovery`'s actions.
    private static func actions(for discovered: [DNS64Discovery.Action]) -> [EngineAction] {
        discovered.map { action in
            switch action {
            case let .ask(link): .askDNS64(link)
            case let .learn(link, prefixes): .learnDNS64(link, prefixes)
            case let .withdraw(link): .withdrawDNS64(link)
            }
        }
    }

    /// Counts the keys asked for and released; a key is dropped when nobody wants it.
    private mutating func count(add: [TargetKey], remove: [TargetKey]) {
        for key in add { monitoredTargets[key, default: 0] += 1 }
        for key in remove {
            monitoredTargets[key, default: 0] -= 1
            if monitoredTargets[key, default: 0] <= 0 { monitoredTargets[key] = nil }
        }
    }

    private mutating func stop(_ actions: [EngineAction]) -> [EngineAction] {
        phase = .stopped
        return actions
    }
}
