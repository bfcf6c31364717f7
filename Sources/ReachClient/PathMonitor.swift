import Dispatch
import Synchronization

/// Watches how this host reaches the internet, shaped like Apple's `NWPathMonitor`.
///
/// ```swift
/// let monitor = PathMonitor()
/// monitor.pathUpdateHandler = { path in
///     print(path.status == .satisfied ? "online via \(path.primaryInterface ?? "?")" : "offline")
/// }
/// monitor.start(queue: .global())
/// ```
///
/// Where it differs from `NWPathMonitor`, on purpose:
/// - The first path arrives right after `start(queue:)` (reachd answers a new subscriber at
///   once), and `currentPath` is never a placeholder: it is nil until that first answer,
///   and while reachd cannot be reached.
/// - `cancel()` then `start(queue:)` starts again.
/// - A started monitor keeps itself alive until `cancel()`: dropping your reference does
///   not silence the handler.
/// - reachd restarting or not running yet is survived: the monitor reconnects with backoff
///   (`ReconnectPolicy`) and delivers the new run's path. While reachd is unreachable it
///   says so (`unavailableHandler`, `availability`, `Update.unavailable`) instead of
///   making up an unsatisfied path.
/// - `availableInterfaces` are names, and `usesInterfaceType(_:)` answers for the primary
///   interface; the rest of `Path` (status, reason, gateways, cost, families, DNS,
///   connectivity, captive portal, NAT64 prefixes, `linkQuality` as `NWPath.linkQuality`
///   names it, nil from a reachd older than it) is what reachd published. On an
///   IPv6-only network with a NAT64, `path.ipv4ViaNAT64?.synthesize(address)` is where an
///   IPv4 literal is reached, as Apple's stack synthesizes it.
///
/// Thread safety: every property and method may be used from any thread. Handlers run on
/// the queue given to `start(queue:)`, one at a time if it is serial, in the order of the
/// changes; a handler set while the monitor runs is used from the next change on. No
/// handler of a run starts after `cancel()` returns when `cancel()` is called on that
/// queue.
public final class PathMonitor: Sendable {
    /// Where a monitor stands.
    public enum Availability: Sendable, Hashable {
        /// `start(queue:)` was not called yet.
        case notStarted
        /// Started; reachd has not answered yet.
        case connecting
        /// reachd answers; `instance` identifies its run (a new value after a restart).
        case available(instance: String)
        /// reachd cannot be reached; the monitor retries. The error says why.
        case unavailable(ReachClientError)
        /// `cancel()` was called.
        case cancelled
    }

    /// One element of `updates()`.
    public enum Update: Sendable, Hashable {
        /// reachd's path, and what it is to this monitor (first, a change, after a restart …).
        case path(Path, AnswerKind)
        /// reachd cannot be reached; the monitor retries.
        case unavailable(ReachClientError)
    }

    /// Only interfaces of this type may carry the path (`init(requiredInterfaceType:)`).
    public let requiredInterfaceType: InterfaceType?
    /// Interfaces of these types may not carry the path (`init(prohibitedInterfaceTypes:)`).
    public let prohibitedInterfaceTypes: [InterfaceType]

    private struct State {
        var pathUpdateHandler: (@Sendable (Path) -> Void)?
        var unavailableHandler: (@Sendable (ReachClientError) -> Void)?
        var queue: DispatchQueue?
        var currentPath: Path?
        var availability = Availability.notStarted
        /// Grows with every `start`: events and handler calls of an older run are dropped.
        var run = 0
        var subscription: ReconnectingSubscription<StatusReply>?
        var streams: [Int: AsyncStream<Update>.Continuation] = [:]
        var nextStream = 0

        var isRunning: Bool {
            switch availability {
            case .notStarted, .cancelled: return false
            case .connecting, .available, .unavailable: return true
            }
        }
    }

    private let state = Mutex(State())
    private let policy: ReconnectPolicy
    private let open: @Sendable (PathFilter) -> StatusUpdates

