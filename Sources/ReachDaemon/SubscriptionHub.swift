import NIOCore
import ReachabilityCore
import ReachProtocol

/// One published change for a filter group: the answer before and after, the reply
/// (whose `changes` are computed from `previous` to `answer`) and that reply framed once
/// for every member.
struct SubscriptionUpdate {
    /// The group's answer before this change.
    var previous: ReachabilityState.Answer
    /// The group's answer now.
    var answer: ReachabilityState.Answer
    /// The reply, `changes` relative to `previous`.
    var reply: StatusReply
    /// `reply` framed for the wire (`continues: true`), shared by the group's members.
    var frame: ByteBuffer
}

/// Receives the replies of one `Subscribe` stream.
protocol StatusSubscriber: AnyObject {
    /// A new answer as this subscriber sees it. Called on the server's event loop.
    func deliver(_ update: SubscriptionUpdate)
}

/// Who is subscribed with which filter, and what each filter's path was last time.
///
/// Subscribers are grouped by filter, so each publish derives a filtered path — and
/// encodes its reply — once per distinct filter, not once per subscriber, and wakes only
/// the groups whose path changed. The frame is a copy-on-write `ByteBuffer` shared by
/// every member.
/// Confined to the server's event loop like everything else there: no locks.
final class SubscriptionHub {
    private struct Group {
        var answer: ReachabilityState.Answer
        var members: [ObjectIdentifier: any StatusSubscriber] = [:]
    }

    private var groups: [PathFilter: Group] = [:]
    private var filters: [ObjectIdentifier: PathFilter] = [:]
    private let allocator = ByteBufferAllocator()

    /// Number of active subscriptions.
    var count: Int { filters.count }

    /// Number of distinct filters in use.
    var filterCount: Int { groups.count }

    /// Adds a subscriber and returns the answer it sees now (its first reply).
    func add(_ subscriber: any StatusSubscriber, filter: PathFilter, state: ReachabilityState) -> ReachabilityState.Answer {
        let id = ObjectIdentifier(subscriber)
        remove(subscriber)
        var group = groups[filter] ?? Group(answer: state.answer(for: filter))
        group.members[id] = subscriber
        groups[filter] = group
        filters[id] = filter
        return group.answer
    }

    /// Removes a subscriber; a no-op if it was not subscribed.
    func remove(_ subscriber: any StatusSubscriber) {
        let id = ObjectIdentifier(subscriber)
        guard let filter = filters.removeValue(forKey: id) else { return }
        groups[filter]?.members[id] = nil
        if groups[filter]?.members.isEmpty == true { groups[filter] = nil }
    }

    /// Re-derives every group's answer for `state` and notifies the groups whose answer
    /// changed, saying what changed.
    func publish(_ state: ReachabilityState, sequence: Int, instance: String) {
        for (filter, group) in groups {
            let answer = state.answer(for: filter)
            guard answer != group.answer else { continue }
            groups[filter]?.answer = answer
            let reply = StatusReply(sequence: sequence, instance: instance, path: answer.path,
                                    changes: answer.changes(since: group.answer))
            guard let frame = frame(for: reply) else { continue }
            let update = SubscriptionUpdate(previous: group.answer, answer: answer, reply: reply, frame: frame)
            for member in group.members.values { member.deliver(update) }
        }
    }

    /// A `Subscribe` reply framed for the wire; nil only if encoding failed, which our
    /// own wire types never do.
    func frame(for reply: StatusReply) -> ByteBuffer? {
        var buffer = allocator.buffer(capacity: 1024)
        do {
            _ = try buffer.writeVarlinkMessage(VarlinkReply(parameters: AnyCodableParameters(reply), continues: true))
        } catch {
            return nil
        }
        return buffer
    }

    /// Drops every subscription.
    func removeAll() {
        groups = [:]
        filters = [:]
    }
}
