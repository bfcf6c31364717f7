/// How often what a network announces on a link (an RA's RFC 8910 captive-portal URI) may
/// change what reachd tracks: repeats of the value in force cost nothing, and changes pass
/// through a token bucket per link. A change over the budget is held, not lost: the latest
/// held value is applied when the bucket refills, so after a flood the last announcement
/// is what reachd reports. Pure; the caller supplies the time and the value in force.
///
/// Whoever runs the network sends RAs at will; a new URI in every packet is a flood, not
/// news. Each applied change costs a publication, a log line, `STATUS=` and a probe round,
/// so this bounds all of them per link, whatever the RA rate.
package struct AnnouncementLimiter<Value: Equatable & Sendable>: Sendable {
    /// The budget per link.
    package struct Configuration: Sendable, Equatable {
        /// Changes a link may make at once, after a quiet time.
        package var burst: Int
        /// One more change per interval, once the burst is spent.
        package var interval: Duration

        /// A budget of `burst` changes, refilled by one every `interval`.
        package init(burst: Int, interval: Duration) {
            self.burst = max(1, burst)
            self.interval = max(interval, .nanoseconds(1))
        }

        /// For RA options: 3 changes at once, then one every 2 s (a router's own minimum
        /// between RAs is 3 s, RFC 4861 MIN_DELAY_BETWEEN_RAS, and a real URI rarely changes).
        package static var routerAdvertisements: Configuration { Configuration(burst: 3, interval: .seconds(2)) }
    }

    /// What to do with one announcement.
    package enum Decision: Sendable, Equatable {
        /// Apply it now: it changes the value in force and the link's budget allows it.
        case apply
        /// The value in force again: nothing to do (any held change is dropped: the
        /// network's latest word is the value in force).
        case unchanged
        /// Over budget: held, replacing any earlier held value; `release(now:)` hands it
        /// back at this time unless a later announcement replaced or cancelled it.
        case hold(until: ContinuousClock.Instant)
    }

    private struct Bucket: Sendable {
        var tokens: Int
        var refilledAt: ContinuousClock.Instant
        /// The latest change that was over budget (a box: `Value` may itself be optional).
        var held: [Value] = []
    }

    /// The budget in force.
    package let configuration: Configuration
    private var buckets: [Int32: Bucket] = [:] {
        // Kept with every change: the engine asks after every wake-up, changes are rare.
        didSet {
            let interval = configuration.interval
            nextRelease = buckets.values.lazy.filter { !$0.held.isEmpty }.map { $0.refilledAt + interval }.min()
        }
    }

    /// A limiter where every link starts with a full budget.
    package init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Judges `value`, announced on `link` at `now`, against `current`, the value in force.
    package mutating func offer(_ value: Value, on link: Int32, current: Value, now: ContinuousClock.Instant) -> Decision {
        var bucket = buckets[link] ?? Bucket(tokens: configuration.burst, refilledAt: now)
        defer { buckets[link] = bucket }
        guard value != current else {
            bucket.held = []
            return .unchanged
        }
        refill(&bucket, now: now)
        if bucket.tokens > 0 {
            bucket.tokens -= 1
            bucket.held = []
            return .apply
        }
        bucket.held = [value]
        return .hold(until: bucket.refilledAt + configuration.interval)
    }

    /// The held values whose link has budget again at `now`, to apply now (each spends it).
    package mutating func release(now: ContinuousClock.Instant) -> [(link: Int32, value: Value)] {
        var released: [(link: Int32, value: Value)] = []
        for link in buckets.keys.sorted() {
            guard var bucket = buckets[link], let value = bucket.held.first else { continue }
            refill(&bucket, now: now)
            if bucket.tokens > 0 {
                bucket.tokens -= 1
                bucket.held = []
                released.append((link, value))
            }
            buckets[link] = bucket
        }
        return released
    }

    /// When `release(now:)` next has something to hand back; nil when nothing is held.
    package private(set) var nextRelease: ContinuousClock.Instant?

    /// Whether a change on `link` is held.
    package func holds(on link: Int32) -> Bool {
        !(buckets[link]?.held.isEmpty ?? true)
    }

    /// Drops what `link` holds (the link went down: what its old network said is void);
    /// its budget stays spent.
    package mutating func discardHeld(on link: Int32) {
        buckets[link]?.held = []
    }

    /// Forgets `link` altogether (it is gone).
    package mutating func forget(_ link: Int32) {
        buckets[link] = nil
    }

    /// Adds the tokens earned since the last refill, up to the burst.
    private func refill(_ bucket: inout Bucket, now: ContinuousClock.Instant) {
        guard bucket.tokens < configuration.burst else {
            bucket.refilledAt = now
            return
        }
        guard now > bucket.refilledAt else { return }
        // A Double: the elapsed time may be any length; clamped before it becomes an Int.
        let earned = min(Double(configuration.burst), ((now - bucket.refilledAt) / configuration.interval).rounded(.down))
        guard earned >= 1 else { return }
        bucket.tokens = min(configuration.burst, bucket.tokens + Int(earned))
        bucket.refilledAt = bucket.tokens == configuration.burst ? now : bucket.refilledAt + configuration.interval * Int(earned)
    }
}
