import ReachabilityCore
import ReachProtocol

/// What a connection subscribed to: a `Subscribe` stream with its filter, or a
/// `SubscribeSummary` stream.
enum Subscription: Hashable {
    case path(PathFilter)
    case summary

    /// The filter whose answer the stream follows (a summary follows the unfiltered path).
    var filter: PathFilter {
        switch self {
        case let .path(filter): return filter
        case .summary: return .none
        }
    }
}

/// Who subscribed to what: the members of each filter group and of the summary stream
/// (the handlers an update goes to), each connection's subscription, and the subscribers
/// whose first answer waits for the routes still read at start. Bookkeeping only;
/// `ServerCore` decides and delivers (its members are the connections' handlers).
struct Subscribers<Member> {
    /// A subscriber held back until the routes its filter's answer needs are read.
    struct Waiting {
        let member: Member
        let ticket: ConnectionTicket
        let subscription: Subscription
    }

    private var members: [Subscription: [Int: Member]] = [:]
    private var subscriptions: [Int: Subscription] = [:]
    private var waiting: [Int: Waiting] = [:]

    /// Subscribed connections (not counting those still waiting for routes).
    var count: Int { subscriptions.count }

    /// The members an update of `subscription` goes to.
    func group(_ subscription: Subscription) -> Dictionary<Int, Member>.Values? {
        members[subscription]?.values
    }

    /// Adds `member` (connection `id`) to `subscription`'s group.
    mutating func add(_ member: Member, id: Int, to subscription: Subscription) {
        members[subscription, default: [:]][id] = member
        subscriptions[id] = subscription
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

    /// Forgets connection `id`; returns what it was subscribed to, if it was.
    mutating func remove(_ id: Int) -> Subscription? {
        waiting[id] = nil
        guard let subscription = subscriptions.removeValue(forKey: id) else { return nil }
        members[subscription]?[id] = nil
        if members[subscription]?.isEmpty == true { members[subscription] = nil }
        return subscription
    }
}
