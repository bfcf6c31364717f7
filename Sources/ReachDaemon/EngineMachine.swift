import Glibc
import NIOCore
import NetlinkMonitor
import ReachabilityCore
import ReachTargets

/// One thing the engine heard: what `poll(2)` found, what a command asked, or what the IO
/// an action asked for found out. `EngineMachine.handle(_:at:)` takes them one at a time.
enum EngineInput: Equatable {
    /// A signal from the signal descriptor.
    case signal(Int32)
    /// A command from the mailbox.
    case command(EngineCommand)
    /// Everything queued on the netlink event socket was applied (or, at start, the routes
    /// the first answer did not need were read).
    case drained(DrainOutcome)
    /// Reading the netlink event socket failed: the tracked state can no longer be trusted.
    case readFailed
    /// The resolver files were looked at: their watch was readable (`watched`: it rests
    /// now), or a reload re-read them.
    case resolverFiles(ResolverFilesRead, watched: Bool)
    /// An event in the socket's directory may concern the socket file.
    case socketFileMayBeGone
    /// A resync the machine asked for ended.
    case resynced(ResyncOutcome)
    /// The held RA options now due were applied: whether any changed the tracked state,
    /// and when the next is due (nil: none).
    case announcementsReleased(changed: Bool, nextDue: ContinuousClock.Instant?)
    /// A link's DNS64 prefixes were learnt; whether what the link carries changed.
    case nat64Learnt(changed: Bool)
    /// The engine woke: the machine's time asleep since boot (`SuspendClock`), looked at
    /// first in every wake-up, so a sleep is seen without a timer of its own.
    case clocks(asleepSinceBoot: Duration)
    /// What `poll(2)` found is in: look at the timers. `heldAnnouncementsDue` is when the
    /// kernel view's next held RA option or NAT64 lapse is due (nil: none).
    case timers(heldAnnouncementsDue: ContinuousClock.Instant?)
    /// Every input of this wake-up and every outcome of its IO is in: evaluate, or settle.
    case quiet
    /// The snapshot `.evaluate` took and published, or the one taken at start.
    case evaluated(NetworkSnapshot)
}

/// What the engine found when the resolver watch was readable (its events drained and,
/// when they concerned the files, the files read again), or when a reload re-read them.
enum ResolverFilesRead: Equatable {
    /// What the files say did not change (or the events were about other entries).
    case unchanged
    /// The files say something new, but not about whether a server is configured (another
    /// server, say): only the DNS64 discovery asks again.
    case rewritten
    /// What the files say changed.
    case changed
}

/// How a resync the machine asked for ended.
enum ResyncOutcome: Equatable {
    /// The state was dumped again; these default routes are no longer tracked.
    case resynchronized(removed: Set<DefaultRoute>)
    /// It failed, for this reason.
    case failed(String)
}

