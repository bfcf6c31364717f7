import NIOCore

/// Whom blocking work is for: a client's uid (its names), or reachd itself (probes' names and
/// TLS chains, DNS64, networkd's and NetworkManager's answers, files).
package enum WorkOwner: Hashable, Sendable {
    /// A Varlink client (`CheckTarget`, `SubscribeTarget`), by uid.
    case user(UInt32)
    /// reachd's own work.
    case daemon
}

/// Which blocking work runs on a thread when: a pure state machine `BlockingWork` feeds with
/// events (work asked for, finished, given up by its caller) and that answers with actions
/// (start this one, forget that one).
///
/// A blocking `getaddrinfo` cannot be cancelled: a lookup whose caller gave up keeps its
/// thread until glibc returns, maybe minutes later. So each owner holds at most a few
/// threads, abandoned work included, and owners take turns (round-robin, one FIFO queue
/// each): one uid's stuck lookups never delay another's, and reachd's own work has a share
/// no client can take. Queued work whose caller gave up is dropped without ever running.
package struct BlockingSchedule {
    /// How many worker threads may exist, and each owner's share of them.
    package struct Limits: Equatable {
        /// The most threads at once (every owner's lookups, running and abandoned).
        var threads = 32
        /// The most threads one uid may hold.
        var perUser = 4
        /// The threads kept for reachd's own lookups; clients share the rest.
        var daemon = 4
    }

    /// What the resolver does next.
    package enum Action: Equatable {
        /// Run this lookup on a thread of its own now.
        case start(Int)
        /// Forget this lookup: its caller gave up before it ever started.
        case drop(Int)
    }

    package let limits: Limits
    /// Queued lookups by owner, oldest first; an owner is here only while it has some.
    private var queues: [WorkOwner: CircularBuffer<Int>] = [:]
    /// Owners with queued lookups, in the order they get their next turn.
    private var turns: [WorkOwner] = []
    /// Lookups on a thread, by id: whose, and whether their caller gave up.
    private var running: [Int: (owner: WorkOwner, abandoned: Bool)] = [:]
    private var threadsByOwner: [WorkOwner: Int] = [:]
    private var clientThreads = 0

    init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Lookup `id` for `owner` is asked for: it starts at once if the owner's share allows,
    /// else waits its turn.
    package mutating func enqueue(_ id: Int, owner: WorkOwner) -> [Action] {
        if queues[owner] == nil { turns.append(owner) }
        queues[owner, default: []].append(id)
        return startWhatMay()
    }

    /// Lookup `id` returned: its thread is free.
    package mutating func finished(_ id: Int) -> [Action] {
        guard let entry = running.removeValue(forKey: id) else { return [] }
        threadsByOwner[entry.owner, default: 0] -= 1
        if threadsByOwner[entry.owner] == 0 { threadsByOwner[entry.owner] = nil }
        if entry.owner != .daemon { clientThreads -= 1 }
        return startWhatMay()
    }

    /// Lookup `id`'s caller stopped waiting (its deadline passed). A queued lookup is
    /// dropped; a running one is abandoned: it keeps its thread, counted in its owner's
    /// share, until it returns.
    mutating func callerGaveUp(_ id: Int) -> [Action] {
        if running[id] != nil {
            running[id]?.abandoned = true
            return []
        }
        for (owner, queue) in queues {
            guard let index = queue.firstIndex(of: id) else { continue }
            queues[owner]?.remove(at: index)
            if queues[owner]?.isEmpty == true {
                queues[owner] = nil
                turns.removeAll { $0 == owner }
            }
            return [.drop(id)]
        }
        return []
    }

    /// A new caller waits for abandoned lookup `id` (the same owner asked for the same
    /// name again): it is no longer abandoned. False if `id` is not running.
    mutating func callerReturned(_ id: Int) -> Bool {
        guard running[id] != nil else { return false }
        running[id]?.abandoned = false
        return true
    }

    /// Whether `id` runs with nobody waiting for it.
    func isAbandoned(_ id: Int) -> Bool {
        running[id]?.abandoned == true
    }

    /// Threads `owner` holds, running and abandoned lookups alike.
    func threads(of owner: WorkOwner) -> Int {
        threadsByOwner[owner, default: 0]
    }

    /// Threads in use in all.
    var threads: Int { running.count }

    /// Lookups of `owner` waiting for a thread.
    package func queued(for owner: WorkOwner) -> Int {
        queues[owner]?.count ?? 0
    }

    private func mayStart(for owner: WorkOwner) -> Bool {
        switch owner {
        case .daemon:
            return threads(of: owner) < limits.daemon
        case .user:
            return threads(of: owner) < limits.perUser && clientThreads < limits.threads - limits.daemon
        }
    }

    /// Starts the head of each owner's queue in turn while shares allow.
    private mutating func startWhatMay() -> [Action] {
        var actions: [Action] = []
        var index = 0
        while index < turns.count {
            let owner = turns[index]
            guard mayStart(for: owner), let id = queues[owner]?.popFirst() else {
                index += 1
                continue
            }
            running[id] = (owner, false)
            threadsByOwner[owner, default: 0] += 1
            if owner != .daemon { clientThreads += 1 }
            actions.append(.start(id))
            // Its turn is used: to the back of the line, or out of it once its queue is empty.
            turns.remove(at: index)
            if queues[owner]?.isEmpty == true {
                queues[owner] = nil
            } else {
                turns.append(owner)
            }
        }
        return actions
    }
}
