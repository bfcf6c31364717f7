import NIOCore
import ReachabilityCore
import ReachConfiguration
import ReachProtocol
import ReachTargets

/// The target side of the server: the watches behind `CheckTarget` and `SubscribeTarget`,
/// the targets `[targets] watch` names with the answers they last got, and the budget
/// clients spend on them. On the event loop only; what a request may take is
/// `TargetBudget`'s to say, what a new list starts and stops `ConfiguredTargets`'.
final class ServedTargets {
    private let watches: TargetWatches
    private var configured = ConfiguredTargets()
    private var budget: TargetBudget

    /// Serves through `watches`, holding clients to `limits`.
    init(watches: TargetWatches, limits: ServerLimits) {
        self.watches = watches
        self.budget = TargetBudget(limits: limits)
    }

    /// Target streams clients opened (the configured targets' not counted).
    var clientStreams: Int { watches.count - configured.count }

    /// What `GetStatus` lists of the configured targets; nil when none is.
    var statuses: [WatchedTargetStatus]? { configured.statuses }

    /// `CheckTarget`: the answer for `target` as `uid` would reach it, or the limit that refuses it.
    func check(_ target: Target, uid: UInt32) -> Result<EventLoopFuture<TargetReply>, TargetBudget.Limit> {
        if let limit = budget.admitCheck(uid: uid, now: .now) { return .failure(limit) }
        let answer = watches.check(target, uid: uid)
        answer.assumeIsolated().whenComplete { [self] _ in budget.finishCheck(uid: uid) }
        return .success(answer)
    }

    /// `SubscribeTarget`: starts connection `ticket`'s stream of answers for `target`, each
    /// handed to `deliver` (see `TargetWatches.watch`); returns the limit that refuses it instead.
    func watch(_ target: Target, ticket: ConnectionTicket, deliver: @escaping (TargetReply) -> Void) -> TargetBudget.Limit? {
        if let limit = budget.admitStream(uid: ticket.uid, now: .now) { return limit }
        watches.watch(target, uid: ticket.uid, id: ticket.id, deliver: deliver)
        return nil
    }

    /// `CheckConnectivity`: spends one of `uid`'s checks, or says the rate refuses it.
    func spendConnectivityCheck(uid: UInt32) -> TargetBudget.Limit? {
        budget.spendConnectivityCheck(uid: uid, now: .now)
    }

    /// Connection `id` closed: its stream ends and its budget is given back.
    func stop(connection id: Int) {
        if let uid = watches.stop(id) { budget.finishStream(uid: uid) }
    }

    /// Watches what `[targets] watch` names from now on (at start, and on each reload that
    /// changed it): new targets are added, dropped ones stopped, the others keep their
    /// stream. `answered` hears each configured target's new answer.
    /// - Returns: whether a target was dropped.
    func watch(configured wanted: [WatchedTarget], answered: @escaping (WatchedTarget, TargetReply) -> Void) -> Bool {
        let (start, stop) = configured.replace(with: wanted)
        for id in stop { _ = watches.stop(id) }
        for entry in start {
            watches.watch(entry.target.target, uid: entry.target.lookupUID, id: entry.id) { [unowned self] reply in
                guard let watched = configured.record(reply.path, id: entry.id) else { return }
                answered(watched, reply)
            }
        }
        return !stop.isEmpty
    }

    /// Re-judges every stream with the newest snapshot's lookups.
    func refresh() {
        watches.refresh()
    }

    /// The path changed: names may resolve to other addresses now.
    func resolveNamesAgain() {
        watches.resolveNamesAgain()
    }

    /// Ends every stream without telling the engine (it is stopping).
    func stopAll() {
        watches.stopAll()
    }
}
