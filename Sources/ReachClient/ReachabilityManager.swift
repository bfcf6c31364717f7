import Dispatch
import NIOPosix
import Synchronization

/// Watches whether this host — or one host or address — is reachable, shaped like
/// AFNetworking's `AFNetworkReachabilityManager`.
///
/// ```swift
/// let manager = ReachabilityManager(domain: "example.com")!
/// manager.setReachabilityStatusChangeBlock { change in
///     print(change)          // "reachableViaWiFi via wlan0 (network changed: …)"
/// }
/// manager.startMonitoring()  // returns with the status known
/// print(manager.isReachable)
/// ```
///
/// Where it differs from AFNetworking, on purpose:
/// - `networkReachabilityStatus` is right when `startMonitoring()` returns: it waits for
///   reachd's first answer (bounded by the client's timeout), so it is `unknown` only when
///   reachd cannot be reached.
/// - The block hears the first answer too, not only later changes, and every call says why
///   (`ReachabilityChange.cause`, the reason a host is not reachable).
/// - `shared` watches the system's internet path; `init(domain:)` and `init(address:)` watch
///   that host or address (resolved by reachd, routed with this process's uid), each with
///   an initial status.
/// - reachd restarting or not running yet is survived: the manager reconnects with backoff;
///   meanwhile the status is `unknown` and the block is told `daemonUnavailable`.
/// - `isReachableViaWired` and `reachableViaWired` / `reachableViaOther` exist for the
///   Linux interface types.
///
/// Thread safety: every property and method may be used from any thread. The block runs
/// on `callbackQueue`, one call at a time if it is serial, in the order of the changes. A
/// monitoring manager keeps itself alive until `stopMonitoring()`.
public final class ReachabilityManager: Sendable {
    /// The system-wide manager: is this host on the internet at all? (AFNetworking's
    /// `sharedManager` watched 0.0.0.0 too; this one says so.)
    public static let shared = ReachabilityManager()

    /// The host or address watched; nil for the system path.
    public let target: Target?
    /// Where the block runs.
    public let callbackQueue: DispatchQueue
    /// How long `startMonitoring()` waits for reachd's first answer at most.
    public let timeout: Duration

    private struct State {
        var tracker = ReachabilityTracker()
        var block: (@Sendable (ReachabilityChange) -> Void)?
        var run = 0
        var subscription: (any SubscriptionControl)?
        /// Called once with the first answer or outage of the current run.
        var firstEventWaiters: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())
    private let makeSubscription: @Sendable (_ onEvent: @escaping @Sendable (SubscriptionEvent<ReachabilityAnswer>) -> Void) -> any SubscriptionControl

    /// A manager of the system-wide path.
    ///
    /// - Parameters:
    ///   - client: how to reach reachd; its timeout bounds `startMonitoring()`.
    ///   - callbackQueue: where the block runs; a serial queue of the manager's own by
    ///     default (AFNetworking uses the main queue, which on Linux runs only under
    ///     `dispatchMain()` or the main actor: pass `.main` there).
    ///   - reconnectPolicy: how soon to try again when reachd is gone.
    public convenience init(
        client: ReachabilityClient = ReachabilityClient(), callbackQueue: DispatchQueue? = nil,
        reconnectPolicy: ReconnectPolicy = .default
    ) {
        self.init(target: nil, timeout: client.timeout, callbackQueue: callbackQueue, policy: reconnectPolicy) { policy, onEvent in
            ReconnectingSubscription(policy: policy, open: { client.subscribe(filter: .none) }, instance: \.instance) {
                onEvent($0.map { ReachabilityAnswer($0.path) })
            }
        }
    }

    /// A manager of one host (`managerForDomain:`), resolved by reachd; nil when `domain` is
    /// neither a valid host name nor an address.
    public convenience init?(
        domain: String, client: ReachabilityClient = ReachabilityClient(), callbackQueue: DispatchQueue? = nil,
        reconnectPolicy: ReconnectPolicy = .default
    ) {
        guard let target = Target(host: domain) else { return nil }
        self.init(target: target, client: client, callbackQueue: callbackQueue, reconnectPolicy: reconnectPolicy)
    }

