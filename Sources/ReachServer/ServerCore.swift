import Glibc
import LinuxSystem
import Logging
import NIOCore
import ReachabilityCore
import ReachConfiguration
import ReachConnectivity
import ReachMetrics
import ReachProtocol
import ReachSystemd
import ReachTargets

/// The server on its one event loop: the `Publication` (what is published, whether it
/// changed, and who follows which answer) and the coordination of those who hold the rest:
/// `Subscribers` (the subscribed connections' handlers), `ServedTargets`, the
/// `ConnectionLedger`, `ServerMetrics` and the `ServingState`. Every method runs on the loop,
/// so nothing here needs a lock.
///
/// It carries out the publication's actions: announcements become a log line and a
/// systemd `STATUS=`, group updates are framed once and handed to each member.
package final class ServerCore {
    let eventLoop: any EventLoop
    let logger: Logger
    /// Maps each call to its outcome from what is published (no IO).
    static let dispatcher = VarlinkDispatcher(serviceInfo: .reachd, networkNamespace: FileSystem.networkNamespaceInode())
    /// What the server asks of the engine and what it last told it; who reads reloads.
    private var daemon: DaemonLink
    /// Blocking work, name resolution, connectivity probes and systemd's notify socket.
    let services: ServerServices
    /// Root and reachd's own user may reload; anyone may ask the rest.
    private static let ownUID = UInt32(geteuid())

    private(set) var publication: Publication
    private var subscribers = Subscribers<VarlinkConnectionHandler>()
    private lazy var targets = ServedTargets(
        watches: TargetWatches(eventLoop: eventLoop, engine: daemon.requests, resolver: services.resolver) { [unowned self] in
            publication.state
        },
        limits: limits
    )
    private let ledger: ConnectionLedger
    let metrics: ServerMetrics
    private var serving = ServingState.starting

    init(
        publication: Publication, settings: ServerSettings, eventLoop: any EventLoop, logger: Logger,
        notifier: SystemdNotifier, engine: any EngineRequests, owner: any ServerOwner, counters: DaemonCounters
    ) {
        self.publication = publication
        self.ledger = ConnectionLedger(limits: settings.limits, eventLoop: eventLoop, logger: logger)
        self.metrics = ServerMetrics(counters: counters, logger: logger)
        self.eventLoop = eventLoop
        self.logger = logger
        self.daemon = DaemonLink(engine, owner: owner)
        self.services = ServerServices(settings: settings, eventLoop: eventLoop, logger: logger, notifier: notifier)
        services.connectivity.onChange = { [unowned self] table in perform(self.publication.update(connectivity: table)) }
        services.sleep.onSleep = { [unowned self] sleeping in
            systemSleeps(sleeping)
            // The loop's part is paused and the engine told (it pauses its reads when it takes
            // the command, which needs nothing from the machine): logind may go on.
            if sleeping { services.sleep.paused() }
        }
    }

    /// The socket file this server created (device + inode), if it created one: only that
    /// file is ever removed, never one another daemon put at the path since.
    var socketFile: FileIdentity? { serving.socketFile }

    /// The limits in force.
    var limits: ServerLimits { ledger.limits }

    // MARK: Publishing

    /// A new kernel snapshot from the engine: the path and the connectivity it moves, in one
    /// publication (one sequence, one `STATUS=`).
    func update(snapshot: NetworkSnapshot) {
        let connectivity = services.connectivity.update(snapshot: snapshot, policy: publication.state.policy)
        perform(publication.update(snapshot: snapshot, connectivity: connectivity))
        for waiting in subscribers.release(where: { !publication.state.awaitsRoutes(for: $0) }) {
            switch waiting.subscription {
            case let .path(filter): subscribe(waiting.member, ticket: waiting.ticket, filter: filter).map(waiting.member.deliver)
            case .summary: subscribeSummary(waiting.member, ticket: waiting.ticket).map(waiting.member.deliver)
            }
        }
        targets.refresh()
    }

    /// Tells the engine when someone starts or stops listening for stalls (a subscriber, the
    /// metrics); the engine itself follows whether the path is satisfied, so a flapping route
    /// sends it nothing.
    func updateStallListeners() {
        let listening = DaemonLink.someoneListens(
            subscribers: publication.subscriberCount, metricsEndpoint: metrics.channel != nil, metricsTextfile: metrics.textfileDirectory != nil
        )
        if let command = daemon.someoneListens(listening) { daemon.requests.post(command) }
    }

    /// A new interface policy from a reload.
    func update(policy: InterfacePolicy) {
        let connectivity = services.connectivity.update(snapshot: publication.state.snapshot, policy: policy)
        perform(publication.update(policy: policy, connectivity: connectivity))
        targets.refresh()  // an override may retype an interface, and targets say whether the path ignores it
    }

    private func perform(_ actions: [Publication.Action]) {
        // Subscribers first: the log line, the metrics textfile and STATUS= are text and
        // system calls no subscriber should wait for.
        for action in actions where action.notifiesSubscribers { perform(action) }
        for action in actions where !action.notifiesSubscribers { perform(action) }
    }

    private func perform(_ action: Publication.Action) {
        switch action {
        case let .announce(change):
            metrics.pathChanged()
            logger.info("\(change.line)", metadata: JournalTrail.fields(change))
            metrics.writeTextfile { metricsText() }
            if services.notifier.isListening { services.notifier.status(change.status) }
            // Another path may mean other DNS servers or another network's answers.
            services.resolver.forgetAnswers()
            targets.resolveNamesAgain()
        case let .notify(_, members, update):
            // One update (and one frame) for the whole group, handed to each member.
            let shared = SubscriberUpdate(group: update, frame: Self.frame(update.reply))
            for id in members {
                subscribers[id]?.deliver(shared)
            }
        case let .notifySummary(summary, members):
            let frame = Self.frame(summary)
            for id in members {
                subscribers[id]?.deliver(summary: frame)
            }
        }
    }

    /// A `SubscribeSummary` reply framed for the wire (`continues: true`), once per change.
    package static func frame(_ summary: SummaryReply) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeSummaryReplyFrame(VarlinkReply(parameters: summary, continues: true))
        return buffer
    }

    /// A `Subscribe` reply framed for the wire (`continues: true`). Done once per change
    /// and filter group, so by the direct encoder: the bytes JSONEncoder would give.
    package static func frame(_ reply: StatusReply) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeStatusReplyFrame(VarlinkReply(parameters: reply, continues: true))
        return buffer
    }

    /// A `SubscribeTarget` reply framed for the wire (`continues: true`); nil only if
    /// encoding failed, which reachd's own wire types never do.
    static func frame(_ reply: TargetReply) -> ByteBuffer? {
        var buffer = ByteBuffer()
        do {
            try buffer.writeVarlinkMessage(VarlinkReply(parameters: reply, continues: true))
        } catch {
            return nil
        }
        return buffer
    }

    /// The one reply to a call, framed: `GetStatus`'s by the direct encoder, like the
    /// stream's, any other by JSONEncoder.
    package static func replyFrame(_ parameters: any Codable & Sendable) throws -> ByteBuffer {
        var buffer = ByteBuffer()
        if let status = parameters as? StatusReply {
            buffer.writeStatusReplyFrame(VarlinkReply(parameters: status))
        } else {
            try buffer.writeVarlinkMessage(VarlinkReply(parameters: AnyCodableParameters(parameters)))
        }
        return buffer
    }

    // MARK: Metrics

    /// The Prometheus exposition of what is published now.
    package func metricsText() -> String {
        var facts = metrics.facts(
            state: publication.state, sequence: publication.sequence, subscribers: publication.subscriberCount + targets.clientStreams,
            refusals: ledger.refusals, probing: services.connectivity.isActive
        )
        facts.targets = targets.statuses ?? []
        return MetricsExposition.text(facts)
    }

    /// Where `reachd.prom` is written on every change; written now.
    func writeMetrics(to directory: String) {
        metrics.textfileDirectory = directory
        metrics.writeTextfile { metricsText() }
        updateStallListeners()
    }

    // MARK: Calls and subscriptions

    /// The outcome of a call from `ticket`'s client against the state published now.
    func outcome(for call: AnyVarlinkCall, from ticket: ConnectionTicket) -> CallOutcome {
        let outcome = Self.dispatcher.outcome(for: call, publication: publication, privileged: ticket.uid == 0 || ticket.uid == Self.ownUID)
        guard case let .reply(status as StatusReply) = outcome else { return outcome }
        let watched = targets.statuses
        let lastWake = metrics.wakes.last.map { WakeStatus(at: Int($0.at), asleepSeconds: Int($0.asleep.components.seconds)) }
        guard watched != nil || lastWake != nil else { return outcome }
        return .reply(StatusWithTargets(status: status, targets: watched, lastWake: lastWake))
    }

    /// A client asked for a reload; the future completes when it is applied or refused.
    func requestReload() -> EventLoopFuture<ReloadOutcome> {
        let promise = eventLoop.makePromise(of: ReloadOutcome.self)
        reload(reply: promise)
        return promise.futureResult
    }

    /// Reloads the configuration for a client (`reply`) or SIGHUP (nil): read off the loop,
    /// applied here, then sent to the engine as data (`EngineCommand.reloaded`).
    func reload(reply: EventLoopPromise<ReloadOutcome>?) {
        perform(daemon.reloads.requested(reply))
    }

    private func perform(_ actions: [ReloadQueue.Action]) {
        for action in actions {
            switch action {
            case let .read(askedByClient):
                daemon.owner.reload(askedByClient: askedByClient, work: services.blockingWork).assumeIsolated().whenComplete { [self] result in
                    apply((try? result.get()) ?? ReloadResult(.refused("no thread was free to read the configuration")))
                }
            case let .answer(replies, outcome):
                for reply in replies { reply.succeed(outcome) }
            }
        }
    }

    /// Applies what a reload read, tells systemd it is done (`READY=1`, with the status as
    /// it is now or why the reload was refused) and the engine what is in force.
    private func apply(_ result: ReloadResult) {
        if let targets = result.watchedTargets { watch(configured: targets) }
        if let policy = result.policy { update(policy: policy) }
        switch result.outcome {
        case .applied:
            services.notifier.ready(status: publication.state.path.summary)
        case let .refused(reason):
            services.notifier.send(["READY=1", "STATUS=config reload failed: \(reason)"])
        }
        daemon.requests.post(.reloaded(policy: publication.state.policy))
        perform(daemon.reloads.finished(result.outcome))
    }

    /// What the engine told the loop (`VarlinkServer.deliver`).
    func handle(_ event: EngineEvent) {
        switch event {
        case let .snapshot(snapshot):
            update(snapshot: snapshot)
        case let .stalls(stalls):
            services.connectivity.update(stalls: stalls)
        case let .linkQuality(estimates):
            services.connectivity.update(linkQuality: estimates)
        case .watchdogDue:
            services.notifier.watchdog()
        case .reloadRequested:
            reload(reply: nil)
        case .socketFileMayBeGone:
            daemon.owner.restoreSocketFile(work: services.blockingWork)
        case let .woke(after):
            woke(after: after)
        case let .runBlocking(body, dropped):
            services.blockingWork.submit(for: .daemon, body) { ran in
                if ran == nil { dropped() }
            }
        }
    }

    /// logind says the machine is about to sleep (true) or woke (false): probes pause at
    /// once, and the engine is told (its `SleepWatch` decides the wake, `.woke` comes back).
    /// Returns once the loop's part is paused, so the caller may release its inhibitor.
    func systemSleeps(_ sleeping: Bool) {
        if sleeping {
            logger.info("the system is about to sleep: pausing probes and the stall watch")
            services.connectivity.pauseForSleep()
        }
        daemon.requests.post(.systemSleeps(sleeping))
    }

    /// The machine woke after sleeping `asleep`: everything a sleep makes stale is asked
    /// again (probes, leases, cached names); the verdicts stand until the new answers come.
    private func woke(after asleep: Duration) {
        let wake = metrics.woke(after: asleep)
        logger.notice("woke after \(SleepReport.duration(asleep)): re-validating",
                      metadata: ["asleep_seconds": "\(asleep.components.seconds)", "woke_at": "\(Int(wake.at))"])
        services.connectivity.woke()
        services.resolver.forgetAnswers()
        targets.resolveNamesAgain()
        metrics.writeTextfile { metricsText() }
    }

    /// Adds `handler` to the subscribers of `filter` and returns its first reply; nil when
    /// that answer needs routes still being read at start (see `PathDerivation
    /// .familiesAwaitingRoutes`): the handler is then handed its first reply once they are.
    func subscribe(_ handler: VarlinkConnectionHandler, ticket: ConnectionTicket, filter: PathFilter) -> SubscriberUpdate? {
        if publication.state.awaitsRoutes(for: filter) {
            logger.debug("a Subscribe waits for the routes its filter's answer needs, still being read")
            subscribers.hold(.init(member: handler, ticket: ticket, subscription: .path(filter)))
            return nil
        }
        subscribers.add(handler, id: ticket.id)
        let first = publication.subscribe(filter: filter, id: ticket.id)
        updateStallListeners()
        return SubscriberUpdate(group: first, frame: Self.frame(first.reply))
    }

    /// Adds `handler` to the summary subscribers and returns its first reply, framed; nil
    /// while the unfiltered answer still waits for routes (then as `subscribe`).
    func subscribeSummary(_ handler: VarlinkConnectionHandler, ticket: ConnectionTicket) -> ByteBuffer? {
        if publication.state.awaitsRoutes(for: .none) {
            subscribers.hold(.init(member: handler, ticket: ticket, subscription: .summary))
            return nil
        }
        subscribers.add(handler, id: ticket.id)
        let first = publication.subscribeSummary(id: ticket.id)
        updateStallListeners()
        return Self.frame(first)
    }

    // MARK: Targets

    /// `CheckTarget`: the answer for `target` as `uid` would reach it, unless a limit refuses it.
    func answerCheck(_ target: Target, uid: UInt32) -> EventLoopFuture<DeferredAnswer> {
        switch targets.check(target, uid: uid) {
        case let .success(answer): return answer.map { .reply($0) }
        case let .failure(limit): return eventLoop.makeSucceededFuture(.error(Self.error(limit)))
        }
    }

    /// `SubscribeTarget`: starts `handler`'s stream of answers for `target` (see
    /// `TargetWatches.watch`).
    /// - Returns: the error to answer instead when a limit refuses the stream.
    func subscribeTarget(_ handler: VarlinkConnectionHandler, ticket: ConnectionTicket, target: Target) -> VarlinkError? {
        targets.watch(target, ticket: ticket) { reply in handler.deliver(reply) }.map(Self.error)
    }

    /// Watches what `[targets] watch` names from now on (at start, and on each reload that
    /// changed it): new targets are added, dropped ones stopped, the others keep their stream.
    func watch(configured wanted: [WatchedTarget]) {
        let dropped = targets.watch(configured: wanted) { [unowned self] watched, reply in
            logger.info("\(JournalTrail.line(target: reply.target, uid: watched.uid, path: reply.path))",
                        metadata: JournalTrail.fields(target: reply.target, uid: watched.uid, path: reply.path))
            metrics.writeTextfile { metricsText() }
        }
        if dropped { metrics.writeTextfile { metricsText() } }
    }

    /// `CheckConnectivity`: probe now (joining rounds already running) and answer with the
    /// interfaces once done.
    func answerConnectivityCheck(interface name: String?, uid: UInt32) -> EventLoopFuture<DeferredAnswer> {
        if let limit = targets.spendConnectivityCheck(uid: uid) {
            return eventLoop.makeSucceededFuture(.error(Self.error(limit)))
        }
        guard services.connectivity.isActive else {
            return eventLoop.makeSucceededFuture(.error(.other(name: ReachabilityInterface.Error.probingDisabled, parameters: [:])))
        }
        var index: Int32?
        if let name {
            guard let link = publication.state.snapshot.links.values.first(where: { $0.name == name }) else {
                return eventLoop.makeSucceededFuture(.error(.other(
                    name: ReachabilityInterface.Error.noSuchInterface, parameters: ["interface": .string(name)]
                )))
            }
            index = link.index
        }
        guard let checked = services.connectivity.checkNow(interfaceIndex: index) else {
            return eventLoop.makeSucceededFuture(.error(.other(
                name: ReachabilityInterface.Error.nothingToProbe, parameters: ["interface": name.map(JSONValue.string) ?? .null]
            )))
        }
        return checked.assumeIsolated().map { [self] in
            DeferredAnswer.reply(ListInterfacesReply(interfaces: publication.state.interfaces))
        }.nonisolated()
    }

    private static func error(_ limit: TargetBudget.Limit) -> VarlinkError {
        .other(name: ReachabilityInterface.Error.limitReached, parameters: ["limit": .string(limit.name), "maximum": .integer(limit.maximum)])
    }

    // MARK: Connections

    /// Admits a freshly accepted connection of `uid`, or says which limit refuses it. An
    /// admitted connection is released when it closes, whatever closes it.
    func admit(_ channel: any Channel, uid: UInt32) -> Result<ConnectionTicket, ServerBudget.Limit> {
        guard serving.admitsConnections else { return .failure(.connections) }
        let admitted = ledger.admit(channel, uid: uid)
        if case let .success(ticket) = admitted {
            channel.closeFuture.assumeIsolated().whenComplete { [self] _ in release(ticket) }
        }
        return admitted
    }

    /// A connection now holds `bytes` of an unfinished message; nil if the budget allows it,
    /// else the limit it breaks (the caller closes the connection).
    func buffering(_ ticket: ConnectionTicket, bytes: Int) -> ServerBudget.Limit? {
        ledger.buffering(ticket, bytes: bytes)
    }

    private func release(_ ticket: ConnectionTicket) {
        guard ledger.release(ticket) else { return }
        targets.stop(connection: ticket.id)
        subscribers.remove(ticket.id)
        if publication.unsubscribe(ticket.id) != nil { updateStallListeners() }
    }

    /// Logs, rate-limited per reason, and counts that a client was cut off (`ticket`: which
    /// one) or refused (nil).
    func refuse(_ ticket: ConnectionTicket?, _ refusal: ConnectionRefusal) {
        ledger.refuse(ticket, refusal.reason, refusal.line)
    }

    /// `accept(2)` failed: how long to pause accepting (see `ConnectionLedger.acceptFailed`).
    func acceptFailed(_ error: IOError) -> TimeAmount {
        ledger.acceptFailed(error)
    }

    // MARK: Listening

    /// Serves on `channel` (listening on `socketFile`, if this server created it), instead of
    /// any listener before it. Its closing is fatal unless `shutdown()` or a replacement closed it.
    func adopt(_ channel: any Channel, socketFile: FileIdentity?) {
        let adoption = serving.adopt(channel, socketFile: socketFile)
        if adoption.isFirst {  // probe what the first snapshot shows
            if let table = services.connectivity.update(snapshot: publication.state.snapshot, policy: publication.state.policy) {
                perform(publication.update(connectivity: table))
            }
            services.connectivity.startReadingNetworkManager()
            services.sleep.start()
        }
        channel.closeFuture.assumeIsolated().whenComplete { [self] _ in
            guard serving.isFatal(closing: channel) else { return }
            daemon.requests.post(.fail("the listening socket closed unexpectedly"))
        }
        adoption.toClose?.close(promise: nil)
    }

    /// Stops accepting and closes every connection.
    func shutdown() -> EventLoopFuture<Void> {
        let listener = serving.shutDown()
        services.connectivity.stop()
        services.sleep.stop()
        targets.stopAll()
        services.resolver.shutdown()
        services.blockingWork.shutdown()
        var closing: [EventLoopFuture<Void>] = []
        if let listener { closing.append(listener.close().recover { _ in }) }
        if let channel = metrics.channel { closing.append(channel.close().recover { _ in }) }
        metrics.channel = nil
        closing += ledger.closeAll()
        return EventLoopFuture.andAllComplete(closing, on: eventLoop)
    }
}

extension Publication.Action {
    /// Whether this action writes to subscribers (`ServerCore` carries those out first).
    fileprivate var notifiesSubscribers: Bool {
        if case .notify = self { return true }
        return false
    }
}

extension ServerCore: MetricsSource {
    package func refuseMetricsClient(_ what: String, reason: RefusalReason) {
        ledger.refuse(nil, reason, what)
    }
}
