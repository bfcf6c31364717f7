import Glibc
import LinuxSystem
import Logging
import NIOCore
import ReachabilityCore
import ReachConnectivity
import ReachMetrics
import ReachProtocol
import ReachSystemd
import ReachTargets
import Synchronization
import SystemPackage

/// Everything the server owns, on its one event loop: the `Publication` (what is
/// published and whether it changed), the subscribers of each filter group, the open
/// connections and what they may hold (`ServerBudget`). Every method runs on the loop, so
/// nothing here needs a lock.
///
/// It carries out the publication's actions: announcements become a log line and a
/// systemd `STATUS=`, group updates are framed once and handed to each member.
final class ServerCore {
    let eventLoop: any EventLoop
    let logger: Logger
    let notifier: SystemdNotifier
    let dispatcher: VarlinkDispatcher
    /// What the server asks of the engine (a reload, target lookups); each request carries its reply.
    let engine: any EngineRequests
    /// Resolves target names off the loop.
    let resolver: NameResolver
    /// Connectivity probes and captive-portal APIs; what they find is published.
    let connectivity: ConnectivityMonitor
    /// Target streams by connection id.
    private var targetWatches: [Int: TargetWatch] = [:]
    private var targetBudget: TargetBudget
    /// Root and reachd's own user may reload; anyone may ask the rest.
    private let ownUID = UInt32(geteuid())

    private(set) var publication: Publication
    private var budget: ServerBudget
    private var logLimiter = LogLimiter()
    private var members: [PathFilter: [Int: VarlinkConnectionHandler]] = [:]
    private var subscriptions: [Int: PathFilter] = [:]
    /// Subscribers whose filter's first answer waits for the routes still read at start.
    private var awaitingRoutes: [Int: (handler: VarlinkConnectionHandler, ticket: ConnectionTicket, filter: PathFilter)] = [:]
    private var connections: [Int: any Channel] = [:]
    private var bufferedByConnection: [Int: Int] = [:]
    private var lastConnectionID = 0
    private var isShuttingDown = false
    private var serverChannel: (any Channel)?
    /// The socket file this server created (device + inode), if it created one: only that
    /// file is ever removed, never one another daemon put at the path since.
    private(set) var socketFile: FileIdentity?
    /// The most connections open at once since memory was last given back.
    private var peakConnections = 0
    private var memoryTrim: Scheduled<Void>?
    /// What the engine counts (netlink events, resyncs), for the metrics.
    let counters: DaemonCounters
    /// Connections refused or closed for breaking a limit, by limit, for the metrics.
    private var refusals: [String: Int] = [:]
    /// When the path last changed (or the server started), seconds since the epoch.
    private var lastChange = ServerCore.wallClockSeconds()
    /// The metrics endpoint's listening socket, when `[metrics] listen` is set.
    var metricsChannel: (any Channel)?
    /// Where `reachd.prom` is written on every change, when `[metrics] textfile-directory` is set.
    var metricsTextfileDirectory: String? {
        didSet { writeMetricsTextfile() }
    }

    init(
        publication: Publication, serviceInfo: ServiceInfo, limits: ServerLimits = ServerLimits(), eventLoop: any EventLoop,
        logger: Logger, notifier: SystemdNotifier,
        engine: any EngineRequests,
        resolvedSocket: String? = NameResolver.systemdResolvedSocket,
        connectivity settings: ConnectivitySettings = ConnectivitySettings(),
        probeTLS: (any TLSHandshaking)? = nil, apiTLS: (any TLSHandshaking)? = nil, counters: DaemonCounters = DaemonCounters()
    ) {
        self.counters = counters
        self.publication = publication
        self.dispatcher = VarlinkDispatcher(serviceInfo: serviceInfo)
        self.budget = ServerBudget(limits: limits)
        self.targetBudget = TargetBudget(limits: limits)
        self.eventLoop = eventLoop
        self.logger = logger
        self.notifier = notifier
        self.engine = engine
        self.resolver = NameResolver(eventLoop: eventLoop, resolvedSocket: resolvedSocket)
        self.connectivity = ConnectivityMonitor(
            settings: settings, eventLoop: eventLoop, logger: logger, resolver: resolver, probeTLS: probeTLS, apiTLS: apiTLS
        )
        connectivity.onChange = { [unowned self] table in perform(self.publication.update(connectivity: table)) }
    }

    /// The limits in force.
    var limits: ServerLimits { budget.limits }

    // MARK: Publishing

