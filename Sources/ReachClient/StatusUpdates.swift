import ReachProtocol

/// The replies of a subscription: an async sequence that fails only with `ReachClientError`.
public struct StatusUpdates: AsyncSequence, Sendable {
    /// One reply: sequence, instance and the path as the subscription's filter sees it.
    public typealias Element = StatusReply
    /// How the stream can fail.
    public typealias Failure = ReachClientError

    let base: AsyncThrowingStream<StatusReply, any Error>
    let socketPath: String

    /// Iterates the replies.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<StatusReply, any Error>.AsyncIterator
        let socketPath: String

        /// The next reply; nil after cancellation.
        public mutating func next() async throws(ReachClientError) -> StatusReply? {
            do {
                return try await base.next()
            } catch {
                throw ReachClientError(error, socketPath: socketPath)
            }
        }

        /// The next reply, keeping the caller's isolation; nil after cancellation.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(ReachClientError) -> StatusReply? {
            do {
                return try await base.next(isolation: actor)
            } catch {
                throw ReachClientError(error, socketPath: socketPath)
            }
        }
    }

    /// Starts iterating.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), socketPath: socketPath)
    }
}
