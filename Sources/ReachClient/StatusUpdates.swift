import ReachabilityCore
import ReachProtocol
import Synchronization

/// The replies of a subscription: an async sequence that fails only with `ReachClientError`.
///
/// A consumer that falls behind gets the newest reply, never a backlog; a reply that
/// replaces one the consumer never took inherits that reply's `changes`, so a change is
/// never lost (a field that changed and changed back may be listed).
public struct StatusUpdates: AsyncSequence, Sendable {
    /// One reply: sequence, instance and the path as the subscription's filter sees it.
    public typealias Element = StatusReply
    /// How the stream can fail.
    public typealias Failure = ReachClientError

    /// Wake-ups: one buffered at most; the reply itself waits in `slot`.
    let signals: AsyncThrowingStream<Void, any Error>
    let slot: LatestReplySlot
    let socketPath: String

    /// Iterates the replies.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var signals: AsyncThrowingStream<Void, any Error>.AsyncIterator
        let slot: LatestReplySlot
        let socketPath: String

        /// The next reply; nil after cancellation.
        public mutating func next() async throws(ReachClientError) -> StatusReply? {
            try await next(isolation: nil)
        }

        /// The next reply, keeping the caller's isolation; nil after cancellation.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(ReachClientError) -> StatusReply? {
            do {
                // A wake-up whose reply an earlier wake-up already took finds the slot empty.
                while try await signals.next(isolation: actor) != nil {
                    if let reply = slot.take() { return reply }
                }
                return nil
            } catch {
                throw ReachClientError(error, socketPath: socketPath)
            }
        }
    }

    /// Starts iterating.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(signals: signals.makeAsyncIterator(), slot: slot, socketPath: socketPath)
    }
}

/// The newest reply not yet taken by the consumer.
final class LatestReplySlot: Sendable {
    private let reply = Mutex<StatusReply?>(nil)

    /// Stores `newest`; if an untaken reply is there, `newest` inherits its changes.
    func put(_ newest: StatusReply) {
        reply.withLock { slot in
            guard let untaken = slot else {
                slot = newest
                return
            }
            var merged = newest
            merged.changes = Self.union(untaken.changes, newest.changes)
            slot = merged
        }
    }

    /// Takes the reply, leaving the slot empty.
    func take() -> StatusReply? {
        reply.withLock { slot in
            defer { slot = nil }
            return slot
        }
    }

    /// Both lists' changes in the canonical order; nil only when both are nil.
    static func union(_ a: [PathChange]?, _ b: [PathChange]?) -> [PathChange]? {
        guard a != nil || b != nil else { return nil }
        let all = Set((a ?? []) + (b ?? []))
        return PathChange.allCases.filter(all.contains)
    }
}
