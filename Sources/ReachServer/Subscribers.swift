import ReachabilityCore
import ReachProtocol

/// Who subscribed to what: the members of each filter group (the handlers a group's update
/// goes to), each connection's filter, and the subscribers whose first answer waits for
/// the routes still read at start. Bookkeeping only; `ServerCore` decides and delivers.
struct Subscribers {
    /// A `Subscribe` held back until the routes its filter's answer needs are read.
    struct Waiting {
        let handler: VarlinkConnectionHandler
        let ticket: ConnectionTicket
        let filter: PathFilter
    }

    private var members: [PathFilter: [Int: VarlinkConnectionHandler]] = [:]
    private var filters: [Int: PathFilter] = [:]
    private var waiting: [Int: Waiting] = [:]

    /// Subscribed connections (not counting those still waiting for routes).
    var count: Int { filters.count }

    /// The handlers an update of `filter`'s group goes to.
    func group(_ filter: PathFilter) -> Dictionary<Int, VarlinkConnectionHandler>.Values? {
        members[filter]?.values
    }

    /// Adds `handler` (connection `id`) to `filter`'s group.
    mutating func add(_ handler: VarlinkConnectionHandler, id: Int, filter: PathFilter) {
        members[filter, default: [:]][id] = handler
        filters[id] = filter
    }

    /// Holds a subscriber back until its answer no longer waits for routes.
    mutating func hold(_ subscriber: Waiting) {
        waiting[subscriber.ticket.id] = subscriber
    }

    /// Takes out the held subscribers whose filter's answer no longer waits.
    mutating func release(where ready: (PathFilter) -> Bool) -> [Waiting] {
        let released = waiting.values.filter { ready($0.filter) }
        for subscriber in released { waiting[subscriber.ticket.id] = nil }
        return released
    }

    /// Forgets connection `id`; returns the filter it was subscribed with, if it was.
    mutating func remove(_ id: Int) -> PathFilter? {
        waiting[id] = nil
        guard let filter = filters.removeValue(forKey: id) else { return nil }
        members[filter]?[id] = nil
        if members[filter]?.isEmpty == true { members[filter] = nil }
        return filter
    }
}
