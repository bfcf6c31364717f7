import ReachabilityCore

/// When the lookups are made again: a lookup may predate a removal (`LookupRecheck`, DESIGN
/// rule 6), so after each snapshot the recheck is scheduled, or dropped once trusted or spent.
/// Pure; `EngineMachine` sequences it.
struct RecheckTimer: Equatable {
    /// The schedule and its suspects.
    private(set) var lookups: LookupRecheck
    /// When the next recheck is due (nil: none).
    private(set) var deadline: ContinuousClock.Instant?

    /// A timer on `schedule`'s delays.
    init(schedule: [Duration]) {
        lookups = LookupRecheck(schedule: schedule)
    }

    /// Whether a recheck (one more evaluation) is due at `now`.
    func isDue(now: ContinuousClock.Instant) -> Bool {
        deadline.map { now >= $0 } ?? false
    }

    /// A snapshot was taken at `now` after `removed` were reported gone: what the log hears, if anything.
    mutating func evaluated(removed: Set<DefaultRoute>, snapshot: NetworkSnapshot, now: ContinuousClock.Instant) -> EngineReport? {
        switch lookups.evaluate(removed: removed, snapshot: snapshot) {
        case .trusted:
            deadline = nil
            return nil
        case let .lookAgain(delay):
            deadline = now + delay
            return .lookingAgain(after: delay, attempt: lookups.attempts)
        case .gaveUp:
            deadline = nil
            return .gaveUpRechecking
        }
    }
}
