/// What target checks and streams may hold, in all and per uid: a pure ledger the event
/// loop consults before resolving or watching anything (`ServerLimits` gives the caps).
struct TargetBudget: Equatable {
    /// A limit a request would break: its name on the wire and its value.
    struct Limit: Equatable, Error {
        var name: String
        var maximum: Int
    }

    let limits: ServerLimits
    private(set) var streams = 0
    private var streamsByUID: [UInt32: Int] = [:]
    private var inFlightByUID: [UInt32: Int] = [:]
    /// Token buckets of the uids that asked recently; a full bucket is dropped, so this
    /// holds only users active in the last second.
    private var rateByUID: [UInt32: (tokens: Double, at: ContinuousClock.Instant)] = [:]

    init(limits: ServerLimits) {
        self.limits = limits
    }

    /// Connectivity checks (`CheckConnectivity`) per uid, a minute's worth.
    private var probeRateByUID: [UInt32: (tokens: Double, at: ContinuousClock.Instant)] = [:]

    /// Spends one of `uid`'s target checks per second, or says the rate refuses it.
    mutating func spendCheck(uid: UInt32, now: ContinuousClock.Instant) -> Limit? {
        let allowed = Self.spend(&rateByUID, uid: uid, perSecond: Double(limits.targetChecksPerSecondPerUser),
                                 burst: Double(limits.targetChecksPerSecondPerUser), now: now)
        return allowed ? nil : Limit(name: "target checks per second per user", maximum: limits.targetChecksPerSecondPerUser)
    }

    /// Spends one of `uid`'s connectivity checks per minute, or says the rate refuses it:
    /// each sends packets to the operator's probe server, so a user cannot make reachd flood it.
    mutating func spendConnectivityCheck(uid: UInt32, now: ContinuousClock.Instant) -> Limit? {
        let perMinute = limits.connectivityChecksPerMinutePerUser
        let allowed = Self.spend(&probeRateByUID, uid: uid, perSecond: Double(perMinute) / 60, burst: Double(perMinute), now: now)
        return allowed ? nil : Limit(name: "connectivity checks per minute per user", maximum: perMinute)
    }

    /// One token from `uid`'s bucket (refilled at `perSecond` up to `burst`), if it has one.
    private static func spend(
        _ buckets: inout [UInt32: (tokens: Double, at: ContinuousClock.Instant)], uid: UInt32,
        perSecond: Double, burst: Double, now: ContinuousClock.Instant
    ) -> Bool {
        var bucket = buckets[uid] ?? (tokens: burst, at: now)
        let elapsed = now - bucket.at
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        bucket = (tokens: min(burst, bucket.tokens + seconds * perSecond), at: now)
        guard bucket.tokens >= 1 else {
            buckets[uid] = bucket
            return false
        }
        bucket.tokens -= 1
        buckets[uid] = bucket
        // Forget buckets that have had time to refill (users gone quiet).
        if buckets.count > 64 { buckets = buckets.filter { now - $0.value.at < .seconds(burst / perSecond) } }
        return true
    }

    static func == (left: TargetBudget, right: TargetBudget) -> Bool {
        left.streams == right.streams && left.streamsByUID == right.streamsByUID && left.inFlightByUID == right.inFlightByUID
    }

    /// Admits one `CheckTarget` of `uid`: spends from its rate, then takes one in flight
    /// (give it back with `finishCheck`); or says which limit refuses it.
    mutating func admitCheck(uid: UInt32, now: ContinuousClock.Instant) -> Limit? {
        spendCheck(uid: uid, now: now) ?? startCheck(uid: uid)
    }

    /// Admits one `SubscribeTarget` of `uid`: spends from its check rate, then takes one
    /// stream (give it back with `finishStream`); or says which limit refuses it.
    mutating func admitStream(uid: UInt32, now: ContinuousClock.Instant) -> Limit? {
        spendCheck(uid: uid, now: now) ?? startStream(uid: uid)
    }

    /// Takes one in-flight check for `uid`, or says which limit refuses it.
    mutating func startCheck(uid: UInt32) -> Limit? {
        guard inFlightByUID[uid, default: 0] < limits.targetsInFlightPerUser else {
            return Limit(name: "targets in flight per user", maximum: limits.targetsInFlightPerUser)
        }
        inFlightByUID[uid, default: 0] += 1
        return nil
    }

    /// Gives back an in-flight check of `uid`.
    mutating func finishCheck(uid: UInt32) {
        inFlightByUID[uid, default: 0] -= 1
        if inFlightByUID[uid, default: 0] <= 0 { inFlightByUID[uid] = nil }
    }

    /// Takes one target stream for `uid`, or says which limit refuses it.
    mutating func startStream(uid: UInt32) -> Limit? {
        guard streams < limits.targetStreams else { return Limit(name: "target streams", maximum: limits.targetStreams) }
        guard streamsByUID[uid, default: 0] < limits.targetStreamsPerUser else {
            return Limit(name: "target streams per user", maximum: limits.targetStreamsPerUser)
        }
        streams += 1
        streamsByUID[uid, default: 0] += 1
        return nil
    }

    /// Gives back a target stream of `uid`.
    mutating func finishStream(uid: UInt32) {
        streams -= 1
        streamsByUID[uid, default: 0] -= 1
        if streamsByUID[uid, default: 0] <= 0 { streamsByUID[uid] = nil }
    }
}
