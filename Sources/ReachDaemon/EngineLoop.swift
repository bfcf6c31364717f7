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
struct WakeUpFindings: Equatable {
    /// Whether the wake-up must take a snapshot and publish it.
    private(set) var needsEvaluation = false
    /// The default routes reported gone, for `LookupRecheck`.
    private(set) var removed: Set<DefaultRoute> = []

    /// Something seen may change the answer: evaluate.
    mutating func mayChangeTheAnswer() {
        needsEvaluation = true
    }

    /// The kernel reported these default routes gone.
    mutating func reportedGone(_ routes: Set<DefaultRoute>) {
        removed.formUnion(routes)
    }
}

/// One step of a wake-up, decided: its actions, and the findings the next step takes, or
/// the end of the engine.
enum EngineStep: Equatable {
    /// Carry these out, then hand their outcome and the findings to the next step.
    case next([EngineAction], WakeUpFindings)
    /// Carry these out; they end with `.stop` or `.fail`, and nothing more is called.
    case stop([EngineAction])

    /// The actions to carry out.
    var actions: [EngineAction] {
        switch self {
        case let .next(actions, _), let .stop(actions): actions
        }
    }
}

/// The engine's loop, decided: what to do about what woke it. Pure; `ReachabilityEngine.run`
/// polls, gathers an `EngineWakeUp`, and carries out the actions. It only sequences small
/// machines, each deciding one thing: `ResyncSchedule`, `RecheckTimer`, `WatchdogTimer`,
/// `ResolverWatchRest`, `SocketReadSchedule`, `MonitoredTargets` and `DNS64Schedule`.
///
/// One wake-up is three steps, each carried out before the next: `wokeUp` (signals,
/// commands, the drain, the files; asks for the IO whose outcome matters), `carriedOut`
/// (that IO's outcome; says whether to evaluate), `settle` (the snapshot, if one was taken;
/// schedules the timers and says how long to sleep). Each step hands the next the
/// `WakeUpFindings` gathered so far, which only grow within a wake-up.
struct EngineLoop {
    /// Whether the tracked state follows the kernel's events, and when it is dumped again.
    private(set) var resync: ResyncSchedule
    /// When the lookups are made again.
    private(set) var rechecks: RecheckTimer
    /// When the watchdog is pinged.
    private(set) var watchdog: WatchdogTimer
    /// Whether the resolver watch is polled.
    private(set) var resolverWatch: ResolverWatchRest
    /// When the TCP sockets are read for stalls.
    private(set) var socketReads: SocketReadSchedule
    /// Target addresses looked up with every snapshot.
    private(set) var monitored = MonitoredTargets()
    /// When links are asked for their NAT64 prefix.
    private(set) var dns64: DNS64Schedule
    /// How interfaces are treated: the path the socket reads wait for is derived under it.
    private(set) var policy: InterfacePolicy

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
        resync = ResyncSchedule(backoff: backoff)
        rechecks = RecheckTimer(schedule: recheckSchedule)
        watchdog = WatchdogTimer(now: now, interval: watchdogInterval)
        resolverWatch = ResolverWatchRest(rest: resolverRest)
        socketReads = SocketReadSchedule(interval: stallPollInterval)
        dns64 = DNS64Schedule(discover: discoverDNS64)
        self.policy = policy
    }

    /// The target keys every snapshot looks up.
    var targets: Dictionary<TargetKey, Int>.Keys { monitored.keys }

    /// Before the first wake-up: the snapshot taken at start, as any later one would be
    /// settled (a quiet start has no other).
    mutating func started(with snapshot: NetworkSnapshot, now: ContinuousClock.Instant) -> [EngineAction] {
        _ = socketReads.pathIs(satisfied: PathDerivation.isSatisfied(snapshot, policy: policy), now: now)
        return Self.actions(for: dns64.evaluated(snapshot, now: now))
    }

    /// First step of a wake-up: what woke the engine. Stops, or asks for the IO whose
    /// outcome `carriedOut` takes.
    mutating func wokeUp(_ wakeUp: EngineWakeUp) -> EngineStep {
        let now = wakeUp.now
        var actions: [EngineAction] = []
        var findings = WakeUpFindings()

        for signal in wakeUp.signals {
            guard signal == SIGHUP else { return .stop(actions + wakeUp.commands.map(EngineAction.abandon) + [.stop(signal: signal)]) }
            actions.append(.reload(reply: nil))
        }
        for (position, command) in wakeUp.commands.enumerated() {
            switch command {
            case let .fail(reason):
                return .stop(actions + wakeUp.commands[(position + 1)...].map(EngineAction.abandon) + [.fail(reason)])
            case let .reload(reply):
                actions.append(.reload(reply: reply))
            case let .lookUpTargets(keys, reply):
                actions.append(.lookUp(keys, reply: reply))
            case let .monitorTargets(add, remove):
                monitored.count(add: add, remove: remove)
                // Before the snapshot looks them up, so no route event about a new key is dropped.
                actions.append(.watch(Set(monitored.keys.map(\.address))))
                // Published with the next snapshot, so subscribers see the new key's answer.
                if !add.isEmpty { findings.mayChangeTheAnswer() }
            case let .someoneListens(listens):
                actions += Self.actions(for: socketReads.listens(listens, now: now))
            case let .dns64Answered(link, answer):
                actions += Self.actions(for: dns64.answered(link, answer))
            }
        }

        switch wakeUp.netlink {
        case let .drained(outcome)?:
            if outcome.changed { findings.mayChangeTheAnswer() }
            findings.reportedGone(outcome.removedDefaultRoutes)
        case .failed?:
            resync.readFailed(now: now)
        case nil:
            break
        }
        if resync.isDue(now: now) { actions.append(.resynchronize) }
        if let due = wakeUp.heldAnnouncementsDue, now >= due { actions.append(.releaseHeldAnnouncements) }
        resolverWatch.wokeUp(now: now)
        if let read = wakeUp.resolverFiles {
            if read == .changed { findings.mayChangeTheAnswer() }
            if read != .unchanged { actions += Self.actions(for: dns64.resolverChanged()) }
            resolverWatch.read(now: now)
        }
        if wakeUp.socketFileMayBeGone { actions.append(.restoreSocket) }
        if socketReads.read(now: now) { actions.append(.readSockets) }
        // A due recheck is one more evaluation; a batch evaluated meanwhile already rescheduled it.
        if rechecks.isDue(now: now) { findings.mayChangeTheAnswer() }
        if dns64.takeReevaluation(now: now) { findings.mayChangeTheAnswer() }
        return .next(actions, findings)
    }

    /// Second step: what the IO `wokeUp` asked for found. Stops, or says whether to
    /// `.evaluate` before `settle`.
    mutating func carriedOut(_ outcomes: EngineOutcomes, findings: WakeUpFindings) -> EngineStep {
        var findings = findings
        var actions: [EngineAction] = []
        if outcomes.resolverChanged || outcomes.resolverRewritten { actions += Self.actions(for: dns64.resolverChanged()) }
        if outcomes.resolverChanged || outcomes.announcementsReleased || outcomes.nat64Changed { findings.mayChangeTheAnswer() }
        if let policy = outcomes.policy, policy != self.policy {
            self.policy = policy
            findings.mayChangeTheAnswer()  // the path may be satisfied or not under it
        }
        switch outcomes.resync {
        case let .resynchronized(gone)?:
            resync.resynchronized()
            findings.reportedGone(gone)
            findings.mayChangeTheAnswer()
        case let .failed(reason)?:
            guard let delay = resync.resyncFailed(now: outcomes.now) else {
                return .stop([.fail("netlink stayed broken through \(resync.backoff.attempts) retries: \(reason)")])
            }
            actions.append(.report(.resyncFailed(reason, retryingAfter: delay)))
        case nil:
            break
        }
        if findings.needsEvaluation { actions.append(.evaluate) }
        return .next(actions, findings)
    }

    /// Last step: the snapshot `.evaluate` took (nil when none was asked for). Schedules the
    /// rechecks and the watchdog; the actions end with `.sleep`.
    ///
    /// - Parameter heldAnnouncementsDue: when the next held RA option may be applied, as
    ///   the kernel view says after this wake-up.
    mutating func settle(
        _ findings: WakeUpFindings, now: ContinuousClock.Instant, evaluated snapshot: NetworkSnapshot?,
        heldAnnouncementsDue: ContinuousClock.Instant?
    ) -> [EngineAction] {
        var actions: [EngineAction] = []
        if let snapshot {
            if let report = rechecks.evaluated(removed: findings.removed, snapshot: snapshot, now: now) { actions.append(.report(report)) }
            actions += Self.actions(for: dns64.evaluated(snapshot, now: now))
            actions += Self.actions(for: socketReads.pathIs(satisfied: PathDerivation.isSatisfied(snapshot, policy: policy), now: now))
        }
        if watchdog.ping(now: now) { actions.append(.pingWatchdog) }
        actions.append(.sleep(
            until: deadline(heldAnnouncementsDue: heldAnnouncementsDue), pollingNetlink: resync.isFollowing,
            pollingResolverFiles: resolverWatch.isPolled
        ))
        return actions
    }

    /// The earliest timer: a resync retry, a recheck, the watchdog, a held RA option or a NAT64 prefix's expiry, the
    /// resolver watch's rest, a socket read, an evaluation after a DNS64 withdrawal.
    private func deadline(heldAnnouncementsDue: ContinuousClock.Instant?) -> ContinuousClock.Instant? {
        heldAnnouncementsDue.earlier(than: resync.deadline).earlier(than: rechecks.deadline).earlier(than: watchdog.deadline)
            .earlier(than: resolverWatch.deadline).earlier(than: socketReads.deadline).earlier(than: dns64.deadline)
    }

    /// What the engine does when the socket reads stop.
    private static func actions(for change: SocketReadSchedule.Change) -> [EngineAction] {
        change == .forget ? [.forgetSockets] : []
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
}
