import NIOCore
import ReachabilityCore
import ReachProtocol

/// Answers for targets: `CheckTarget`'s one answer and `SubscribeTarget`'s streams (what each
/// watches, the keys handed to the engine, the answer last sent, the next re-resolution of a
/// name). Names are resolved off the loop, addresses looked up by the engine, and answers
/// judged (`TargetDerivation`) against the state published when they arrive. On the event
/// loop only; the budget is the caller's.
package final class TargetWatches {
    /// One `SubscribeTarget` stream: what it watches and what its client last got.
    private struct Watch {
        let target: Target
        let uid: UInt32
        /// Hands an answer to the stream's client.
        let deliver: (TargetReply) -> Void
        /// The addresses looked up with every snapshot (empty while the name does not resolve).
        var keys: [TargetKey] = []
        /// The answer last sent; nil before the first.
        var last: TargetPath?
        /// The next re-resolution of a name.
        var reresolve: Scheduled<Void>?

        var isName: Bool { if case .host = target { true } else { false } }
    }

    private let eventLoop: any EventLoop
    private let engine: any EngineRequests
    private let resolver: NameResolver
    /// The state published now (the core's).
    private let published: () -> ReachabilityState
    /// Streams by connection id.
    private var watches: [Int: Watch] = [:]

    /// Watches on `eventLoop`, looking addresses up through `engine` and names through
    /// `resolver`, judging answers against what `published` says is published now.
    package init(eventLoop: any EventLoop, engine: any EngineRequests, resolver: NameResolver, published: @escaping () -> ReachabilityState) {
        self.eventLoop = eventLoop
        self.engine = engine
        self.resolver = resolver
        self.published = published
    }

    /// Open target streams.
    package var count: Int { watches.count }

    /// The answer for `target` as `uid` would reach it: its name resolved, each address
    /// looked up by the engine with that uid, then judged against the state published then.
    package func check(_ target: Target, uid: UInt32) -> EventLoopFuture<TargetReply> {
        resolve(target, uid: uid).assumeIsolated().flatMap { [self] outcome -> EventLoopFuture<TargetReply> in
            switch outcome {
            case let .failed(reason):
                return eventLoop.makeSucceededFuture(TargetReply(target: target.description, path: TargetDerivation.unresolved(reason)))
            case let .addresses(addresses):
                return lookUp(Self.keys(addresses, uid: uid)).assumeIsolated().map { [self] lookups in
                    TargetReply(target: target.description, path: derive(lookups))
                }.nonisolated()
            }
        }.nonisolated()
    }

    /// Starts connection `id`'s stream of answers for `target`: the first at once (like
    /// `check`), then one per change. Its addresses are looked up with every snapshot from
    /// now on; a name is resolved again when the path changes and every
    /// `resolver.cacheLifetime` while the stream lasts.
    package func watch(_ target: Target, uid: UInt32, id: Int, deliver: @escaping (TargetReply) -> Void) {
        watches[id] = Watch(target: target, uid: uid, deliver: deliver)
        resolveAgain(id)
    }

    /// The path changed: names may resolve to other addresses now.
    package func resolveNamesAgain() {
        for (id, watch) in watches where watch.isName { resolveAgain(id) }
    }

    /// Re-judges every stream with the newest snapshot's lookups.
    package func refresh() {
        let snapshot = published().snapshot
        for (id, watch) in watches where !watch.keys.isEmpty && watch.last != nil {
            let lookups = watch.keys.compactMap { snapshot.targetLookup($0) }
            guard lookups.count == watch.keys.count else { continue }  // the engine has not looked them up yet
            send(derive(lookups), to: id)
        }
    }

    /// Ends connection `id`'s stream; returns the uid it counted against, if it had one.
    package func stop(_ id: Int) -> UInt32? {
        guard let watch = watches.removeValue(forKey: id) else { return nil }
        watch.reresolve?.cancel()
        if !watch.keys.isEmpty { engine.post(.monitorTargets(add: [], remove: watch.keys)) }
        return watch.uid
    }

    /// Ends every stream without telling the engine (it is stopping).
    package func stopAll() {
        for watch in watches.values { watch.reresolve?.cancel() }
        watches = [:]
    }

    /// Resolves a watched target (again) and, when its addresses changed, tells the engine;
    /// the first time, and whenever resolution fails, answers from here.
    private func resolveAgain(_ id: Int) {
        guard let watch = watches[id] else { return }
        resolve(watch.target, uid: watch.uid).assumeIsolated().whenSuccess { [self] outcome in
            guard var watch = watches[id] else { return }  // the client left meanwhile
            let keys: [TargetKey]
            switch outcome {
            case let .addresses(addresses): keys = Self.keys(addresses, uid: watch.uid)
            case .failed: keys = []
            }
            if keys != watch.keys {
                engine.post(.monitorTargets(add: keys, remove: watch.keys))
                watch.keys = keys
            }
            if watch.isName {
                watch.reresolve?.cancel()
                watch.reresolve = eventLoop.assumeIsolated().scheduleTask(in: resolver.cacheLifetime) { [self] in resolveAgain(id) }
            }
            watches[id] = watch
            if case let .failed(reason) = outcome {
                send(TargetDerivation.unresolved(reason), to: id)
            } else if watch.last == nil {
                // The first answer: looked up now rather than waiting for the next snapshot.
                lookUp(keys).assumeIsolated().whenSuccess { [self] lookups in
                    guard watches[id]?.keys == keys else { return }
                    send(derive(lookups), to: id)
                }
            }
        }
    }

    private func resolve(_ target: Target, uid: UInt32) -> EventLoopFuture<NameResolver.Outcome> {
        switch target {
        case let .address(address): eventLoop.makeSucceededFuture(.addresses([address]))
        case let .scopedAddress(address, interface):
            eventLoop.makeSucceededFuture(.addresses(ResolvedAddresses(scoped: address, interface: interface)))
        case let .host(name): resolver.resolve(name, hasNameserver: published().snapshot.hasNameserver, owner: .user(uid))
        }
    }

    /// The keys the engine looks up for `addresses` as `uid` asks: each with its scope.
    private static func keys(_ addresses: ResolvedAddresses, uid: UInt32) -> [TargetKey] {
        addresses.scoped.map { TargetKey(address: $0.address, interface: $0.interface, uid: uid) }
    }

    private func lookUp(_ keys: [TargetKey]) -> EventLoopFuture<[TargetLookup]> {
        let promise = eventLoop.makePromise(of: [TargetLookup].self)
        engine.post(.lookUpTargets(keys, reply: promise))
        return promise.futureResult
    }

    private func derive(_ lookups: [TargetLookup]) -> TargetPath {
        let state = published()
        return TargetDerivation.derive(lookups, snapshot: state.snapshot, policy: state.policy)
    }

    /// Sends `path` to the stream's client unless it is what the client has already.
    private func send(_ path: TargetPath, to id: Int) {
        guard let watch = watches[id], watch.last != path else { return }
        watches[id]?.last = path
        watch.deliver(TargetReply(target: watch.target.description, path: path))
    }
}
