/// When to try a failed operation again: exponential backoff with a cap and a limit, so a
/// failure that keeps happening is retried at a falling rate and then given up on, never
/// spun on. Pure; the engine asks it after each failure.
struct RetryBackoff: Equatable {
    /// The first delay.
    package var initial: Duration
    /// No delay is longer than this.
    package var maximum: Duration
    /// Consecutive failures tolerated; the next one means give up.
    var attempts: Int
    /// Failures since the last success.
    private(set) var failures = 0

    /// 100 ms doubling to 10 s, ten times (about 40 s in all).
    static let netlinkResync = RetryBackoff(initial: .milliseconds(100), maximum: .seconds(10), attempts: 10)

    init(initial: Duration, maximum: Duration, attempts: Int) {
        self.initial = initial
        self.maximum = maximum
        self.attempts = attempts
    }

    /// Records a failure; returns how long to wait before the next try, or nil to give up.
    package mutating func failed() -> Duration? {
        failures += 1
        guard failures <= attempts else { return nil }
        var delay = initial
        for _ in 1..<failures where delay < maximum { delay *= 2 }
        return min(delay, maximum)
    }

    /// Records a success: the next failure starts from `initial` again.
    mutating func succeeded() {
        failures = 0
    }
}