/// What the engine does, in order. An action whose IO finds something out hands it back
/// as the input its comment names.
enum EngineAction: Equatable {
    /// SIGTERM or SIGINT: end with this signal once the inputs taken with it are answered.
    case stop(signal: Int32)
    /// Stop for good with this reason, once the inputs taken with it are answered.
    case fail(String)
    /// Answer a command that will never be carried out (the engine stops).
    case abandon(EngineCommand)
    /// SIGHUP: ask the event loop, which holds the configuration, to reload it.
    case requestReload
    /// Re-read the resolver files (`EngineInput.resolverFiles`).
    case rereadResolverFiles
    /// Look these targets up now and answer.
    case lookUp([TargetKey], reply: EventLoopPromise<[TargetLookup]>)
    /// Let route events about these addresses through the kernel-side filter.
    case watch(Set<IPAddress>)
    /// The socket file may have been deleted: tell the event loop, which puts it back.
    case restoreSocket
    /// Dump the kernel's state again (`EngineInput.resynced`).
    case resynchronize
    /// Apply the held RA options now due (`EngineInput.announcementsReleased`).
    case releaseHeldAnnouncements
    /// Read the TCP sockets and judge the interfaces for stalls (`DataStallDetector`).
    case readSockets
    /// Socket reads stopped: forget what they saw, and clear any stall.
    case forgetSockets
    /// The machine woke: forget what the socket reads saw, and take the sockets the next
    /// read finds as opened before the sleep (`StallReads.startAfresh`).
    case startStallWatchAfresh
    /// The machine woke: read the gateways' neighbour entries again with the next snapshot.
    case rereadGateways
    /// Tell the event loop the machine woke after sleeping this long (it probes again,
    /// re-reads the leases, says so in the journal).
    case announceWake(after: Duration)
    /// Ask this link's resolver for `ipv4only.arpa` (RFC 7050) off the engine; the answer
    /// comes back as `EngineCommand.dns64Answered`.
    case askDNS64(Int32)
    /// The link's DNS64 prefixes are now these (`EngineInput.nat64Learnt`).
    case learnDNS64(Int32, [NAT64Prefix])
    /// Drop what DNS64 gave the link (it no longer qualifies).
    case withdrawDNS64(Int32)
    /// Say something only the log needs.
    case report(EngineReport)
    /// Take a snapshot and publish it (`EngineInput.evaluated`).
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

/// What one wake-up found so far. Inputs can only add to it, so nothing seen later in the
/// same wake-up (a batch that changed nothing) takes back an evaluation another input
/// asked for: re-read resolver files, a new target, a released RA option.
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

/// The engine, decided: every input in, the actions to carry out next. Pure;
/// `ReachabilityEngine.run` polls, hands each thing it found to `handle(_:at:)` and carries
/// out what comes back, feeding an action's outcome back in as its input. It only
/// sequences small machines, each deciding one thing: `ResyncSchedule`, `RecheckTimer`,
/// `WatchdogTimer`, `ResolverWatchRest`, `SocketReadSchedule`, `MonitoredTargets`,
/// `DNS64Schedule` and `SleepWatch`.
///
/// A wake-up's inputs come first, then `.timers`, each followed by the outcomes of the IO
/// it asked for; then `.quiet`: when anything found may change the answer, `.evaluate` is
/// asked for (one evaluation per wake-up, however many inputs asked: docs/DESIGN.md rule 5).
/// `.evaluated` (or a quiet wake-up with nothing to evaluate) schedules the timers and ends
/// with `.sleep`.
struct EngineMachine {
    /// Where the machine stands.
    enum State: Equatable {
        /// Taking a wake-up's inputs, with what they found so far.
        case awake(WakeUpFindings)
        /// `.evaluate` was asked for: waiting for its snapshot.
        case evaluating(WakeUpFindings)
        /// Stopped: commands still handed in are abandoned, nothing else is done.
        case stopped
    }

    /// Where it stands.
    private(set) var state = State.awake(WakeUpFindings())
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
    /// How interfaces are treated, as the event loop last sent it: the socket reads wait
    /// for a path satisfied under it, judged here so a flapping route costs no command.
    private(set) var policy: InterfacePolicy
    /// When the kernel view's next held RA option is due, as `.timers` or a release last said.
    private(set) var heldAnnouncementsDue: ContinuousClock.Instant?
    /// Whether the machine is about to sleep or has just woken.
    private(set) var sleep: SleepWatch
    /// The machine's time asleep since boot, as this wake-up's `.clocks` said.
    private(set) var asleepSinceBoot: Duration

