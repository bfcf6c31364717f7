import ReachabilityCore
import ReachProtocol

/// Who subscribed to what: the members of each filter group (the handlers a group's update
/// goes to), each connection's filter, and the subscribers whose first answer waits for
/// the routes still read at start. Bookkeeping only; `ServerCore` decides and delivers
/// (its members are the connections' handlers).
struct Subscribers<Member> {
    /// A `Subscribe` held back until the routes its filter's answer needs are read.
    struct Waiting {
        let member: Member
        let ticket: ConnectionTicket
        let filter: PathFilter
    }

    private var members: [PathFilter: [Int: Member]] = [:]
    private var filters: [Int: PathFilter] = [:]
    private var waiting: [Int: Waiting] = [:]

    /// Subscribed connections (not counting those still waiting for routes).
    var count: Int { filters.count }

    /// The members an update of `filter`'s group goes to.
    func group(_ filter: PathFilter) -> Dictionary<Int, Member>.Values? {
        members[filter]?.values
    }

    /// Adds `member` (connection `id`) to `filter`'s group.
    mutating func add(_ member: Member, id: Int, filter: PathFilter) {
        members[filter, default: [:]][id] = member
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
