import ReachabilityCore
import ReachProtocol

/// The subscribed connections' handlers by connection id (an update's members, named by
/// `Publication`, are looked up here), and the subscribers whose first answer waits for
/// the routes still read at start. Which group each one is in is `Publication`'s to know;
/// `ServerCore` decides and delivers (its members are the connections' handlers).
struct Subscribers<Member> {
    /// A subscriber held back until the routes its filter's answer needs are read.
    struct Waiting {
        let member: Member
        let ticket: ConnectionTicket
        let subscription: Subscription
    }

    private var members: [Int: Member] = [:]
    private var waiting: [Int: Waiting] = [:]

    /// The handler of subscribed connection `id`.
    subscript(id: Int) -> Member? { members[id] }

    /// Records `member` as connection `id`'s handler.
    mutating func add(_ member: Member, id: Int) {
        members[id] = member
    }

    /// Holds a subscriber back until its answer no longer waits for routes.
    mutating func hold(_ subscriber: Waiting) {
        waiting[subscriber.ticket.id] = subscriber
    }

    /// Takes out the held subscribers whose filter's answer no longer waits.
    mutating func release(where ready: (PathFilter) -> Bool) -> [Waiting] {
        let released = waiting.values.filter { ready($0.subscription.filter) }
        for subscriber in released { waiting[subscriber.ticket.id] = nil }
        return released
    }

    /// Forgets connection `id`, subscribed or held.
    mutating func remove(_ id: Int) {
        members[id] = nil
        waiting[id] = nil
    }
}
