/// How long a monitor waits before connecting to reachd again after a connection failed.
///
/// The delay doubles with every failure in a row, from `initialDelay` up to `maximumDelay`,
/// and each wait is drawn at random from the upper half of the current delay, so the many
/// clients of a host that lost reachd at the same moment do not all come back at once.
public struct ReconnectPolicy: Sendable, Hashable {
    /// The delay after the first failure.
    public var initialDelay: Duration
    /// No wait is longer than this: how stale a monitor can be once reachd is back.
    public var maximumDelay: Duration

    /// 50 ms doubling to 2 s: a restart under systemd (a second or so) is noticed within
    /// about a second of reachd answering again, and a stopped reachd costs one failed
    /// `connect` every 1–2 s.
    public static let `default` = ReconnectPolicy(initialDelay: .milliseconds(50), maximumDelay: .seconds(2))

    /// Creates a policy; `maximumDelay` below `initialDelay` is raised to it.
    public init(initialDelay: Duration, maximumDelay: Duration) {
        self.initialDelay = max(initialDelay, .zero)
        self.maximumDelay = max(maximumDelay, self.initialDelay)
    }

    /// The wait after `failures` failures in a row (1 or more); `jitter` in 0..<1 picks the
    /// point in the upper half of the delay.
    package func delay(afterFailures failures: Int, jitter: Double) -> Duration {
        var delay = initialDelay
        for _ in 1..<max(failures, 1) where delay < maximumDelay { delay *= 2 }
        delay = min(delay, maximumDelay)
        let fraction = 0.5 + 0.5 * min(max(jitter, 0), 1)
        return delay * fraction
    }
}

/// What an answer from reachd is to a monitor's user.
public enum AnswerKind: Sendable, Hashable {
    /// The first answer after `start`.
    case first
    /// The next answer on the same connection: the network changed.
    case update
    /// The first answer after reconnecting to the same run of reachd (the connection
    /// broke, reachd did not restart).
    case reconnected
    /// The first answer from a new run of reachd (its `instance` differs from the last one
    /// seen): reachd restarted while the monitor ran.
    case restarted
}

/// The decisions of a subscription that survives reachd going away: when to connect, when
/// to wait, what a reply means, when to tell the user that reachd is unavailable. Pure: it
/// returns actions, and `ReconnectingSubscription` carries them out.
///
/// Every connection attempt gets a new generation; events of an older one (a reply that
/// raced `cancel()`, a timer of a previous run) are ignored, so `cancel()` then `start()`
/// is safe at any moment.
struct SubscriptionStateMachine: Sendable {
    /// Where the subscription stands.
    enum State: Sendable, Hashable {
        /// Never started.
        case idle
        /// Connecting (or waiting for the first reply) as attempt `generation`.
        case connecting(generation: Int)
        /// Receiving replies on attempt `generation`.
        case streaming(generation: Int)
        /// Attempt `generation` failed; the next is made after a wait.
        case waiting(generation: Int)
        /// Stopped by the user; `start()` begins again.
        case cancelled
    }

    /// What to do.
    enum Action: Sendable, Hashable {
        /// Open a subscription; its events carry `generation`.
        case connect(generation: Int)
        /// Hand the reply just received to the user, as this kind of delivery.
        case deliver(AnswerKind)
        /// Tell the user reachd is unavailable (once per outage; see `failed`).
        case reportUnavailable(ReachClientError)
        /// Start a timer; when it fires, send `retryDue(generation:)` with this generation.
        case retry(after: Duration, generation: Int)
        /// Close the connection and stop any timer.
        case disconnect
    }

    private(set) var state: State = .idle
    private let policy: ReconnectPolicy
    private var generation = 0
    /// Connection failures in a row.
    private var failures = 0
    /// The run of reachd that answered last (`StatusReply.instance`); kept across
    /// reconnects and restarts of the subscription.
    private var lastInstance: String?
    /// Whether this outage was reported already.
    private var reportedUnavailable = false
    /// Whether the current run of the subscription delivered anything yet.
    private var deliveredSinceStart = false

    init(policy: ReconnectPolicy) {
        self.policy = policy
    }

    /// The user starts (or restarts after `cancel()`); a running subscription ignores it.
    mutating func start() -> [Action] {
        switch state {
        case .idle, .cancelled:
            deliveredSinceStart = false
            reportedUnavailable = false
            failures = 0
            return [connectNext()]
        case .connecting, .streaming, .waiting:
            return []
        }
    }

    /// The user cancels.
    mutating func cancel() -> [Action] {
        switch state {
        case .idle, .cancelled:
            return []
        case .connecting, .streaming, .waiting:
            state = .cancelled
            return [.disconnect]
        }
    }

    /// A reply arrived on attempt `generation`; `instance` is reachd's run, when the reply
    /// carries it (target answers do not).
    mutating func received(instance: String?, generation: Int) -> [Action] {
        let wasConnecting: Bool
        switch state {
        case .connecting(generation): wasConnecting = true
        case .streaming(generation): wasConnecting = false
        default: return []
        }
        state = .streaming(generation: generation)
        failures = 0
        reportedUnavailable = false
        let delivery: AnswerKind
        if !deliveredSinceStart {
            delivery = .first
        } else if !wasConnecting {
            delivery = .update
        } else if let instance, let lastInstance, instance != lastInstance {
            delivery = .restarted
        } else {
            delivery = .reconnected
        }
        deliveredSinceStart = true
        if let instance { lastInstance = instance }
        return [.deliver(delivery)]
    }

    /// Attempt `generation` failed: connecting was refused, or the subscription ended with
    /// `error`. `jitter` (0..<1) spreads the wait. An outage is reported at once before
    /// the first answer, and after it only when reconnecting failed too.
    mutating func failed(_ error: ReachClientError, generation: Int, jitter: Double) -> [Action] {
        switch state {
        case .connecting(generation), .streaming(generation): break
        default: return []
        }
        failures += 1
        state = .waiting(generation: generation)
        var actions: [Action] = []
        // A connection that answered and then broke gets one quick retry before the user
        // hears of it: under socket activation a restart never shows as an outage, and
        // without it the retry fails within `initialDelay`.
        if !reportedUnavailable, failures > 1 || !deliveredSinceStart {
            reportedUnavailable = true
            actions.append(.reportUnavailable(error))
        }
        actions.append(.retry(after: policy.delay(afterFailures: failures, jitter: jitter), generation: generation))
        return actions
    }

    /// The wait after attempt `generation` failed is over.
    mutating func retryDue(generation: Int) -> [Action] {
        guard case .waiting(generation) = state else { return [] }
        return [connectNext()]
    }

    private mutating func connectNext() -> Action {
        generation += 1
        state = .connecting(generation: generation)
        return .connect(generation: generation)
    }
}