    /// A monitor of the system-wide path.
    ///
    /// - Parameters:
    ///   - client: how to reach reachd (socket path, timeout); the default socket by default.
    ///   - reconnectPolicy: how soon to try again when reachd is gone.
    public convenience init(client: ReachabilityClient = ReachabilityClient(), reconnectPolicy: ReconnectPolicy = .default) {
        self.init(filter: .none, policy: reconnectPolicy, open: { client.subscribe(filter: $0) })
    }

    /// A monitor of the path over interfaces of one type only (`NWPathMonitor(requiredInterfaceType:)`).
    public convenience init(
        requiredInterfaceType: InterfaceType, client: ReachabilityClient = ReachabilityClient(),
        reconnectPolicy: ReconnectPolicy = .default
    ) {
        self.init(filter: PathFilter(requiredInterfaceType: requiredInterfaceType), policy: reconnectPolicy,
                  open: { client.subscribe(filter: $0) })
    }

    /// A monitor of the path over interfaces of every type but these
    /// (`NWPathMonitor(prohibitedInterfaceTypes:)`).
    public convenience init(
        prohibitedInterfaceTypes: [InterfaceType], client: ReachabilityClient = ReachabilityClient(),
        reconnectPolicy: ReconnectPolicy = .default
    ) {
        self.init(filter: PathFilter(prohibitedInterfaceTypes: Set(prohibitedInterfaceTypes)), policy: reconnectPolicy,
                  open: { client.subscribe(filter: $0) })
    }

    /// Any transport: reachd's socket, or a test's fake.
    init(filter: PathFilter, policy: ReconnectPolicy, open: @escaping @Sendable (PathFilter) -> StatusUpdates) {
        self.requiredInterfaceType = filter.requiredInterfaceType
        self.prohibitedInterfaceTypes = InterfaceType.allCases.filter(filter.prohibitedInterfaceTypes.contains)
        self.policy = policy
        self.open = open
    }

    /// Called on the start queue with every path: the first one right after `start`, then
    /// each change (of the path as this monitor's interface types see it), and the new
    /// run's path after reachd restarted.
    public var pathUpdateHandler: (@Sendable (Path) -> Void)? {
        get { state.withLock { $0.pathUpdateHandler } }
        set { state.withLock { $0.pathUpdateHandler = newValue } }
    }

    /// Called on the start queue once per outage when reachd cannot be reached (not running
    /// yet, stopped, restarting, permission denied). `currentPath` is nil until it answers again.
    public var unavailableHandler: (@Sendable (ReachClientError) -> Void)? {
        get { state.withLock { $0.unavailableHandler } }
        set { state.withLock { $0.unavailableHandler = newValue } }
    }

    /// The latest path: nil before the first answer, while reachd is unreachable, and
    /// after `cancel()`. Set before the handler for it runs.
    public var currentPath: Path? { state.withLock { $0.currentPath } }

    /// Whether the monitor runs and reachd answers.
    public var availability: Availability { state.withLock { $0.availability } }

    /// The queue handlers run on; nil before `start(queue:)`.
    public var queue: DispatchQueue? { state.withLock { $0.queue } }

    /// Starts monitoring; handlers run on `queue`. Does nothing while running; starts again
    /// after `cancel()`.
    public func start(queue: DispatchQueue) {
        let filter = PathFilter(requiredInterfaceType: requiredInterfaceType, prohibitedInterfaceTypes: Set(prohibitedInterfaceTypes))
        let subscription = state.withLock { state -> ReconnectingSubscription<StatusReply>? in
            guard !state.isRunning else { return nil }
            state.run += 1
            let run = state.run
            state.queue = queue
            state.availability = .connecting
            // The subscription holds this monitor until cancel() drops it: no strong
            // reference is needed while it runs.
            let subscription = ReconnectingSubscription<StatusReply>(
                policy: policy, open: { [open] in open(filter) }, instance: \.instance,
                onEvent: { [self] event in handle(event, run: run) }
            )
            state.subscription = subscription
            return subscription
        }
        subscription?.start()
    }

