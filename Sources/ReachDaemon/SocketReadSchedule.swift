/// When the TCP sockets are read for stalls: only while someone listens (the server says so,
/// `EngineCommand.someoneListens`) and the last snapshot's path is satisfied (the loop judges
/// that itself, so a route that flaps costs the server no command). Pure; `EngineMachine`
/// sequences it.
struct SocketReadSchedule: Equatable {
    /// When the sockets are read.
    enum State: Equatable {
        /// Not read: nobody listens, the path is not satisfied, or `[stall]` is off.
        case off
        /// Next at this instant, then every `interval`.
        case due(at: ContinuousClock.Instant)
    }

    /// What changed when whether the reads are wanted changed.
    enum Change: Equatable {
        /// Nothing to do now (a start reads its baseline one interval on).
        case none
        /// The reads stopped: forget what they saw, and clear any stall.
        case forget
    }

    /// How often the sockets are read while wanted; nil: never (`[stall] enabled = false`).
    let interval: Duration?
    /// Where it stands.
    private(set) var state = State.off
    /// Whether someone listens for what the reads find (a subscriber, the metrics).
    private(set) var someoneListens = false
    /// Whether the last snapshot's path was satisfied.
    private(set) var pathSatisfied = false
    /// Whether the machine is about to sleep: what the sockets say then is no evidence.
    private(set) var pausedForSleep = false

    /// A schedule reading every `interval` (nil: never).
    init(interval: Duration?) {
        self.interval = interval
    }

    /// When the next read is due.
    var deadline: ContinuousClock.Instant? {
        if case let .due(at) = state { at } else { nil }
    }

    /// The server says whether someone listens, at `now`.
    mutating func listens(_ listens: Bool, now: ContinuousClock.Instant) -> Change {
        someoneListens = listens
        return follow(now: now)
    }

    /// A snapshot taken at `now` says whether the path is satisfied.
    mutating func pathIs(satisfied: Bool, now: ContinuousClock.Instant) -> Change {
        pathSatisfied = satisfied
        return follow(now: now)
    }

    /// The machine is about to sleep: no reads until it wakes; the verdicts stand until then
    /// (nothing is published about the sleep itself).
    mutating func pauseForSleep() {
        pausedForSleep = true
        state = .off
    }

    /// The machine woke at `now`: the reads start afresh at once when wanted (the first one
    /// takes the census of the sockets opened before the sleep, `StallReads.startAfresh`).
    mutating func woke(now: ContinuousClock.Instant) {
        pausedForSleep = false
        state = .off
        if interval != nil, someoneListens, pathSatisfied { state = .due(at: now) }
    }

    /// Whether to read at `now`; a read schedules the next one interval on.
    mutating func read(now: ContinuousClock.Instant) -> Bool {
        guard case let .due(at) = state, now >= at, let interval else { return false }
        state = .due(at: now + interval)
        return true
    }

    /// Starts or stops the reads when whether they are wanted changed.
    private mutating func follow(now: ContinuousClock.Instant) -> Change {
        guard let interval else { return .none }
        switch (someoneListens && pathSatisfied && !pausedForSleep, state) {
        case (true, .off):
            // The first read (the baseline) one interval on: a route that flaps costs no read.
            state = .due(at: now + interval)
            return .none
        case (false, .due):
            state = .off
            return .forget
        case (true, .due), (false, .off):
            return .none
        }
    }
}