    /// A new kernel snapshot from the engine.
    func update(snapshot: NetworkSnapshot) {
        perform(publication.update(snapshot: snapshot))
        for (id, waiting) in awaitingRoutes where !publication.state.awaitsRoutes(for: waiting.filter) {
            awaitingRoutes[id] = nil
            subscribe(waiting.handler, ticket: waiting.ticket, filter: waiting.filter).map(waiting.handler.deliver)
        }
        refreshTargetWatches()
        connectivity.update(snapshot: snapshot, policy: publication.state.policy)
    }

    /// A new interface policy from a reload.
    func update(policy: InterfacePolicy) {
        perform(publication.update(policy: policy))
        refreshTargetWatches()  // an interface ignored or not changes targets' answers too
        connectivity.update(snapshot: publication.state.snapshot, policy: policy)
    }

    private func perform(_ actions: [Publication.Action]) {
        // Subscribers first: the log line, the metrics textfile and STATUS= are text and
        // system calls no subscriber should wait for (logging every change at info, the
        // default, cost about 47 µs of scripts/bench's p50 against logging at warning).
        for action in actions where action.notifiesSubscribers { perform(action) }
        for action in actions where !action.notifiesSubscribers { perform(action) }
    }

    private func perform(_ action: Publication.Action) {
        switch action {
        case let .announce(change):
            lastChange = Self.wallClockSeconds()
            logger.info("\(change.line)", metadata: JournalTrail.fields(change))
            writeMetricsTextfile()
            if notifier.isListening { notifier.status(change.status) }
            // Another path may mean other DNS servers or another network's answers.
            resolver.forgetAnswers()
            for id in targetWatches.keys where targetWatches[id]?.isName == true { resolveAgain(id) }
        case let .notify(filter, update):
            guard let group = members[filter] else { return }
            // One update (and one frame) for the whole group, handed to each member.
            let shared = SubscriberUpdate(group: update, frame: Self.frame(update.reply))
            for member in group.values {
                member.deliver(shared)
            }
        }
    }

