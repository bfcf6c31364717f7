import ReachabilityCore
import ReachConfiguration
import ReachProtocol

/// The targets `[targets] watch` names, each watched from start-up on as a `SubscribeTarget`
/// stream is (through the same `TargetWatches`, under an id no connection has), with the
/// answer each last got. They count against no client's budget: the configuration bounds
/// them. On the event loop only.
struct ConfiguredTargets {
    /// One watched target and its latest answer.
    struct Entry {
        var target: WatchedTarget
        /// Its stream's id in `TargetWatches`: negative, so it never meets a connection's.
        var id: Int
        /// Its answer; nil until the first.
        var path: TargetPath?
    }

    /// In the configuration's order.
    private(set) var entries: [Entry] = []
    private var lastID = 0

    /// What changes when the configuration names `wanted`: the entries now (kept ones keep
    /// their id and answer, new ones get a fresh id), the streams to start and to stop. Pure.
    mutating func replace(with wanted: [WatchedTarget]) -> (start: [Entry], stop: [Int]) {
        var kept: [WatchedTarget: Entry] = [:]
        for entry in entries { kept[entry.target] = entry }
        var started: [Entry] = []
        entries = wanted.map { target in
            if let entry = kept.removeValue(forKey: target) { return entry }
            lastID -= 1
            let entry = Entry(target: target, id: lastID)
            started.append(entry)
            return entry
        }
        return (started, kept.values.map(\.id).sorted())
    }

    /// Records stream `id`'s new answer; returns its target, nil when it is no longer watched.
    mutating func record(_ path: TargetPath, id: Int) -> WatchedTarget? {
        guard let index = entries.firstIndex(where: { $0.id == id }) else { return nil }
        entries[index].path = path
        return entries[index].target
    }

    /// What `GetStatus` lists; nil when nothing is watched.
    var statuses: [WatchedTargetStatus]? {
        entries.isEmpty ? nil : entries.map { entry in
            WatchedTargetStatus(target: entry.target.target.description, uid: entry.target.uid.map(Int.init), path: entry.path)
        }
    }

    /// How many streams are the configuration's (not clients').
    var count: Int { entries.count }
}
