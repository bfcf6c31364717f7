/// When the systemd watchdog is pinged. Pure; `EngineMachine` sequences it.
enum WatchdogTimer: Equatable {
    /// systemd asked for no pings.
    case off
    /// Next at `next`, then every `interval`.
    case pinging(next: ContinuousClock.Instant, interval: Duration)

    /// The timer of an engine started at `now` (no pings when `interval` is nil).
    init(now: ContinuousClock.Instant, interval: Duration?) {
        self = interval.map { .pinging(next: now + $0, interval: $0) } ?? .off
    }

    /// When the next ping is due.
    var deadline: ContinuousClock.Instant? {
        if case let .pinging(next, _) = self { next } else { nil }
    }

    /// Whether to ping at `now`; a ping schedules the next one interval on.
    mutating func ping(now: ContinuousClock.Instant) -> Bool {
        guard case let .pinging(next, interval) = self, now >= next else { return false }
        self = .pinging(next: now + interval, interval: interval)
        return true
    }
}
