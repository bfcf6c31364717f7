/// When reachd holds logind's delay inhibitor and when it tells the daemon the system sleeps
/// or woke. Pure: `LogindWatch` sends each question as a method call, feeds the answers and
/// signals back, and does what the actions say. Descriptors are plain numbers here; the
/// watch closes the ones `release` names.
///
/// It asks logind's unique name at start and takes a delay inhibitor from that name; it holds
/// the inhibitor while awake and releases it once the daemon paused for a sleep; on waking it
/// takes another. Only the owner's `PrepareForSleep` counts: anyone may send a signal to reachd directly.
package struct LogindSleep {
    /// One method call.
    package enum Question: Hashable, Sendable {
        /// `GetNameOwner("org.freedesktop.login1")`: logind's unique name.
        case owner
        /// `Inhibit("sleep", ..., "delay")`, sent to this unique name.
        case inhibit(owner: String)
    }

    /// What a question's call brought.
    package enum Answer: Equatable, Sendable {
        /// `GetNameOwner`'s unique name; nil when nobody owns the name.
        case owner(String?)
        /// `Inhibit`'s descriptor, now the machine's to hold or release.
        case inhibitor(Int32)
        /// An error, a reply of another shape, or no reply in time.
        case failed(String)
        /// logind's policy does not let reachd's user inhibit (`AccessDenied`, or polkit's
        /// `InteractiveAuthorizationRequired`): the usual answer without polkit, where only root may.
        case denied(String)
    }

    /// What the watch does next.
    package enum Action: Equatable, Sendable {
        /// Send this question's call.
        case ask(Question)
        /// Close this inhibitor's descriptor: logind may then go on.
        case release(Int32)
        /// Tell the daemon the system is about to sleep.
        case sleeping
        /// Tell the daemon the system woke (or logind, gone, can no longer say).
        case awake
        /// An inhibitor is held (logged at debug).
        case inhibited
        /// logind is not on the bus: nothing is asked (logged at debug).
        case absent
        /// This logind refused an inhibitor the first time (logged once, at notice).
        case refused(String)
        /// This logind's policy does not allow reachd an inhibitor, the first time (logged
        /// once, at info: expected without polkit).
        case notPermitted(String)
        /// A `PrepareForSleep` from someone other than logind, ignored (logged at debug).
        case ignored(sender: String)
    }

    /// The inhibitor while awake.
    private enum Inhibitor: Equatable {
        case asking
        case held(Int32)
        case refused
    }

    private enum State: Equatable {
        case idle
        case askingOwner
        case absent
        case awake(owner: String, Inhibitor)
        /// Between `PrepareForSleep(true)` and `(false)`; `held` until the daemon paused.
        case sleeping(owner: String, held: Int32?)
        case closed
    }

    private var state: State = .idle
    /// The logind that refused an inhibitor already: its refusals are not said again.
    private var refusedBy: String?

    /// Nothing asked before `start`.
    package init() {}

    /// The inhibitor's descriptor while one is held.
    package var inhibitor: Int32? {
        switch state {
        case let .awake(_, .held(descriptor)): descriptor
        case let .sleeping(_, held): held
        default: nil
        }
    }

    /// Asks whose logind is on the bus.
    package mutating func start() -> [Action] {
        guard state == .idle else { return [] }
        state = .askingOwner
        return [.ask(.owner)]
    }

    /// `question`'s call brought `answer`. A descriptor that came too late (the state moved
    /// on) is released at once.
    package mutating func answered(_ question: Question, with answer: Answer) -> [Action] {
        switch (question, answer, state) {
        case let (.owner, .owner(name), .askingOwner):
            return becomeOwner(name)
        case (.owner, .failed, .askingOwner):
            return becomeOwner(nil)
        case let (.inhibit(asked), .inhibitor(descriptor), .awake(owner, .asking)) where asked == owner:
            state = .awake(owner: owner, .held(descriptor))
            return [.inhibited]
        case let (.inhibit(asked), .failed(reason), .awake(owner, .asking)) where asked == owner:
            return refuse(by: owner, .refused(reason))
        case let (.inhibit(asked), .denied(reason), .awake(owner, .asking)) where asked == owner:
            return refuse(by: owner, .notPermitted(reason))
        case let (_, .inhibitor(descriptor), _):
            return [.release(descriptor)]
        default:
            // An owner answer after a NameOwnerChanged said newer, or a stale failure.
            return []
        }
    }

    /// `NameOwnerChanged` for logind's name: it left (nil) or a new logind took it.
    package mutating func ownerChanged(to name: String?) -> [Action] {
        let name = name?.isEmpty == false ? name : nil
        switch state {
        case .idle, .closed:
            return []
        case .askingOwner, .absent:
            return name == nil && state == .absent ? [] : becomeOwner(name)
        case let .awake(owner, _), let .sleeping(owner, _):
            guard owner != name else { return [] }
            return leave() + becomeOwner(name)
        }
    }

    /// `PrepareForSleep(sleeping)` from `sender`; counts only from logind's unique name.
    package mutating func prepareForSleep(_ sleeping: Bool, from sender: String) -> [Action] {
        switch (state, sleeping) {
        case let (.awake(owner, _), _), let (.sleeping(owner, _), _):
            guard sender == owner else { return [.ignored(sender: sender)] }
            return prepare(sleeping, owner: owner)
        default:
            return [.ignored(sender: sender)]
        }
    }

    /// The daemon paused its work for the sleep: the inhibitor goes now.
    package mutating func paused() -> [Action] {
        guard case let .sleeping(owner, .some(descriptor)) = state else { return [] }
        state = .sleeping(owner: owner, held: nil)
        return [.release(descriptor)]
    }

    /// The watch ends: the inhibitor goes, and a daemon paused for a sleep resumes.
    package mutating func closed() -> [Action] {
        let actions = leave()
        state = .closed
        return actions
    }

    private mutating func prepare(_ sleeping: Bool, owner: String) -> [Action] {
        switch (state, sleeping) {
        case let (.awake(_, inhibitor), true):
            if case let .held(descriptor) = inhibitor {
                state = .sleeping(owner: owner, held: descriptor)
            } else {
                state = .sleeping(owner: owner, held: nil)
            }
            return [.sleeping]
        case let (.sleeping(_, .some(descriptor)), false):
            // Woke before the daemon paused: the inhibitor still holds, none is asked.
            state = .awake(owner: owner, .held(descriptor))
            return [.awake]
        case (.sleeping(_, nil), false):
            state = .awake(owner: owner, .asking)
            return [.awake, .ask(.inhibit(owner: owner))]
        default:
            return []  // a repeat
        }
    }

    private mutating func refuse(by owner: String, _ said: Action) -> [Action] {
        state = .awake(owner: owner, .refused)
        guard refusedBy != owner else { return [] }
        refusedBy = owner
        return [said]
    }

    private mutating func becomeOwner(_ name: String?) -> [Action] {
        guard let name, !name.isEmpty else {
            state = .absent
            return [.absent]
        }
        state = .awake(owner: name, .asking)
        return [.ask(.inhibit(owner: name))]
    }

    /// What leaving the current logind takes: its inhibitor, and the daemon's pause.
    private func leave() -> [Action] {
        switch state {
        case let .awake(_, .held(descriptor)): [.release(descriptor)]
        case let .sleeping(_, held): (held.map { [.release($0)] } ?? []) + [.awake]
        default: []
        }
    }
}
