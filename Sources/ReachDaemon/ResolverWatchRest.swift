/// Whether the resolver watch is polled: after its events were read it rests, so a process
/// rewriting a file in a loop costs a drain and a read per rest, not per write. Pure;
/// `EngineMachine` sequences it.
struct ResolverWatchRest: Equatable {
    /// Whether the watch is polled.
    enum State: Equatable {
        /// Its events are read as they come.
        case polled
        /// Left out of `poll(2)` until this instant.
        case resting(until: ContinuousClock.Instant)
    }

    /// How long the watch rests after its events were read.
    let rest: Duration
    /// Where it stands.
    private(set) var state = State.polled

    /// A watch resting `rest` after each read.
    init(rest: Duration) {
        self.rest = rest
    }

    /// Whether the watch is in `poll(2)`.
    var isPolled: Bool { state == .polled }

    /// When the rest ends.
    var deadline: ContinuousClock.Instant? {
        if case let .resting(until) = state { until } else { nil }
    }

    /// The engine woke at `now`: a rest that is over ends.
    mutating func wokeUp(now: ContinuousClock.Instant) {
        if let until = deadline, now >= until { state = .polled }
    }

    /// The watch's events were read at `now`: rest.
    mutating func read(now: ContinuousClock.Instant) {
        state = .resting(until: now + rest)
    }
}
