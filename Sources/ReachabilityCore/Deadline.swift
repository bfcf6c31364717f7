extension Optional where Wrapped == ContinuousClock.Instant {
    /// The earlier of two deadlines, where nil is none (no timer): what a loop sleeps until
    /// when several timers may be due. No array, as it is asked after every wake-up.
    package func earlier(than other: ContinuousClock.Instant?) -> ContinuousClock.Instant? {
        guard let self, let other else { return self ?? other }
        return Swift.min(self, other)
    }
}
