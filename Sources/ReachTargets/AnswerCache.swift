import NIOCore
import ReachabilityCore

/// The answers `NameResolver` reuses: a found name's addresses for `lifetime`, a name that
/// does not exist for 5 s, nothing else (getaddrinfo reports no TTL). Bounded: past
/// `capacity`, expired answers go, then all. Pure: the caller gives the time.
struct AnswerCache {
    /// How long a found name's addresses are reused.
    let lifetime: TimeAmount
    /// The most answers kept.
    let capacity: Int
    private var answers: [String: (expires: NIODeadline, outcome: NameResolver.Outcome)] = [:]
    /// Bumped by `forgetAll`: a lookup asked before then is not remembered.
    private(set) var generation = 0

    init(lifetime: TimeAmount, capacity: Int = 1024) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// The answer for `key` still fresh at `now`.
    func answer(for key: String, at now: NIODeadline) -> NameResolver.Outcome? {
        guard let cached = answers[key], cached.expires > now else { return nil }
        return cached.outcome
    }

    /// Keeps `outcome` for `key` from `now`, if it is worth keeping and was asked for in
    /// this `generation`.
    mutating func remember(_ outcome: NameResolver.Outcome, for key: String, askedIn generation: Int, at now: NIODeadline) {
        guard generation == self.generation else { return }
        let kept: TimeAmount
        switch outcome {
        case .addresses: kept = lifetime
        case .failed(.nameNotFound): kept = .seconds(5)
        case .failed: return
        }
        if answers.count >= capacity { answers = answers.filter { $0.value.expires > now } }
        if answers.count >= capacity { answers = [:] }  // a flood of fresh names: start over
        answers[key] = (now + kept, outcome)
    }

    /// Forgets every answer (the path changed: another network may answer differently).
    mutating func forgetAll() {
        answers = [:]
        generation += 1
    }

    /// How many answers are kept.
    var count: Int { answers.count }
}
