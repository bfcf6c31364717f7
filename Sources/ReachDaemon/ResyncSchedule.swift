/// Whether the tracked state follows the kernel's events, and when a broken one is dumped
/// again: a failed read or resync is retried on `RetryBackoff` until one succeeds or the
/// retries are spent. Pure; `EngineMachine` sequences it.
struct ResyncSchedule: Equatable {
    /// Whether the tracked state follows the kernel's events.
    enum State: Equatable {
        /// Events are read as they come.
        case following
        /// A read or resync failed: the event socket is left out of `poll(2)` (it would spin)
        /// until the resync due at this instant succeeds.
        case resyncing(at: ContinuousClock.Instant)
    }

    /// Where it stands.
    private(set) var state = State.following
    /// The retries after a failure.
    private(set) var backoff: RetryBackoff

    /// A schedule retrying on `backoff`.
    init(backoff: RetryBackoff) {
        self.backoff = backoff
    }

    /// Whether the event socket is polled (not while a resync waits: it would spin).
    var isFollowing: Bool { state == .following }

    /// When the next resync is due, if one waits.
    var deadline: ContinuousClock.Instant? {
        if case let .resyncing(at) = state { at } else { nil }
    }

    /// A read failed at `now`: resync at once.
    mutating func readFailed(now: ContinuousClock.Instant) {
        state = .resyncing(at: now)
    }

    /// Whether a resync is due at `now`.
    func isDue(now: ContinuousClock.Instant) -> Bool {
        deadline.map { now >= $0 } ?? false
    }

    /// The resync worked: follow the events again, and start the next failure's retries afresh.
    mutating func resynchronized() {
        backoff.succeeded()
        state = .following
    }

    /// The resync failed at `now`: the delay until the next try, or nil when the retries are spent.
    mutating func resyncFailed(now: ContinuousClock.Instant) -> Duration? {
        guard let delay = backoff.failed() else { return nil }
        state = .resyncing(at: now + delay)
        return delay
    }
}