    /// A manager of one address (`managerForAddress:`). A link-local IPv6 address needs its
    /// interface: `init(target: .scopedAddress(address, interface: "eth0"))`.
    public convenience init(
        address: IPAddress, client: ReachabilityClient = ReachabilityClient(), callbackQueue: DispatchQueue? = nil,
        reconnectPolicy: ReconnectPolicy = .default
    ) {
        self.init(target: .address(address), client: client, callbackQueue: callbackQueue, reconnectPolicy: reconnectPolicy)
    }

    /// A manager of one target.
    public convenience init(
        target: Target, client: ReachabilityClient = ReachabilityClient(), callbackQueue: DispatchQueue? = nil,
        reconnectPolicy: ReconnectPolicy = .default
    ) {
        self.init(target: target, timeout: client.timeout, callbackQueue: callbackQueue, policy: reconnectPolicy) { policy, onEvent in
            ReconnectingSubscription(policy: policy, open: { client.subscribe(target: target) }, instance: { _ in nil }) {
                onEvent($0.map { ReachabilityAnswer($0.path) })
            }
        }
    }

    /// Any transport: reachd's socket, or a test's fake.
    init(
        target: Target?, timeout: Duration, callbackQueue: DispatchQueue?, policy: ReconnectPolicy,
        subscribe: @escaping @Sendable (ReconnectPolicy, @escaping @Sendable (SubscriptionEvent<ReachabilityAnswer>) -> Void) -> any SubscriptionControl
    ) {
        self.target = target
        self.timeout = timeout
        self.callbackQueue = callbackQueue ?? DispatchQueue(label: "io.reachd.ReachabilityManager")
        self.makeSubscription = { subscribe(policy, $0) }
    }

    /// The status: `unknown` before `startMonitoring()`, after `stopMonitoring()` and while
    /// reachd cannot be reached.
    public var networkReachabilityStatus: ReachabilityStatus { state.withLock { $0.tracker.status } }

    /// Reachable over any interface.
    public var isReachable: Bool {
        switch networkReachabilityStatus {
        case .reachableViaWiFi, .reachableViaWWAN, .reachableViaWired, .reachableViaOther: return true
        case .unknown, .notReachable: return false
        }
    }

    /// Reachable over a cellular interface.
    public var isReachableViaWWAN: Bool { networkReachabilityStatus == .reachableViaWWAN }

    /// Reachable over Wi-Fi.
    public var isReachableViaWiFi: Bool { networkReachabilityStatus == .reachableViaWiFi }

    /// Reachable over wired Ethernet.
    public var isReachableViaWired: Bool { networkReachabilityStatus == .reachableViaWired }

    /// The last change told to the block, with its reason; nil before the first answer.
    public var lastChange: ReachabilityChange? { state.withLock { $0.tracker.lastChange } }

    /// The status in words: "Not Reachable", "Reachable via WiFi", … (English only:
    /// AFNetworking's strings, plus the Linux interface types).
    public var localizedNetworkReachabilityStatusString: String {
        Self.localizedString(for: networkReachabilityStatus)
    }

    /// `AFStringFromNetworkReachabilityStatus`.
    public static func localizedString(for status: ReachabilityStatus) -> String {
        switch status {
        case .unknown: return "Unknown"
        case .notReachable: return "Not Reachable"
        case .reachableViaWWAN: return "Reachable via WWAN"
        case .reachableViaWiFi: return "Reachable via WiFi"
        case .reachableViaWired: return "Reachable via Wired"
        case .reachableViaOther: return "Reachable via Other"
        }
    }

    /// Sets the block called on `callbackQueue` with every change: the first answer, each
    /// answer that differs from the last one told, reachd becoming unavailable and back.
    /// Set it before `startMonitoring()` to hear the first answer.
    public func setReachabilityStatusChangeBlock(_ block: (@Sendable (ReachabilityChange) -> Void)?) {
        state.withLock { $0.block = block }
    }