    /// Stops monitoring, closes the connection to reachd and ends every `updates()`
    /// sequence. `start(queue:)` may be called again.
    public func cancel() {
        let (subscription, streams) = state.withLock { state -> (ReconnectingSubscription<StatusReply>?, [AsyncStream<Update>.Continuation]) in
            guard state.isRunning else { return (nil, []) }
            state.availability = .cancelled
            state.currentPath = nil
            defer { (state.subscription, state.streams) = (nil, [:]) }
            return (state.subscription, Array(state.streams.values))
        }
        subscription?.cancel()
        for stream in streams { stream.finish() }
    }

    /// Every path and outage from now on, starting with the current state when there is
    /// one, until `cancel()`. It does not start the monitor. A consumer that falls behind
    /// gets the newest update, never a backlog.
    public func updates() -> AsyncStream<Update> {
        let (stream, continuation) = AsyncStream<Update>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state -> Int? in
            if state.availability == .cancelled { return nil }
            switch state.availability {
            case let .unavailable(error): continuation.yield(.unavailable(error))
            default: if let path = state.currentPath { continuation.yield(.path(path, .first)) }
            }
            state.nextStream += 1
            state.streams[state.nextStream] = continuation
            return state.nextStream
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.streams.removeValue(forKey: id) }
        }
        return stream
    }

    private func handle(_ event: SubscriptionEvent<StatusReply>, run: Int) {
        let update: Update
        switch event {
        case let .answer(reply, kind): update = .path(reply.path, kind)
        case let .unavailable(error): update = .unavailable(error)
        }
        let delivery = state.withLock { state -> (DispatchQueue?, [AsyncStream<Update>.Continuation])? in
            guard state.run == run, state.isRunning else { return nil }
            switch event {
            case let .answer(reply, _):
                state.currentPath = reply.path
                state.availability = .available(instance: reply.instance)
            case let .unavailable(error):
                state.currentPath = nil
                state.availability = .unavailable(error)
            }
            return (state.queue, Array(state.streams.values))
        }
        guard let (queue, streams) = delivery else { return }
        for stream in streams { stream.yield(update) }
        queue?.async { [self] in
            // The handler as set now; nothing for a run that was cancelled meanwhile.
            let handlers = state.withLock { state -> (pathUpdateHandler: (@Sendable (Path) -> Void)?, unavailableHandler: (@Sendable (ReachClientError) -> Void)?)? in
                guard state.run == run, state.isRunning else { return nil }
                return (state.pathUpdateHandler, state.unavailableHandler)
            }
            switch update {
            case let .path(path, _): handlers?.pathUpdateHandler?(path)
            case let .unavailable(error): handlers?.unavailableHandler?(error)
            }
        }
    }
}

extension PathMonitor: AsyncSequence {
    /// Iterating a monitor yields its paths, like `NWPathMonitor` as an `AsyncSequence`:
    /// the current one first, then every change; an outage yields nothing (see `updates()`).
    public typealias Element = Path
    /// Iterating never fails.
    public typealias Failure = Never

    /// The paths of a monitor.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var updates: AsyncStream<Update>.Iterator

        /// The next path; nil once the monitor is cancelled.
        public mutating func next() async -> Path? {
            while let update = await updates.next() {
                if case let .path(path, _) = update { return path }
            }
            return nil
        }

        /// The next path, keeping the caller's isolation; nil once the monitor is cancelled.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Path? {
            while let update = await updates.next(isolation: actor) {
                if case let .path(path, _) = update { return path }
            }
            return nil
        }
    }

    /// Starts the monitor (on a queue of its own) unless it runs already, and iterates its paths.
    public func makeAsyncIterator() -> AsyncIterator {
        start(queue: DispatchQueue(label: "io.reachd.PathMonitor"))
        return AsyncIterator(updates: updates().makeAsyncIterator())
    }
}
