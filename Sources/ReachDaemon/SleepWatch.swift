/// Whether the machine is about to sleep or has just woken, from two witnesses: logind's
/// `PrepareForSleep` (forwarded by the event loop as `EngineCommand.systemSleeps`) and the
/// time the machine spent asleep (`SuspendClock`), looked at whenever the engine wakes anyway,
/// so hosts and containers without logind see a wake too. One wake is reported once, whoever
/// saw it first. Pure; `EngineMachine` sequences it.
struct SleepWatch: Equatable {
    /// What the engine does.
    enum Action: Equatable {
        /// The machine is about to sleep: pause the work that would misread it.
        case pause
        /// The machine woke after sleeping this long: start the watches afresh.
        case woke(after: Duration)
    }

    /// Where the machine stands, with its time asleep since boot when last looked at.
    enum State: Equatable {
        /// Awake.
        case awake(asleepSinceBoot: Duration)
        /// logind said it is about to sleep.
        case goingToSleep(asleepSinceBoot: Duration)
    }

    /// A jump in the time asleep smaller than this is no sleep (the two clocks are read
    /// one after the other, nanoseconds apart).
    static let least: Duration = .seconds(1)

    /// Where it stands.
    private(set) var state: State

    /// A watch started with the machine asleep `asleepSinceBoot` in all so far.
    init(asleepSinceBoot: Duration) {
        state = .awake(asleepSinceBoot: asleepSinceBoot)
    }

    /// logind says the machine is about to sleep (`true`) or woke (`false`); `asleep` is
    /// `SuspendClock.asleepSinceBoot()` now.
    mutating func logind(sleeping: Bool, asleep: Duration) -> [Action] {
        switch (state, sleeping) {
        case let (.awake(before), true):
            state = .goingToSleep(asleepSinceBoot: before)
            // A sleep the clocks saw but nobody reported comes first.
            return asleep - before >= Self.least ? [.woke(after: asleep - before), .pause] : [.pause]
        case (.goingToSleep, true):
            return []
        case let (.goingToSleep(before), false):
            state = .awake(asleepSinceBoot: asleep)
            // An aborted suspend wakes too: the work was paused and must start again.
            return [.woke(after: max(.zero, asleep - before))]
        case (.awake, false):
            // A wake without the sleep before it (reachd started in between, or the signal
            // was lost): the clocks say whether there was one.
            return looked(asleep: asleep)
        }
    }

    /// The engine woke for any reason; `asleep` is `SuspendClock.asleepSinceBoot()` now.
    mutating func looked(asleep: Duration) -> [Action] {
        switch state {
        case let .awake(before):
            guard asleep - before >= Self.least else { return [] }
            state = .awake(asleepSinceBoot: asleep)
            return [.woke(after: asleep - before)]
        case let .goingToSleep(before):
            // logind's wake signal is late or lost: the clocks have seen the sleep end.
            guard asleep - before >= Self.least else { return [] }
            state = .awake(asleepSinceBoot: asleep)
            return [.woke(after: asleep - before)]
        }
    }

    /// Whether logind said the machine is going to sleep and no wake was seen since.
    var isGoingToSleep: Bool {
        if case .goingToSleep = state { return true }
        return false
    }
}
