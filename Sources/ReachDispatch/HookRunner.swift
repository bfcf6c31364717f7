import ReachProtocol

/// Runs the hooks for each change, one at a time, as a state machine: inputs in, actions
/// out, no IO (`reachctl dispatch` lists the directory and runs the processes).
///
/// A round lists the directory, then runs every hook in name order with one event. Events
/// arriving meanwhile are folded into one pending event (`Coalescible`: the newest state,
/// with every change since the round's own event), never queued: however fast the network
/// flaps, at most one round follows the one running, and it carries the latest state.
package struct HookRunner<Event: Coalescible & Sendable>: Sendable {
    /// One round: the event, the hooks once listed, and which one runs.
    package enum State: Sendable {
        /// Nothing runs.
        case idle
        /// The directory is being listed for `event`; `pending` arrived meanwhile.
        case listing(event: Event, pending: Event?)
        /// `hooks[index]` runs with `event`; `pending` arrived meanwhile.
        case running(hooks: [String], index: Int, event: Event, pending: Event?)
    }

    /// What the owner does next.
    package enum Action: Sendable {
        /// Nothing: wait for the next event.
        case wait
        /// List the directory, then call `listed(_:)`.
        case list(Event)
        /// Run this hook with this event, then call `finished()`.
        case run(hook: String, event: Event)
    }

    /// Where the runner stands.
    package private(set) var state: State = .idle

    /// Creates an idle runner.
    package init() {}

    /// A new event: starts a round when idle, else becomes (or folds into) the pending one.
    package mutating func received(_ event: Event) -> Action {
        switch state {
        case .idle:
            state = .listing(event: event, pending: nil)
            return .list(event)
        case let .listing(current, pending):
            state = .listing(event: current, pending: Self.fold(pending, event))
            return .wait
        case let .running(hooks, index, current, pending):
            state = .running(hooks: hooks, index: index, event: current, pending: Self.fold(pending, event))
            return .wait
        }
    }

    /// The directory was listed: the hooks that run, in order.
    package mutating func listed(_ hooks: [String]) -> Action {
        guard case let .listing(event, pending) = state else { return .wait }
        guard let first = hooks.first else { return endRound(pending: pending) }
        state = .running(hooks: hooks, index: 0, event: event, pending: pending)
        return .run(hook: first, event: event)
    }

    /// The running hook ended (exited, or was killed at its timeout).
    package mutating func finished() -> Action {
        guard case let .running(hooks, index, event, pending) = state else { return .wait }
        let next = index + 1
        guard next < hooks.count else { return endRound(pending: pending) }
        state = .running(hooks: hooks, index: next, event: event, pending: pending)
        return .run(hook: hooks[next], event: event)
    }

    private mutating func endRound(pending: Event?) -> Action {
        guard let pending else {
            state = .idle
            return .wait
        }
        state = .listing(event: pending, pending: nil)
        return .list(pending)
    }

    private static func fold(_ pending: Event?, _ newer: Event) -> Event {
        pending.map { $0.coalesced(with: newer) } ?? newer
    }
}
