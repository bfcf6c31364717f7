import Synchronization

/// What a subscription that survives reachd going away tells its owner.
package enum SubscriptionEvent<Reply: Sendable>: Sendable {
    /// A reply, and what it is to the user.
    case answer(Reply, AnswerKind)
    /// reachd cannot be reached (once per outage); the subscription keeps retrying.
    case unavailable(ReachClientError)
}

/// Carries out a `SubscriptionStateMachine`: opens subscriptions, waits between attempts,
/// and hands each event to `onEvent`, in order, on the task that received it. Package
/// access: `reachctl dispatch` runs its hooks on one.
///
/// While it runs, its tasks hold it (and so its owner's handler) alive: a started monitor
/// needs no strong reference from the app. `cancel()` ends them and lets it go.
package final class ReconnectingSubscription<Reply: Coalescible & Decodable & Sendable>: Sendable {
    private struct State {
        var machine: SubscriptionStateMachine
        var connection: Task<Void, Never>?
        var timer: Task<Void, Never>?
    }

    private let state: Mutex<State>
    private let open: @Sendable () -> Updates<Reply>
    private let instance: @Sendable (Reply) -> String?
    private let onEvent: @Sendable (SubscriptionEvent<Reply>) -> Void

    /// - Parameters:
    ///   - open: opens one subscription (reachd's socket, or a test's fake).
    ///   - instance: the run of reachd a reply comes from, when it says.
    ///   - onEvent: called with every answer and outage.
    package init(
        policy: ReconnectPolicy, open: @escaping @Sendable () -> Updates<Reply>,
        instance: @escaping @Sendable (Reply) -> String?, onEvent: @escaping @Sendable (SubscriptionEvent<Reply>) -> Void
    ) {
        self.state = Mutex(State(machine: SubscriptionStateMachine(policy: policy)))
        self.open = open
        self.instance = instance
        self.onEvent = onEvent
    }

    /// Starts, or starts again after `cancel()`; does nothing while running.
    package func start() {
        perform(state.withLock { $0.machine.start() }, reply: nil)
    }

    /// Stops: closes the connection and any wait. No event of the stopped run follows
    /// once this returns, except one already being handed to `onEvent`.
    package func cancel() {
        perform(state.withLock { $0.machine.cancel() }, reply: nil)
    }

    private func perform(_ actions: [SubscriptionStateMachine.Action], reply: Reply?) {
        for action in actions {
            switch action {
            case let .connect(generation):
                connect(generation: generation)
            case let .deliver(kind):
                if let reply { onEvent(.answer(reply, kind)) }
            case let .reportUnavailable(error):
                onEvent(.unavailable(error))
            case let .retry(delay, generation):
                let timer = Task { [self] in
                    guard (try? await Task.sleep(for: delay)) != nil else { return }
                    perform(state.withLock { $0.machine.retryDue(generation: generation) }, reply: nil)
                }
                state.withLock { $0.timer = timer }
            case .disconnect:
                let (connection, timer) = state.withLock { state in
                    defer { (state.connection, state.timer) = (nil, nil) }
                    return (state.connection, state.timer)
                }
                connection?.cancel()
                timer?.cancel()
            }
        }
    }

    private func connect(generation: Int) {
        let updates = open()
        // Strong: the running subscription keeps itself alive until cancelled.
        let connection = Task { [self] in
            var iterator = updates.makeAsyncIterator()
            do throws(ReachClientError) {
                while let reply = try await iterator.next() {
                    perform(state.withLock { $0.machine.received(instance: instance(reply), generation: generation) }, reply: reply)
                }
            } catch {
                let jitter = Double.random(in: 0..<1)
                perform(state.withLock { $0.machine.failed(error, generation: generation, jitter: jitter) }, reply: nil)
            }
        }
        let current = state.withLock { state -> Bool in
            switch state.machine.state {
            case .connecting(generation), .streaming(generation):
                state.connection = connection
                return true
            default:
                return false
            }
        }
        // Cancelled (or already failed) before the task was even stored.
        if !current { connection.cancel() }
    }
}
