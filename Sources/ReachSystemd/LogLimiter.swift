/// Lets a kind of log line through at most once per interval, counting what it held back,
/// so a hostile client cannot flood the journal and an operator still learns how often it
/// happened. Pure; the caller supplies the time.
package struct LogLimiter {
    /// The quiet time after a line of a kind.
    package let interval: Duration
    private var lastAllowed: [String: ContinuousClock.Instant] = [:]
    private var suppressed: [String: Int] = [:]

    package init(interval: Duration = .seconds(60)) {
        self.interval = interval
    }

    /// Whether a line of `kind` may be logged `now`; when it may, how many of its kind were
    /// held back since the last one logged.
    package mutating func allow(_ kind: String, now: ContinuousClock.Instant) -> (allowed: Bool, suppressed: Int) {
        if let last = lastAllowed[kind], now - last < interval {
            suppressed[kind, default: 0] += 1
            return (false, 0)
        }
        lastAllowed[kind] = now
        return (true, suppressed.removeValue(forKey: kind) ?? 0)
    }
}
