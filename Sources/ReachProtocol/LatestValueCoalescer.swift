/// A value that can stand in for an older one its consumer never received: when a
/// consumer falls behind, the newest value replaces the pending one, carrying along
/// whatever of the older one the consumer must still learn (for a status reply: which
/// fields changed).
public protocol Coalescible {
    /// The value to deliver instead of `self` (pending, never delivered) and `newer`.
    func coalesced(with newer: Self) -> Self
}

/// Latest-value delivery as a state machine, swift-nio style: inputs in, actions out, no IO.
///
/// A producer offers values; a consumer takes one at a time. While the consumer cannot
/// take one (a write still in flight, a full socket, an app that is not asking), newer
/// values fold into the one pending value with `Coalescible.coalesced(with:)` instead of
/// queueing up: a slow consumer gets the newest value, never a backlog, and memory stays
/// bounded whatever the producer does.
///
/// The daemon runs one per subscriber (the consumer is the socket: paused while the
/// channel is not writable); `ReachClient` runs one per subscription
/// (the consumer is the app: ready when it asks for the next reply).
///
/// `@inlinable` so the daemon's per-subscriber calls are specialized for its value type
/// instead of going through generic metadata and value witnesses for every subscriber.
package struct LatestValueCoalescer<Value: Coalescible> {
    /// What the owner must do after an input.
    package enum Action {
        /// Nothing, for now.
        case none
        /// Hand this value to the consumer (write it; resume the waiting task).
        case deliver(Value)
    }

    /// The value waiting for the consumer, if any.
    @inlinable package var pending: Value? { waiting }
    @usableFromInline var waiting: Value?
    /// The consumer has asked for a value and not been given one yet.
    @usableFromInline var consumerWaiting: Bool
    /// The consumer may not be given values now, whatever it asked (a full socket).
    @usableFromInline var paused = false

    /// Creates the machine; `consumerReady` says whether the first offered value may be
    /// delivered at once.
    @inlinable package init(consumerReady: Bool) {
        consumerWaiting = consumerReady
    }

    /// The producer has a new value.
    @inlinable package mutating func offer(_ value: Value) -> Action {
        if consumerWaiting && !paused {
            consumerWaiting = false
            return .deliver(value)
        }
        waiting = waiting.map { $0.coalesced(with: value) } ?? value
        return .none
    }

    /// The consumer is done with the last value it was given and can take another.
    @inlinable package mutating func consumerReady() -> Action {
        consumerWaiting = true
        return deliverPending()
    }

    /// The consumer must not be given values until `resume()` (e.g. the socket is full).
    @inlinable package mutating func pause() {
        paused = true
    }

    /// The consumer may be given values again.
    @inlinable package mutating func resume() -> Action {
        paused = false
        return deliverPending()
    }

    @inlinable mutating func deliverPending() -> Action {
        guard consumerWaiting, !paused, let value = waiting else { return .none }
        waiting = nil
        consumerWaiting = false
        return .deliver(value)
    }
}

extension LatestValueCoalescer: Sendable where Value: Sendable {}
extension LatestValueCoalescer.Action: Sendable where Value: Sendable {}
extension LatestValueCoalescer.Action: Equatable where Value: Equatable {}