    /// Starts monitoring and returns once reachd answered (or is found unreachable, or
    /// `timeout` passed): `networkReachabilityStatus` is then right. Does nothing while
    /// monitoring. Blocks the calling thread; from async code the `async` overload is
    /// chosen, and on a SwiftNIO event loop thread it does not wait.
    public func startMonitoring() {
        let semaphore = DispatchSemaphore(value: 0)
        guard begin(onFirstEvent: { semaphore.signal() }) else { return }
        guard MultiThreadedEventLoopGroup.currentEventLoop == nil else { return }
        let (seconds, attoseconds) = (timeout + .seconds(1)).components
        _ = semaphore.wait(timeout: .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
    }

    /// Starts monitoring and returns once reachd answered or was found unreachable (within
    /// the client's timeout): `networkReachabilityStatus` is then right.
    public func startMonitoring() async {
        let once = OnceAction()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            once.set { continuation.resume() }
            if !begin(onFirstEvent: { once.run() }) { once.run() }
        }
    }

    /// Stops monitoring: the connection to reachd closes and the status becomes `unknown`.
    /// The block is not called for it.
    public func stopMonitoring() {
        let (subscription, waiters) = state.withLock { state -> ((any SubscriptionControl)?, [@Sendable () -> Void]) in
            defer {
                state.subscription = nil
                state.tracker = ReachabilityTracker()
                state.firstEventWaiters = []
            }
            return (state.subscription, state.firstEventWaiters)
        }
        subscription?.cancel()
        // A `startMonitoring()` still waiting returns now, with the status unknown.
        for waiter in waiters { waiter() }
    }

    /// Starts a run unless one is going. Returns whether `onFirstEvent` will be called
    /// (once the run has its first status): false when the status is known already.
    private func begin(onFirstEvent: @escaping @Sendable () -> Void) -> Bool {
        let (subscription, waits) = state.withLock { state -> ((any SubscriptionControl)?, Bool) in
            if state.subscription != nil {
                guard state.tracker.lastChange == nil else { return (nil, false) }
                state.firstEventWaiters.append(onFirstEvent)
                return (nil, true)
            }
            state.run += 1
            let run = state.run
            state.firstEventWaiters = [onFirstEvent]
            let subscription = makeSubscription { [self] event in handle(event, run: run) }
            state.subscription = subscription
            return (subscription, true)
        }
        subscription?.start()
        return waits
    }

    private func handle(_ event: SubscriptionEvent<ReachabilityAnswer>, run: Int) {
        let told = state.withLock { state -> (ReachabilityChange?, [@Sendable () -> Void])? in
            guard state.run == run, state.subscription != nil else { return nil }
            let change: ReachabilityChange?
            switch event {
            case let .answer(answer, kind): change = state.tracker.received(answer, kind: kind)
            case let .unavailable(error): change = state.tracker.unavailable(error)
            }
            defer { state.firstEventWaiters = [] }
            return (change, state.firstEventWaiters)
        }
        guard let (change, waiters) = told else { return }
        for waiter in waiters { waiter() }
        guard let change else { return }
        callbackQueue.async { [self] in
            let block = state.withLock { $0.run == run && $0.subscription != nil ? $0.block : nil }
            block?(change)
        }
    }
}

/// Starting and stopping a `ReconnectingSubscription` whatever its reply type.
protocol SubscriptionControl: Sendable {
    /// Starts; does nothing while running.
    func start()
    /// Stops.
    func cancel()
}

extension ReconnectingSubscription: SubscriptionControl {}

extension SubscriptionEvent {
    /// The same event with the reply transformed.
    func map<Other: Sendable>(_ transform: (Reply) -> Other) -> SubscriptionEvent<Other> {
        switch self {
        case let .answer(reply, kind): return .answer(transform(reply), kind)
        case let .unavailable(error): return .unavailable(error)
        }
    }
}

/// An action run at most once, whoever asks first.
private final class OnceAction: Sendable {
    private let action = Mutex<(@Sendable () -> Void)?>(nil)

    func set(_ action: @escaping @Sendable () -> Void) {
        self.action.withLock { $0 = action }
    }

    func run() {
        action.withLock { action in
            defer { action = nil }
            return action
        }?()
    }
}
