/// How many probe and RFC 8908 API requests may be in flight at once, across every round
/// and interface, and which waiting one goes next. A request holds its slot from the
/// moment it is admitted (name resolution included) until it has an outcome; one over
/// the cap waits, first come first served, and one over the queue is refused at once
/// ("too many probes"). Pure; `HTTPFetcher` carries out what it decides.
///
/// Whoever runs the network decides how often a round starts (each new captive-portal
/// URI is one), so the sockets reachd opens for probes are bounded here, whatever it does.
struct ProbeSlots {
    /// What becomes of a request.
    enum Admission: Equatable {
        /// It has a slot: start it now.
        case start
        /// Every slot is taken: start it when `finished` hands it back.
        case wait
        /// The queue is full too: fail it now.
        case refuse
    }

    /// Requests in flight at most (each is at most one socket and one name resolution).
    /// A round is up to three requests (HTTP, HTTPS, API) per interface and family.
    static let defaultCapacity = 16
    /// Requests waiting for a slot at most.
    static let defaultQueueLimit = 64

    package let capacity: Int
    let queueLimit: Int
    private(set) var running: Set<Int> = []
    private(set) var waiting: [Int] = []

    init(capacity: Int = ProbeSlots.defaultCapacity, queueLimit: Int = ProbeSlots.defaultQueueLimit) {
        self.capacity = max(1, capacity)
        self.queueLimit = max(0, queueLimit)
    }

    /// Request `id` asks for a slot.
    package mutating func admit(_ id: Int) -> Admission {
        if running.count < capacity {
            running.insert(id)
            return .start
        }
        guard waiting.count < queueLimit else { return .refuse }
        waiting.append(id)
        return .wait
    }

    /// Request `id` has its outcome (answered, failed, timed out or cancelled, whether it
    /// ran or waited): the requests to start now, oldest first.
    package mutating func finished(_ id: Int) -> [Int] {
        if let index = waiting.firstIndex(of: id) {
            waiting.remove(at: index)
            return []
        }
        guard running.remove(id) != nil else { return [] }
        var started: [Int] = []
        while running.count < capacity, !waiting.isEmpty {
            let next = waiting.removeFirst()
            running.insert(next)
            started.append(next)
        }
        return started
    }
}
