import ReachabilityCore

/// The target addresses every snapshot looks up, counted: a key is dropped when the last one
/// who asked for it releases it. Pure; `EngineMachine` keeps it.
struct MonitoredTargets: Equatable {
    /// How many asked for each key.
    private(set) var counts: [TargetKey: Int] = [:]

    /// The keys looked up.
    var keys: Dictionary<TargetKey, Int>.Keys { counts.keys }

    /// Counts the keys asked for and released.
    mutating func count(add: [TargetKey], remove: [TargetKey]) {
        for key in add { counts[key, default: 0] += 1 }
        for key in remove {
            counts[key, default: 0] -= 1
            if counts[key, default: 0] <= 0 { counts[key] = nil }
        }
    }
}
