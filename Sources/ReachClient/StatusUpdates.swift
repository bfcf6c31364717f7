import ReachabilityCore
import ReachProtocol
import Synchronization

/// The replies of a subscription: an async sequence that fails only with `ReachClientError`.
///
/// A consumer that falls behind gets the newest reply, never a backlog; a reply that
/// replaces one the consumer never took inherits that reply's `changes`, so a change is
/// never lost (a field that changed and changed back may be listed). The daemon keeps the
/// same promise per subscriber with the same state machine, `LatestValueCoalescer`.
public struct Updates<Reply: Coalescible & Decodable & Sendable>: AsyncSequence, Sendable {
    /// One reply: for `Subscribe`, sequence, instance and the path as the subscription's
    /// filter sees it; for `SubscribeTarget`, the target's answer.
    public typealias Element = Reply
    /// How the stream can fail.
    public typealias Failure = ReachClientError

    let stream: SubscriptionStream<Reply>

    /// Iterates the replies.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let stream: SubscriptionStream<Reply>

        /// The next reply; nil after cancellation.
        public mutating func next() async throws(ReachClientError) -> Reply? {
            try await stream.next()
        }

        /// The next reply, keeping the caller's isolation; nil after cancellation.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(ReachClientError) -> Reply? {
            try await stream.next()
        }
    }

    /// Starts iterating.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: stream)
    }
}

/// The replies of `Subscribe`.
public typealias StatusUpdates = Updates<StatusReply>

/// The replies of `SubscribeTarget`.
public typealias TargetUpdates = Updates<TargetReply>

extension TargetReply: Coalescible {
    /// A target's newer answer replaces an older one whole.
    public func coalesced(with newer: TargetReply) -> TargetReply { newer }
}

extension StatusReply: Coalescible {
    /// The newer reply, carrying the changes of both in the canonical order.
    public func coalesced(with newer: StatusReply) -> StatusReply {
        var merged = newer
        if changes != nil || newer.changes != nil {
            let all = Set((changes ?? []) + (newer.changes ?? []))
            merged.changes = PathChange.allCases.filter(all.contains)
        }
        return merged
    }
}

/// Hands the replies a connection task receives to one consuming task: the receiving side
/// offers, the consumer asks, and a `LatestValueCoalescer` decides who gets what.
final class SubscriptionStream<Reply: Coalescible & Sendable>: Sendable {
    private struct State {
        var coalescer = LatestValueCoalescer<Reply>(consumerReady: false)
        /// The consumer suspended in `next()`, if any.
        var waiter: CheckedContinuation<Reply?, any Error>?
        /// How the stream ended: nil while it runs, `.success` when cancelled.
        var end: Result<Void, ReachClientError>?
        /// Stops the receiving side; run once, when the stream ends or the consumer drops it.
        var stopReceiving: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())
    /// The socket, for errors.
    let socketPath: String

    init(socketPath: String) {
        self.socketPath = socketPath
    }

    deinit {
        // The consumer dropped the sequence: close the connection.
        state.withLock { $0.stopReceiving }?()
    }

    /// Sets how to stop the receiving side (cancel its task).
    func onStop(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.stopReceiving = action }
    }

    /// A reply arrived (receiving side).
    func offer(_ reply: Reply) {
        let resume = state.withLock { state -> (CheckedContinuation<Reply?, any Error>, Reply)? in
            guard state.end == nil, case let .deliver(value) = state.coalescer.offer(reply), let waiter = state.waiter else {
                return nil
            }
            state.waiter = nil
            return (waiter, value)
        }
        if let (waiter, value) = resume { waiter.resume(returning: value) }
    }

    /// The stream ended: with an error, or (nil) because the consumer cancelled. Replies
    /// already received are still handed out first.
    func finish(_ error: ReachClientError?) {
        let (waiter, stop) = state.withLock { state -> (CheckedContinuation<Reply?, any Error>?, (@Sendable () -> Void)?) in
            guard state.end == nil else { return (nil, nil) }
            state.end = error.map { .failure($0) } ?? .success(())
            defer { (state.waiter, state.stopReceiving) = (nil, nil) }
            return (state.waiter, state.stopReceiving)
        }
        if let waiter {
            if let error { waiter.resume(throwing: error) } else { waiter.resume(returning: nil) }
        }
        stop?()
    }

    /// The next reply (consumer side): the pending one at once, else the next to arrive;
    /// nil once cancelled; the stream's error after its last reply.
    func next() async throws(ReachClientError) -> Reply? {
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let immediate = state.withLock { state -> Result<Reply?, ReachClientError>? in
                        if case let .deliver(value) = state.coalescer.consumerReady() { return .success(value) }
                        switch state.end {
                        case .success?: return .success(nil)
                        case let .failure(error)?: return .failure(error)
                        case nil:
                            state.waiter = continuation
                            return nil
                        }
                    }
                    if let immediate { continuation.resume(with: immediate.mapError { $0 as any Error }) }
                }
            } onCancel: {
                finish(nil)
            }
        } catch let error as ReachClientError {
            throw error
        } catch {
            throw ReachClientError(error, socketPath: socketPath)
        }
    }
}
