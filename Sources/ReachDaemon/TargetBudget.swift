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

    init(limits: ServerLimits) {
        self.limits = limits
    }

    static func == (left: TargetBudget, right: TargetBudget) -> Bool {
        left.streams == right.streams && left.streamsByUID == right.streamsByUID && left.inFlightByUID == right.inFlightByUID
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