    /// The machine of an engine started at `now`.
    ///
    /// - Parameters:
    ///   - watchdogInterval: how often to ping the watchdog (nil: never).
    ///   - recheckSchedule: the delays between lookup rechecks.
    ///   - backoff: when to retry a failed resync, and when to give up.
    ///   - resolverRest: how long the resolver watch is left out of `poll(2)` after its
    ///     events were read (a change is seen at once, the next one at most this late).
    ///   - stallPollInterval: how often the TCP sockets are read while wanted (nil: never).
    ///   - discoverDNS64: ask the resolvers of IPv6-only links for their NAT64 prefix (RFC 7050).
    ///   - policy: how interfaces are treated (`EngineCommand.reloaded` brings another).
    ///   - asleepSinceBoot: the machine's time asleep since boot at start (`SuspendClock`).
    init(
        now: ContinuousClock.Instant, watchdogInterval: Duration?, recheckSchedule: [Duration] = LookupRecheck.schedule,
        backoff: RetryBackoff = .netlinkResync, resolverRest: Duration = .milliseconds(100), stallPollInterval: Duration? = nil,
        discoverDNS64: Bool = false, policy: InterfacePolicy = InterfacePolicy(), asleepSinceBoot: Duration = .zero
    ) {
        sleep = SleepWatch(asleepSinceBoot: asleepSinceBoot)
        self.asleepSinceBoot = asleepSinceBoot
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

    /// What to do about `input`, heard at `now`. The snapshot taken at start comes first,
    /// as `.evaluated`, and is settled as any later one (a quiet start has no other).
    mutating func handle(_ input: EngineInput, at now: ContinuousClock.Instant) -> [EngineAction] {
        var findings: WakeUpFindings
        let wasEvaluating: Bool
        switch state {
        case .stopped:
            if case let .command(command) = input { return [.abandon(command)] }
            return []
        case let .awake(found):
            (findings, wasEvaluating) = (found, false)
        case let .evaluating(found):
            (findings, wasEvaluating) = (found, true)
        }
        // Taken out, so growing them copies nothing the state still holds.
        state = .awake(WakeUpFindings())
        let actions = handle(input, at: now, &findings)
        // A wake-up's findings grow until `.quiet`; `.evaluate` waits for its snapshot; a
        // settled wake-up starts the next afresh.
        switch (state, input) {
        case (.stopped, _): break
        case (_, .quiet): state = findings.needsEvaluation ? .evaluating(findings) : .awake(WakeUpFindings())
        case (_, .evaluated): state = .awake(WakeUpFindings())
        case _ where wasEvaluating: state = .evaluating(findings)
        default: state = .awake(findings)
        }
        return actions
    }

    private mutating func handle(_ input: EngineInput, at now: ContinuousClock.Instant, _ findings: inout WakeUpFindings) -> [EngineAction] {
        switch input {
        case let .signal(signal):
            guard signal == SIGHUP else { return stop(.stop(signal: signal)) }
            return [.requestReload]
        case let .command(command):
            return handle(command, at: now, &findings)
        case let .drained(outcome):
            if outcome.changed { findings.mayChangeTheAnswer() }
            findings.reportedGone(outcome.removedDefaultRoutes)
            return []
        case .readFailed:
            resync.readFailed(now: now)
            return []
        case let .resolverFiles(read, watched):
            if watched { resolverWatch.read(now: now) }
            if read == .changed { findings.mayChangeTheAnswer() }
            return read == .unchanged ? [] : Self.actions(for: dns64.resolverChanged())
        case .socketFileMayBeGone:
            return [.restoreSocket]
        case let .resynced(.resynchronized(gone)):
            resync.resynchronized()
            findings.reportedGone(gone)
            findings.mayChangeTheAnswer()
            return []
        case let .resynced(.failed(reason)):
            guard let delay = resync.resyncFailed(now: now) else {
                return stop(.fail("netlink stayed broken through \(resync.backoff.attempts) retries: \(reason)"))
            }
            return [.report(.resyncFailed(reason, retryingAfter: delay))]
        case let .announcementsReleased(changed, next):
            heldAnnouncementsDue = next
            if changed { findings.mayChangeTheAnswer() }
            return []
        case let .nat64Learnt(changed):
            if changed { findings.mayChangeTheAnswer() }
            return []
        case let .clocks(asleep):
            asleepSinceBoot = asleep
            return carryOut(sleep.looked(asleep: asleep), at: now, &findings)
        case let .timers(held):
            heldAnnouncementsDue = held
            return timers(at: now, &findings)
        case .quiet:
            return findings.needsEvaluation ? [.evaluate] : settle(evaluated: nil, findings, at: now)
        case let .evaluated(snapshot):
            return settle(evaluated: snapshot, findings, at: now)
        }
    }

    private mutating func handle(_ command: EngineCommand, at now: ContinuousClock.Instant, _ findings: inout WakeUpFindings) -> [EngineAction] {
        switch command {
        case let .fail(reason):
            return stop(.fail(reason))
        case let .reloaded(policy):
            if policy != self.policy {
                self.policy = policy
                findings.mayChangeTheAnswer()  // the path may be satisfied or not under it
            }
            return [.rereadResolverFiles]
        case let .lookUpTargets(keys, reply):
            return [.lookUp(keys, reply: reply)]
        case let .monitorTargets(add, remove):
            monitored.count(add: add, remove: remove)
            // Published with the next snapshot, so subscribers see the new key's answer.
            if !add.isEmpty { findings.mayChangeTheAnswer() }
            // Before the snapshot looks them up, so no route event about a new key is dropped.
            return [.watch(Set(monitored.keys.map(\.address)))]
        case let .someoneListens(listens):
            return Self.actions(for: socketReads.listens(listens, now: now))
        case let .dns64Answered(link, answer):
            return Self.actions(for: dns64.answered(link, answer))
        case let .systemSleeps(sleeping):
            return carryOut(sleep.logind(sleeping: sleeping, asleep: asleepSinceBoot), at: now, &findings)
        }
    }

    /// Before a sleep the socket reads pause; after it every watch whose evidence the sleep
    /// made stale starts afresh: the stall watch, the gateways' entries, DNS64's answers; the
    /// snapshot is taken again (lifetimes that ran out asleep are gone), and the loop is told.
    private mutating func carryOut(_ sleepActions: [SleepWatch.Action], at now: ContinuousClock.Instant,
                                   _ findings: inout WakeUpFindings) -> [EngineAction] {
        var actions: [EngineAction] = []
        for action in sleepActions {
            switch action {
            case .pause:
                socketReads.pauseForSleep()
            case let .woke(after):
                socketReads.woke(now: now)
                findings.mayChangeTheAnswer()
                actions += [.startStallWatchAfresh, .rereadGateways] + Self.actions(for: dns64.askAgain()) + [.announceWake(after: after)]
            }
        }
        return actions
    }

    /// Stops: `ending` is the last action but for the abandoned commands handed in after it.
    private mutating func stop(_ ending: EngineAction) -> [EngineAction] {
        state = .stopped
        return [ending]
    }

    /// What the timers call for at the end of a wake-up's inputs.
    private mutating func timers(at now: ContinuousClock.Instant, _ findings: inout WakeUpFindings) -> [EngineAction] {
        var actions: [EngineAction] = []
        if resync.isDue(now: now) { actions.append(.resynchronize) }
        if let due = heldAnnouncementsDue, now >= due { actions.append(.releaseHeldAnnouncements) }
        resolverWatch.wokeUp(now: now)
        if socketReads.read(now: now) { actions.append(.readSockets) }
        // A due recheck is one more evaluation; a batch evaluated meanwhile already rescheduled it.
        if rechecks.isDue(now: now) { findings.mayChangeTheAnswer() }
        if dns64.takeReevaluation(now: now) { findings.mayChangeTheAnswer() }
        return actions
    }

    /// The end of a wake-up: the snapshot taken, if any, schedules the rechecks, the DNS64
    /// questions and the socket reads; the watchdog is pinged when due; then sleep.
    private mutating func settle(evaluated snapshot: NetworkSnapshot?, _ findings: WakeUpFindings, at now: ContinuousClock.Instant) -> [EngineAction] {
        var actions: [EngineAction] = []
        if let snapshot {
            if let report = rechecks.evaluated(removed: findings.removed, snapshot: snapshot, now: now) { actions.append(.report(report)) }
            actions += Self.actions(for: dns64.evaluated(snapshot, now: now))
            actions += Self.actions(for: socketReads.pathIs(satisfied: PathDerivation.isSatisfied(snapshot, policy: policy), now: now))
        }
        if watchdog.ping(now: now) { actions.append(.pingWatchdog) }
        actions.append(.sleep(until: deadline, pollingNetlink: resync.isFollowing, pollingResolverFiles: resolverWatch.isPolled))
        return actions
    }

    /// The earliest timer: a resync retry, a recheck, the watchdog, a held RA option or a NAT64 prefix's expiry, the
    /// resolver watch's rest, a socket read, an evaluation after a DNS64 withdrawal.
    private var deadline: ContinuousClock.Instant? {
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
