import FoundationEssentials
import Glibc
import Logging
import NIOCore
import ReachabilityCore
import ReachConfiguration
import ReachTargets

/// Connectivity checks on the event loop that owns the published state: one
/// `ProbeSchedule` per interface and family it may probe (`ProbeSchedule.eligibleTargets`),
/// carrying out each schedule's actions (start a round, arm or cancel its timer) and
/// keeping the facts every round finds (`ConnectivityTable`), which the server publishes.
///
/// A round is the HTTP check and the HTTPS check (those configured), in parallel, plus the
/// network's RFC 8908 API when one was announced and fetching it is on; `ProbeVerdict`
/// judges the checks, `CaptivePortalAPI` the API's answer. Nothing runs unless `[probe]`
/// names an endpoint or `[captive-portal] fetch-api` is on and a network announced an API:
/// no timer, no socket, no wakeup.
///
/// A round that is no longer current (a newer one started, the interface stopped being
/// eligible, reachd stops) is cancelled at once: its sockets are closed and its names no
/// longer waited for. How many requests run at once is `HTTPFetcher`'s cap.
///
/// What sources outside the kernel say (systemd-networkd's portals, NetworkManager, the
/// DHCP leases) comes from `ConnectivitySources` and is merged by `SourceFacts`.
package final class ConnectivityMonitor {
    private struct Entry {
        var schedule: ProbeSchedule
        var context: ProbeContext
        var timer: Scheduled<Void>?
        /// Ends the running round's requests when a newer round supersedes it.
        var running: FetchCancellation?
        /// Clients waiting for the running round (`CheckConnectivity`).
        var waiters: [EventLoopPromise<Void>] = []
    }

    private let eventLoop: any EventLoop
    private let logger: Logger
    private let settings: ConnectivitySettings
    /// What a round sends, through which TLS checks.
    private let requests: ProbeRequests
    /// systemd-networkd's portals, NetworkManager and the DHCP leases.
    private let sources: ConnectivitySources
    private var entries: [ProbeKey: Entry] = [:]
    private var lastInputs: (snapshot: NetworkSnapshot, policy: InterfacePolicy)?
    /// Awake, with the stalls waiting for the probe round that decides them; or paused for
    /// a sleep, when no round starts until the wake.
    private enum Phase {
        case awake(StallConfirmation)
        case asleep
    }
    private var phase = Phase.awake(StallConfirmation())
    /// What is known, published through `onChange`.
    private(set) var table: ConnectivityTable = [:]
    /// Called on the loop whenever `table` changed.
    package var onChange: (ConnectivityTable) -> Void = { _ in }

    /// `work` runs the name lookups, networkd's answers and the lease reads.
    package init(settings: ConnectivitySettings, eventLoop: any EventLoop, logger: Logger, resolver: NameResolver, work: BlockingWork,
         probeTLS: (any TLSHandshaking)?, apiTLS: (any TLSHandshaking)?) {
        self.settings = settings
        self.eventLoop = eventLoop
        self.logger = logger
        self.requests = ProbeRequests(fetcher: HTTPFetcher(eventLoop: eventLoop, resolver: resolver, work: work), probeTLS: probeTLS, apiTLS: apiTLS)
        self.sources = ConnectivitySources(settings: settings, eventLoop: eventLoop, logger: logger, work: work)
        // Weak: an answer on its way when the monitor is gone has no table to change.
        sources.onChange = { [weak self] in self?.reapply() }
    }

    /// Whether anything may ever be probed or fetched.
    package var isActive: Bool { settings.probe.isEnabled || settings.captivePortal.fetchAPI }

    // MARK: Inputs

    /// The kernel's view changed (or the interface policy did): start, re-start or stop
    /// schedules, and record the captive-portal APIs the networks announced. Returns the
    /// table when this changed it, for the caller to publish with the snapshot that changed
    /// it: one publication per event, so nothing goes through `onChange` from here.
    @discardableResult
    package func update(snapshot: NetworkSnapshot, policy: InterfacePolicy) -> ConnectivityTable? {
        lastInputs = (snapshot, policy)
        sources.update(snapshot)
        let facts = sources.facts(
            for: snapshot, routerAdvertisements: settings.captivePortal.routerAdvertisements ? snapshot.announcedCaptivePortals : [:]
        )
        // Nothing configured, announced or known: the common case costs nothing more.
        guard isActive || !facts.isEmpty || !table.isEmpty else { return nil }
        var next = facts.merged(into: table, links: snapshot.links)
        let eligible = ProbeRoster.eligible(snapshot, policy: policy, settings: settings, announcedAPIs: facts.announced)
        let changes = ProbeRoster.changes(running: entries.mapValues(\.context), eligible: eligible)
        for case let .stop(key) in changes {
            perform(entries[key]?.schedule.pathChanged(eligible: false) ?? [], for: key)
            entries[key]?.running?.cancel()
            finishWaiters(of: key)
            entries[key] = nil
            if next[key.interfaceIndex] != nil { next[key.interfaceIndex]?[key.family] = .unknown }
        }
        let changed = record(next)
        for change in changes {
            switch change {
            case .stop:
                continue
            case let .start(key, context):
                entries[key] = Entry(schedule: ProbeSchedule(configuration: settings.probe.schedule), context: context)
                probe(key, on: context)
            case let .retarget(key, context):
                entries[key]?.context = context
                probe(key, on: context)
            }
        }
        return changed ? table : nil
    }

    /// `key`'s schedule follows `context` from now on.
    private func probe(_ key: ProbeKey, on context: ProbeContext) {
        logger.debug("probing", metadata: ["interface": "\(context.interfaceName)", "family": "\(key.family.rawValue)"])
        perform(entries[key]?.schedule.pathChanged(eligible: true) ?? [], for: key)
    }

    /// The engine's stall verdicts (`DataStallDetector`): each stalled interface, since when
    /// and on what evidence. With probes on the interface a round runs first and its verdict
    /// decides (`StallConfirmation`); a published stall makes connectivity limited
    /// (`ProbeVerdict.combine`) until it clears.
    package func update(stalls: [Int32: DataStall]) {
        let probed = settings.probe.isEnabled ? Set(entries.keys.map(\.interfaceIndex)) : []
        perform(stallConfirmation.engineFound(stalls, published: table.compactMapValues(\.dataStall), probed: probed, now: .now))
    }

    private func perform(_ actions: [StallConfirmation.Action]) {
        for action in actions {
            switch action {
            case let .probe(index, stall, at):
                logger.debug("TCP traffic looks stalled; probing before it is published",
                             metadata: ["interface": "\(interfaceName(index))"].merging(Self.evidence(stall)) { $1 })
                eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(max(.zero, at - .now))) { [self] in
                    guard stallConfirmation.isAwaiting(stall, on: index) else { return }
                    guard let round = checkNow(interfaceIndex: index) else {
                        return perform(stallConfirmation.probeFinished(on: index, for: stall))
                    }
                    round.assumeIsolated().whenComplete { [self] _ in perform(stallConfirmation.probeFinished(on: index, for: stall)) }
                }
            case let .publish(index, stall):
                publish(stall, on: index)
            }
        }
    }

    /// The engine's link-quality estimates (`LinkQualityEstimator`), every interface's after a
    /// read: kept per interface, and a class change logged.
    package func update(linkQuality estimates: [Int32: LinkQualityEstimate]) {
        var next = table
        for index in Set(next.keys).union(estimates.keys) {
            let estimate = estimates[index]
            if estimate != nil, let snapshot = lastInputs?.snapshot, snapshot.links[index] == nil { continue }
            var facts = next[index] ?? InterfaceConnectivity()
            let before = facts.linkQuality?.linkQuality ?? .unknown
            facts.linkQuality = estimate
            next[index] = facts == InterfaceConnectivity() ? nil : facts
            let after = estimate?.linkQuality ?? .unknown
            if after != before {
                logger.notice("link quality \(after.rawValue)", metadata: [
                    "interface": "\(interfaceName(index))", "link_quality": "\(after.rawValue)", "was": "\(before.rawValue)",
                    "rtt_ms": "\(estimate?.rtt.map(String.init) ?? "-")", "rate_bps": "\(estimate?.deliveryRate.map(String.init) ?? "-")",
                    "samples": "\(estimate?.rttSamples ?? 0)",
                ])
            }
        }
        commit(next)
    }

    private func publish(_ stall: DataStall?, on index: Int32) {
        // A stall on a link the kernel view no longer has is stale: the next snapshot drops it anyway.
        if stall != nil, let snapshot = lastInputs?.snapshot, snapshot.links[index] == nil { return }
        var next = table
        var facts = next[index] ?? InterfaceConnectivity()
        let wasLimiting = facts.cause != nil
        facts.dataStall = stall
        next[index] = facts == InterfaceConnectivity() ? nil : facts
        commit(next)
        var metadata: Logger.Metadata = ["interface": "\(interfaceName(index))"]
        if let stall { metadata.merge(Self.evidence(stall)) { $1 } }
        switch StallNews.of(stall, facts: facts, wasLimiting: wasLimiting) {
        case .none: break
        case .stalled: logger.notice("TCP traffic stalled", metadata: metadata)
        case .behindPortal: logger.info("TCP traffic looked stalled behind a captive portal: the portal stands", metadata: metadata)
        case .contradictedByProbe:
            logger.info("TCP traffic looked stalled, but a probe round since reached its server: connectivity stands", metadata: metadata)
        case .flowsAgain: logger.notice("TCP traffic flows again", metadata: metadata)
        }
    }

    /// Starts following NetworkManager (`[network-manager] read`), when the system bus is
    /// there; its answers are merged like a kernel change.
    package func startReadingNetworkManager() { sources.startReadingNetworkManager() }

    /// A source's answer arrived: merged like a kernel change.
    private func reapply() {
        guard let (snapshot, policy) = lastInputs, let changed = update(snapshot: snapshot, policy: policy) else { return }
        onChange(changed)
    }

    /// Whether the latest snapshot has a nameserver to resolve a probe's name with.
    private var isAsleep: Bool {
        if case .asleep = phase { return true }
        return false
    }

    /// The stalls awaiting their round; none while asleep (the engine reads no sockets then).
    private var stallConfirmation: StallConfirmation {
        get {
            if case let .awake(confirmation) = phase { return confirmation }
            return StallConfirmation()
        }
        set {
            if case .awake = phase { phase = .awake(newValue) }
        }
    }

    private var hasNameserver: Bool { lastInputs?.snapshot.hasNameserver ?? false }

    private func interfaceName(_ index: Int32) -> String { lastInputs?.snapshot.links[index]?.name ?? "\(index)" }

    /// What a stall rests on, as log fields.
    private static func evidence(_ stall: DataStall) -> Logger.Metadata {
        ["since": "\(stall.since)", "sockets": "\(stall.sockets)", "destinations": "\(stall.destinations)", "uids": "\(stall.users)"]
    }

    /// A client asked for a check now (`CheckConnectivity`, `reachctl probe`); the future
    /// completes when the rounds it started or joined are done. Nil when nothing may be
    /// probed (no interface, or not `interfaceIndex`, carries a usable route).
    package func checkNow(interfaceIndex: Int32?) -> EventLoopFuture<Void>? {
        let keys = entries.keys.sorted().filter { interfaceIndex == nil || $0.interfaceIndex == interfaceIndex }
        guard !keys.isEmpty else { return nil }
        var waits: [EventLoopFuture<Void>] = []
        for key in keys {
            perform(entries[key]?.schedule.probeRequested() ?? [], for: key)
            guard entries[key]?.schedule.isProbing == true else { continue }
            let promise = eventLoop.makePromise(of: Void.self)
            entries[key]?.waiters.append(promise)
            waits.append(promise.futureResult)
        }
        return EventLoopFuture.andAllSucceed(waits, on: eventLoop)
    }

    /// The machine is about to sleep: every round and timer stops, and the verdicts stand
    /// (nothing is published about the sleep itself). A round a change asks for meanwhile
    /// waits for the wake.
    package func pauseForSleep() {
        phase = .asleep
        for key in entries.keys {
            // Superseded: a round cut short by the sleep must not publish a failure.
            perform(entries[key]?.schedule.pathChanged(eligible: false) ?? [], for: key)
            entries[key]?.timer?.cancel()
            entries[key]?.timer = nil
            entries[key]?.running?.cancel()
            entries[key]?.running = nil
        }
    }

    /// The machine woke: every interface probes at once, its backoff started afresh, and
    /// keeps its verdict until that round's replaces it (no intermediate value is
    /// published); the leases are read again.
    package func woke() {
        phase = .awake(StallConfirmation())
        sources.woke()
        for key in entries.keys.sorted() {
            perform(entries[key]?.schedule.pathChanged(eligible: true) ?? [], for: key)
        }
    }

    /// Stops every timer (reachd is stopping, or the settings are replaced).
    package func stop() {
        sources.stop()
        for key in entries.keys {
            entries[key]?.timer?.cancel()
            entries[key]?.running?.cancel()
            finishWaiters(of: key)
        }
        entries = [:]
        if !isAsleep { phase = .awake(StallConfirmation()) }  // a round a stall scheduled finds nothing awaited
    }

    // MARK: Carrying out the schedule's actions

    private func perform(_ actions: [ProbeSchedule.Action], for key: ProbeKey) {
        for action in actions {
            switch action {
            case let .startProbe(round):
                // Asleep: the wake starts a round of its own.
                if !isAsleep { startRound(round, for: key) }
            case let .armTimer(at):
                if isAsleep { continue }
                entries[key]?.timer?.cancel()
                entries[key]?.timer = eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(max(.zero, at - .now))) { [self] in
                    entries[key]?.timer = nil
                    perform(entries[key]?.schedule.timerFired() ?? [], for: key)
                }
            case .cancelTimer:
                entries[key]?.timer?.cancel()
                entries[key]?.timer = nil
            }
        }
    }

    private func finishWaiters(of key: ProbeKey) {
        for waiter in entries[key]?.waiters ?? [] { waiter.succeed(()) }
        entries[key]?.waiters = []
    }

    // MARK: One round

    private func startRound(_ round: Int, for key: ProbeKey) {
        guard let context = entries[key]?.context else { return }
        // The round this one supersedes ends now, not at its deadline.
        entries[key]?.running?.cancel()
        let cancellation = FetchCancellation()
        entries[key]?.running = cancellation
        let api: HTTPEndpoint? = settings.captivePortal.fetchAPI
            ? context.announcedAPI.flatMap { try? CaptivePortalAPI.validate(apiURI: $0).get() }.flatMap(HTTPEndpoint.init)
            : nil
        requests.send(settings.probe, api: api, for: key, hasNameserver: hasNameserver, cancellation: cancellation, on: eventLoop)
            .assumeIsolated().whenSuccess { [self] answers in
                finishRound(round, for: key, http: answers.http, https: answers.https, api: answers.api, apiURI: context.announcedAPI)
            }
    }

    private func finishRound(_ round: Int, for key: ProbeKey, http: HTTPFetcher.Result?, https: HTTPFetcher.Result?,
                             api: HTTPFetcher.Result?, apiURI: String?) {
        guard let entry = entries[key], entry.schedule.isCurrent(round: round) else { return }  // superseded
        entries[key]?.running = nil
        let judgement = ProbeVerdict.judge(http: http?.outcome, https: https?.outcome, expect: settings.probe.expectation)
        var apiAnswer: CaptivePortal?
        if let api {
            switch Self.apiAnswer(api) {
            case let .success(answer): apiAnswer = answer
            case let .failure(problem):
                logger.info("captive-portal API not used", metadata: ["interface": "\(entry.context.interfaceName)", "reason": "\(problem)"])
            }
        }
        let outcome = ProbeVerdict.settle(
            judgement, apiAnswer: apiAnswer, apiURI: apiURI, family: key.family, probesEnabled: settings.probe.isEnabled,
            facts: table[key.interfaceIndex] ?? InterfaceConnectivity(), checkedAt: Int(time(nil))
        )
        let now = ContinuousClock.now
        let sessionEnds = outcome.sessionSecondsLeft.map { ProbeSchedule.instant(seconds: $0, after: now) }
        let actions = entries[key]?.schedule.probeFinished(round: round, connectivity: outcome.scheduleVerdict, sessionEnds: sessionEnds, now: now) ?? []
        log(key: key, context: entry.context, verdict: outcome.scheduleVerdict, http: http, https: https, next: actions, now: now)
        var next = table
        next[key.interfaceIndex] = outcome.facts
        commit(next)
        finishWaiters(of: key)  // after the commit: their answers show this round
        perform(actions, for: key)
    }

    /// What an API fetch came to: the RFC 8908 state, or why it is not used.
    static func apiAnswer(_ result: HTTPFetcher.Result) -> Swift.Result<CaptivePortal, CaptivePortalAPI.Problem> {
        guard case let .response(response) = result.outcome else {
            return .failure(.malformed("no answer: \(result.outcome)"))
        }
        guard response.status == 200 else { return .failure(.malformed("status \(response.status)")) }
        return CaptivePortalAPI.parse(body: result.body, contentType: response.headers["content-type"])
    }

    /// The round's verdict and when the schedule checks next (`next`: "in 300 s", or
    /// "none" when nothing is planned).
    private func log(key: ProbeKey, context: ProbeContext, verdict: Connectivity, http: HTTPFetcher.Result?, https: HTTPFetcher.Result?,
                     next actions: [ProbeSchedule.Action], now: ContinuousClock.Instant) {
        var metadata: Logger.Metadata = ["interface": "\(context.interfaceName)", "family": "\(key.family.rawValue)"]
        let next = actions.lazy.compactMap { action -> Duration? in
            if case let .armTimer(at) = action { return at - now }
            return nil
        }.first
        metadata["next"] = "\(next.map { "in \($0.components.seconds) s" } ?? "none")"
        if let http { metadata["http"] = "\(Self.summary(http.outcome))" }
        if let https { metadata["https"] = "\(Self.summary(https.outcome))" }
        logger.debug("probe round: \(verdict.rawValue)", metadata: metadata)
    }

    private static func summary(_ outcome: ProbeOutcome) -> String {
        switch outcome {
        case let .response(response): return "\(response.status)" + (response.location.map { " → \($0)" } ?? "")
        case .timedOut: return "timed out"
        case let .failed(reason): return reason
        case let .untrusted(reason): return "untrusted: \(reason)"
        }
    }

    /// Keeps `next`; whether it differs from the table before.
    private func record(_ next: ConnectivityTable) -> Bool {
        guard next != table else { return false }
        table = next
        return true
    }

    /// Keeps `next` and, when it changed anything, publishes it (an answer that arrived on its own).
    private func commit(_ next: ConnectivityTable) {
        if record(next) { onChange(next) }
    }
}

/// What connectivity checks run with: `[probe]` and `[captive-portal]`.
package struct ConnectivitySettings: Sendable, Equatable {
    /// `[probe]`.
    package var probe = ReachdConfiguration.Probe()
    /// `[captive-portal]`.
    package var captivePortal = ReachdConfiguration.CaptivePortalSettings()
    /// systemd-networkd's Varlink socket, asked for the portals its links learned.
    package var networkdSocket: String? = NetworkdPortals.defaultSocket
    /// `[network-manager] read`.
    package var readsNetworkManager = true
    /// Where DHCP clients keep the leases read for `ANDROID_METERED`.
    package var dhcpLeases = DHCPLeaseFiles()

    /// Off: no probes, no API fetches (router advertisements are still read).
    package init() {}
}