    /// A `Subscribe` reply framed for the wire (`continues: true`). Done once per change
    /// and filter group, so by the direct encoder: the bytes JSONEncoder would give.
    static func frame(_ reply: StatusReply) -> ByteBuffer {
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
    static func replyFrame(_ parameters: any Codable & Sendable) throws -> ByteBuffer {
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
    func metricsText() -> String {
        MetricsExposition.text(MetricsFacts(
            state: publication.state, sequence: publication.sequence, lastChange: lastChange,
            subscribers: subscriptions.count + targetWatches.count, refusals: refusals,
            netlinkEvents: counters.netlinkEvents.load(ordering: .relaxed),
            resyncs: [
                "lost-events": counters.resyncsAfterLostEvents.load(ordering: .relaxed),
                "receive-failure": counters.resyncsAfterReceiveFailure.load(ordering: .relaxed),
            ],
            probing: connectivity.isActive
        ))
    }

    /// Replaces the textfile, if one is configured. A failure is logged (rate-limited) and
    /// the next change tries again.
    private func writeMetricsTextfile() {
        guard let directory = metricsTextfileDirectory else { return }
        do {
            try MetricsTextfile.write(metricsText(), to: directory)
        } catch {
            let (allowed, suppressed) = logLimiter.allow("metrics textfile", now: .now)
            guard allowed else { return }
            let more = suppressed > 0 ? " (\(suppressed) more since the last such line)" : ""
            logger.warning("cannot write \(directory)/\(MetricsTextfile.name): \(error)\(more)")
        }
    }

    private static func wallClockSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    // MARK: Calls and subscriptions

    /// The outcome of a call from `ticket`'s client against the state published now.
    func outcome(for call: AnyVarlinkCall, from ticket: ConnectionTicket) -> CallOutcome {
        dispatcher.outcome(for: call, publication: publication, privileged: ticket.uid == 0 || ticket.uid == ownUID)
    }

    // MARK: Reloads asked for over Varlink

    /// Asks the owner for a reload; the future completes when it is applied or refused.
    func requestReload() -> EventLoopFuture<ReloadOutcome> {
        let promise = eventLoop.makePromise(of: ReloadOutcome.self)
        engine.reload(reply: promise)
        return promise.futureResult
    }

    // MARK: Targets

    /// The answer for `target` as `uid` would reach it: its name resolved (off the loop),
    /// each address looked up by the engine with that uid, then judged against the state
    /// published now.
    func answerCheck(_ target: Target, uid: UInt32) -> EventLoopFuture<DeferredAnswer> {
        if let limit = targetBudget.spendCheck(uid: uid, now: .now) ?? targetBudget.startCheck(uid: uid) {
            return eventLoop.makeSucceededFuture(.error(Self.error(limit)))
        }
        let answer = checkTarget(target, uid: uid)
        answer.assumeIsolated().whenComplete { [self] _ in targetBudget.finishCheck(uid: uid) }
        return answer.map { .reply($0) }
    }

    // MARK: Connectivity checks asked for over Varlink

    /// `CheckConnectivity`: probe now (joining rounds already running) and answer with the
    /// interfaces once done.
    func answerConnectivityCheck(interface name: String?, uid: UInt32) -> EventLoopFuture<DeferredAnswer> {
        if let limit = targetBudget.spendConnectivityCheck(uid: uid, now: .now) {
            return eventLoop.makeSucceededFuture(.error(Self.error(limit)))
        }
        guard connectivity.isActive else {
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
        return connectivity.checkNow(interfaceIndex: index).assumeIsolated().map { [self] in
            DeferredAnswer.reply(ListInterfacesReply(interfaces: publication.state.interfaces))
        }.nonisolated()
    }

    private static func error(_ limit: TargetBudget.Limit) -> VarlinkError {
        .other(name: ReachabilityInterface.Error.limitReached, parameters: ["limit": .string(limit.name), "maximum": .integer(limit.maximum)])
    }

    func checkTarget(_ target: Target, uid: UInt32) -> EventLoopFuture<TargetReply> {
        resolve(target, uid: uid).assumeIsolated().flatMap { [self] outcome -> EventLoopFuture<TargetReply> in
            switch outcome {
            case let .failed(reason):
                return eventLoop.makeSucceededFuture(TargetReply(target: target.description, path: TargetDerivation.unresolved(reason)))
            case let .addresses(addresses):
                return lookUp(addresses.map { TargetKey(address: $0, uid: uid) }).assumeIsolated().map { [self] lookups in
                    let state = publication.state
                    return TargetReply(target: target.description, path: TargetDerivation.derive(lookups, snapshot: state.snapshot, policy: state.policy))
                }.nonisolated()
            }
        }.nonisolated()
    }

    private func resolve(_ target: Target, uid: UInt32) -> EventLoopFuture<NameResolver.Outcome> {
        switch target {
        case let .address(address): return eventLoop.makeSucceededFuture(.addresses([address]))
        case let .host(name): return resolver.resolve(name, hasNameserver: publication.state.snapshot.hasNameserver, owner: .user(uid))
        }
    }

    private func lookUp(_ keys: [TargetKey]) -> EventLoopFuture<[TargetLookup]> {
        let promise = eventLoop.makePromise(of: [TargetLookup].self)
        engine.lookUp(keys, reply: promise)
        return promise.futureResult
    }

    /// Starts `handler`'s stream of answers for `target`: the first at once (like
    /// `CheckTarget`), then one per change. Its addresses are looked up with every snapshot
    /// from now on; a name is resolved again when the path changes and every
    /// `resolver.cacheLifetime` while the stream lasts.
    /// - Returns: the error to answer instead when a limit refuses the stream.
    func subscribeTarget(_ handler: VarlinkConnectionHandler, ticket: ConnectionTicket, target: Target) -> VarlinkError? {
        if let limit = targetBudget.spendCheck(uid: ticket.uid, now: .now) ?? targetBudget.startStream(uid: ticket.uid) {
            return Self.error(limit)
        }
        targetWatches[ticket.id] = TargetWatch(target: target, uid: ticket.uid, handler: handler)
        resolveAgain(ticket.id)
        return nil
    }

    /// Resolves a watched target (again) and, when its addresses changed, tells the engine;
    /// the first time, and whenever resolution fails, answers from here.
    private func resolveAgain(_ id: Int) {
        guard let watch = targetWatches[id] else { return }
        resolve(watch.target, uid: watch.uid).assumeIsolated().whenSuccess { [self] outcome in
            guard var watch = targetWatches[id] else { return }  // the client left meanwhile
            let keys: [TargetKey]
            switch outcome {
            case let .addresses(addresses): keys = addresses.map { TargetKey(address: $0, uid: watch.uid) }
            case .failed: keys = []
            }
            if keys != watch.keys {
                engine.monitorTargets(add: keys, remove: watch.keys)
                watch.keys = keys
            }
            if watch.isName {
                watch.reresolve?.cancel()
                watch.reresolve = eventLoop.assumeIsolated().scheduleTask(in: resolver.cacheLifetime) { [self] in resolveAgain(id) }
            }
            targetWatches[id] = watch
            if case let .failed(reason) = outcome {
                send(TargetDerivation.unresolved(reason), to: id)
            } else if watch.last == nil {
                // The first answer: looked up now rather than waiting for the next snapshot.
                lookUp(keys).assumeIsolated().whenSuccess { [self] lookups in
                    guard targetWatches[id]?.keys == keys else { return }
                    send(derive(lookups), to: id)
                }
            }
        }
    }

    /// Re-judges every watched target with the newest snapshot's lookups.
    private func refreshTargetWatches() {
        let targets = publication.state.snapshot.targets
        for (id, watch) in targetWatches where !watch.keys.isEmpty && watch.last != nil {
            let lookups = watch.keys.compactMap { key in targets[key].map { TargetLookup(address: key.address, route: $0) } }
            guard lookups.count == watch.keys.count else { continue }  // the engine has not looked them up yet
            send(derive(lookups), to: id)
        }
    }

    private func derive(_ lookups: [TargetLookup]) -> TargetPath {
        TargetDerivation.derive(lookups, snapshot: publication.state.snapshot, policy: publication.state.policy)
    }

    /// Sends `path` to the watch's client unless it is what the client has already.
    private func send(_ path: TargetPath, to id: Int) {
        guard let watch = targetWatches[id], watch.last != path else { return }
        targetWatches[id]?.last = path
        watch.handler.deliver(TargetReply(target: watch.target.description, path: path))
    }

    private func stopWatching(_ id: Int) {
        guard let watch = targetWatches.removeValue(forKey: id) else { return }
        targetBudget.finishStream(uid: watch.uid)
        watch.reresolve?.cancel()
        if !watch.keys.isEmpty { engine.monitorTargets(add: [], remove: watch.keys) }
    }

    /// Adds `handler` to the subscribers of `filter` and returns its first reply; nil when
    /// that answer needs routes still being read at start (see `PathDerivation
    /// .familiesAwaitingRoutes`): the handler is then handed its first reply once they are.
    func subscribe(_ handler: VarlinkConnectionHandler, ticket: ConnectionTicket, filter: PathFilter) -> SubscriberUpdate? {
        if publication.state.awaitsRoutes(for: filter) {
            logger.debug("a Subscribe waits for the routes its filter's answer needs, still being read")
            awaitingRoutes[ticket.id] = (handler, ticket, filter)
            return nil
        }
        members[filter, default: [:]][ticket.id] = handler
        subscriptions[ticket.id] = filter
        let first = publication.subscribe(filter: filter)
        return SubscriberUpdate(group: first, frame: Self.frame(first.reply))
    }

    // MARK: Connections and their budget

    /// Admits a freshly accepted connection of `uid`, or says which limit refuses it. An
    /// admitted connection is released when it closes, whatever closes it.
    func admit(_ channel: any Channel, uid: UInt32) -> Result<ConnectionTicket, ServerBudget.Limit> {
        if isShuttingDown { return .failure(.connections) }
        if let limit = budget.admit(uid: uid) { return .failure(limit) }
        lastConnectionID += 1
        let ticket = ConnectionTicket(id: lastConnectionID, uid: uid)
        connections[ticket.id] = channel
        peakConnections = max(peakConnections, budget.connections)
        channel.closeFuture.assumeIsolated().whenComplete { [self] _ in release(ticket) }
        return .success(ticket)
    }

    /// A connection now holds `bytes` of an unfinished message; nil if the budget allows it,
    /// else the limit it breaks (the caller closes the connection).
    func buffering(_ ticket: ConnectionTicket, bytes: Int) -> ServerBudget.Limit? {
        let old = bufferedByConnection[ticket.id, default: 0]
        if let limit = budget.rebuffer(uid: ticket.uid, from: old, to: bytes) { return limit }
        bufferedByConnection[ticket.id] = bytes == 0 ? nil : bytes
        return nil
    }

    private func release(_ ticket: ConnectionTicket) {
        guard connections.removeValue(forKey: ticket.id) != nil else { return }
        budget.release(uid: ticket.uid, bufferedBytes: bufferedByConnection.removeValue(forKey: ticket.id) ?? 0)
        stopWatching(ticket.id)
        awaitingRoutes[ticket.id] = nil
        if let filter = subscriptions.removeValue(forKey: ticket.id) {
            members[filter]?[ticket.id] = nil
            if members[filter]?.isEmpty == true { members[filter] = nil }
            publication.unsubscribe(filter: filter)
        }
        scheduleMemoryTrimIfABurstLeft()
    }

    /// glibc keeps memory a burst of clients freed: once many of them have gone (32 fewer
    /// connections than the peak), give it back a couple of seconds after the last leaves.
    private func scheduleMemoryTrimIfABurstLeft() {
        guard peakConnections - budget.connections >= 32 else { return }
        memoryTrim?.cancel()
        memoryTrim = eventLoop.assumeIsolated().scheduleTask(in: .seconds(2)) { [self] in
            ProcessResources.returnFreedMemory()
            peakConnections = budget.connections
            memoryTrim = nil
        }
    }

    /// Logs, rate-limited per kind, that a client was cut off (`ticket`: which one) or
    /// refused (nil: `what` says who).
    func refuse(_ ticket: ConnectionTicket?, _ what: String, kind: String) {
        refusals[kind, default: 0] += 1
        let (allowed, suppressed) = logLimiter.allow(kind, now: .now)
        guard allowed else { return }
        let more = suppressed > 0 ? " (\(suppressed) more like it since the last such line)" : ""
        let line = ticket.map { "closing connection \($0.id) of uid \($0.uid): \(what)\(more)" } ?? "\(what)\(more)"
        logger.notice("\(line)", metadata: JournalTrail.fields(limit: kind, uid: ticket?.uid))
    }

    /// `accept(2)` failed (descriptors exhausted, most likely): how long to wait before
    /// accepting again, so a full descriptor table costs no CPU. Logged at most once a minute.
    func acceptFailed(_ error: IOError) -> TimeAmount {
        let (allowed, suppressed) = logLimiter.allow("accept", now: .now)
        if allowed {
            let more = suppressed > 0 ? " (\(suppressed) more since the last such line)" : ""
            logger.warning("cannot accept connections: \(Errno(rawValue: error.errnoCode)); pausing accepts for 1 s\(more)")
        }
        return .seconds(1)
    }

    /// Serves on `channel` (listening on `socketFile`, if this server created it), instead of
    /// any listener before it. Its closing is fatal unless `shutdown()` or a replacement closed it.
    func adopt(_ channel: any Channel, socketFile: FileIdentity?) {
        if serverChannel == nil {  // first start: probe what the first snapshot shows
            connectivity.update(snapshot: publication.state.snapshot, policy: publication.state.policy)
        }
        let replaced = serverChannel
        serverChannel = channel
        self.socketFile = socketFile
        channel.closeFuture.assumeIsolated().whenComplete { [self] _ in
            guard !isShuttingDown, serverChannel === channel else { return }
            engine.fail("the listening socket closed unexpectedly")
        }
        // Connections accepted by the old listener stay open: they are not its children to close.
        replaced?.close(promise: nil)
    }

    /// Stops accepting and closes every connection.
    func shutdown() -> EventLoopFuture<Void> {
        isShuttingDown = true
        memoryTrim?.cancel()
        connectivity.stop()
        for watch in targetWatches.values { watch.reresolve?.cancel() }
        targetWatches = [:]
        resolver.shutdown()
        var closing: [EventLoopFuture<Void>] = []
        if let serverChannel { closing.append(serverChannel.close().recover { _ in }) }
        serverChannel = nil
        if let metricsChannel { closing.append(metricsChannel.close().recover { _ in }) }
        metricsChannel = nil
        for channel in connections.values { closing.append(channel.close().recover { _ in }) }
        return EventLoopFuture.andAllComplete(closing, on: eventLoop)
    }
}

/// One `SubscribeTarget` stream: what it watches and what its client last got.
private struct TargetWatch {
    let target: Target
    let uid: UInt32
    let handler: VarlinkConnectionHandler
    /// The addresses looked up with every snapshot (empty while the name does not resolve).
    var keys: [TargetKey] = []
    /// The answer last sent; nil before the first.
    var last: TargetPath?
    /// The next re-resolution of a name.
    var reresolve: Scheduled<Void>?

    var isName: Bool { if case .host = target { return true } else { return false } }
}

extension Publication.Action {
    /// Whether this action writes to subscribers (`ServerCore` carries those out first).
    fileprivate var notifiesSubscribers: Bool {
        if case .notify = self { return true }
        return false
    }
}

extension ServerCore: MetricsSource {
    func refuseMetricsClient(_ what: String, kind: String) {
        refuse(nil, what, kind: kind)
    }
}
