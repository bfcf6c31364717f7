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

/// What reachd publishes, and the one place that decides whether it changed and for whom.
///
/// A pure state machine owned by the event loop (swift-nio style: inputs in, actions out).
/// Inputs are what the engine saw (a new kernel snapshot), what a reload decided (a new
/// interface policy), what probes found (connectivity) and subscribers coming and going; the actions say what to announce
/// (log line, systemd `STATUS=`) and which filter groups to send which reply. The server
/// carries the actions out; nothing here does IO.
///
/// `sequence` starts at 1 and grows by one when the unfiltered answer changes. Subscribers
/// (connection ids; their handlers are the server's) are grouped by filter here and nowhere
/// else, so each change derives a filtered path once per distinct filter, and only groups
/// whose own answer changed are woken. Summary subscribers (`SubscribeSummary`) are woken
/// only when the unfiltered path's summary changed.
package struct Publication {
    /// A change for one filter group, before it is framed for the wire.
    package struct GroupUpdate: Equatable {
        /// The group's answer before the change.
        var previous: ReachabilityState.Answer
        /// The group's answer now.
        var answer: ReachabilityState.Answer
        /// The reply, with `changes` from `previous` to `answer`.
        package var reply: StatusReply
    }

    /// What the owner must do after an input.
    enum Action: Equatable {
        /// The system-wide answer changed: log `change.line` at info (a structured journal
        /// entry when the journal is the log) and tell systemd `change.status`. The text is
        /// built by whoever uses it, so a change nobody logs costs no string.
        case announce(AnnouncedChange)
        /// A group's answer changed: send `update` to its `members` (connection ids).
        case notify(filter: PathFilter, members: Set<Int>, update: GroupUpdate)
        /// The summary changed: send it to its `members` (connection ids).
        case notifySummary(SummaryReply, members: Set<Int>)
    }

    /// The subscribers with one filter and the answer they were last sent.
    private struct Group {
        var answer: ReachabilityState.Answer
        var members: Set<Int> = []
    }

    /// Identifies this daemon run in every reply.
    let instance: String
    /// The state published now.
    package private(set) var state: ReachabilityState
    /// Grows by one per change of the unfiltered answer.
    private(set) var sequence = 1
    private var groups: [PathFilter: Group] = [:]
    /// The unfiltered path's summary, as summary subscribers were last sent it.
    private(set) var summary: SummaryReply
    private var summaryMembers: Set<Int> = []
    /// What each subscribed connection follows: where `unsubscribe` finds it.
    private var subscriptions: [Int: Subscription] = [:]

    /// Starts from the first derived state.
    package init(instance: String, snapshot: NetworkSnapshot, policy: InterfacePolicy) {
        self.instance = instance
        self.state = ReachabilityState(snapshot: snapshot, policy: policy)
        self.summary = SummaryReply(state.path)
    }

    /// The engine saw the kernel change (or only thinks it did: equal snapshots are no-ops),
    /// with the connectivity table that change made, if it made one: one publication for both.
    mutating func update(snapshot: NetworkSnapshot, connectivity: ConnectivityTable? = nil) -> [Action] {
        let connectivity = connectivity ?? state.connectivity
        guard snapshot != state.snapshot || connectivity != state.connectivity else { return [] }
        return publish(ReachabilityState(snapshot: snapshot, policy: state.policy, connectivity: connectivity))
    }

    /// A reload changed how interfaces are treated (and, with that, maybe connectivity).
    mutating func update(policy: InterfacePolicy, connectivity: ConnectivityTable? = nil) -> [Action] {
        let connectivity = connectivity ?? state.connectivity
        guard policy != state.policy || connectivity != state.connectivity else { return [] }
        return publish(ReachabilityState(snapshot: state.snapshot, policy: policy, connectivity: connectivity))
    }

    /// Probes or a captive-portal API said something new about an interface.
    mutating func update(connectivity: ConnectivityTable) -> [Action] {
        guard connectivity != state.connectivity else { return [] }
        return publish(ReachabilityState(snapshot: state.snapshot, policy: state.policy, connectivity: connectivity))
    }

    /// Adds connection `id` to the subscribers with `filter` and returns its first reply
    /// (the answer it sees now, nothing changed yet).
    package mutating func subscribe(filter: PathFilter, id: Int) -> GroupUpdate {
        unsubscribe(id)
        var group = groups[filter] ?? Group(answer: state.answer(for: filter))
        group.members.insert(id)
        groups[filter] = group
        subscriptions[id] = .path(filter)
        let reply = StatusReply(sequence: sequence, instance: instance, path: group.answer.path, changes: [])
        return GroupUpdate(previous: group.answer, answer: group.answer, reply: reply)
    }

    /// Adds connection `id` to the summary subscribers and returns its first reply (the summary now).
    package mutating func subscribeSummary(id: Int) -> SummaryReply {
        unsubscribe(id)
        summaryMembers.insert(id)
        subscriptions[id] = .summary
        return summary
    }

    /// Removes connection `id` from what it follows (a filter group goes with its last
    /// member); returns what that was, nil when it followed nothing.
    @discardableResult
    mutating func unsubscribe(_ id: Int) -> Subscription? {
        guard let subscription = subscriptions.removeValue(forKey: id) else { return nil }
        switch subscription {
        case let .path(filter):
            groups[filter]?.members.remove(id)
            if groups[filter]?.members.isEmpty == true { groups[filter] = nil }
        case .summary:
            summaryMembers.remove(id)
        }
        return subscription
    }

    /// Number of subscribers, all filters and summaries together.
    var subscriberCount: Int { subscriptions.count }

    /// The `GetStatus` reply now.
    var statusReply: StatusReply { StatusReply(sequence: sequence, instance: instance, path: state.path) }

    /// The decision: did anything anyone sees change, and for whom.
    private mutating func publish(_ next: ReachabilityState) -> [Action] {
        let previous = state
        state = next
        var actions: [Action] = []
        if next.answer != previous.answer {
            sequence += 1
            let changes = next.answer.changes(since: previous.answer)
            actions.append(.announce(AnnouncedChange(sequence: sequence, changes: changes, path: next.path)))
        }
        for index in groups.indices {
            let before = groups.values[index].answer
            let filter = groups.keys[index]
            let answer = next.answer(for: filter)
            guard answer != before else { continue }
            groups.values[index].answer = answer
            let reply = StatusReply(sequence: sequence, instance: instance, path: answer.path, changes: answer.changes(since: before))
            let update = GroupUpdate(previous: before, answer: answer, reply: reply)
            actions.append(.notify(filter: filter, members: groups.values[index].members, update: update))
        }
        let summary = SummaryReply(next.path)
        if summary != self.summary {
            self.summary = summary
            if !summaryMembers.isEmpty { actions.append(.notifySummary(summary, members: summaryMembers)) }
        }
        return actions
    }
}
