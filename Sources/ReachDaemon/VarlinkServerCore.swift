import Logging
import NIOCore
import ReachabilityCore
import ReachProtocol

/// The server's state: the latest published state, its sequence number, the open
/// connections and the subscriptions. Lives on the server's one event loop; every
/// method is called there, so nothing here needs a lock.
final class VarlinkServerCore {
    let eventLoop: any EventLoop
    let logger: Logger
    let dispatcher: VarlinkDispatcher
    let hub = SubscriptionHub()

    private(set) var state: ReachabilityState
    /// Starts at 1 and grows by one per change of the unfiltered path.
    private(set) var sequence = 1
    var serverChannel: (any Channel)?
    private var connections: [ObjectIdentifier: any Channel] = [:]
    private var isShuttingDown = false
    private var lastConnectionID = 0

    init(instance: String, serviceInfo: ServiceInfo, state: ReachabilityState, eventLoop: any EventLoop, logger: Logger) {
        self.dispatcher = VarlinkDispatcher(instance: instance, serviceInfo: serviceInfo)
        self.state = state
        self.eventLoop = eventLoop
        self.logger = logger
    }

    var instance: String { dispatcher.instance }

    /// The outcome of a call against the current state.
    func outcome(for call: AnyVarlinkCall) -> CallOutcome {
        dispatcher.outcome(for: call, state: state, sequence: sequence)
    }

    /// Takes a new state; subscribers hear about it only if their view changed.
    func publish(_ newState: ReachabilityState) {
        eventLoop.preconditionInEventLoop()
        guard newState != state else { return }
        if newState.answer != state.answer { sequence += 1 }
        state = newState
        hub.publish(newState, sequence: sequence, instance: instance)
    }

    /// Registers an accepted connection and numbers it for the logs; nil once shutdown has begun.
    func connectionOpened(_ handler: VarlinkConnectionHandler, channel: any Channel) -> Int? {
        guard !isShuttingDown else { return nil }
        connections[ObjectIdentifier(handler)] = channel
        lastConnectionID += 1
        return lastConnectionID
    }

    /// Forgets a connection and its subscription.
    func connectionClosed(_ handler: VarlinkConnectionHandler) {
        connections[ObjectIdentifier(handler)] = nil
        hub.remove(handler)
    }

    /// Number of open connections (for tests and status).
    var connectionCount: Int { connections.count }

    /// Stops accepting and closes every connection.
    func shutdown() -> EventLoopFuture<Void> {
        eventLoop.preconditionInEventLoop()
        isShuttingDown = true
        var closing: [EventLoopFuture<Void>] = []
        if let serverChannel { closing.append(serverChannel.close().recover { _ in }) }
        serverChannel = nil
        for channel in connections.values { closing.append(channel.close().recover { _ in }) }
        connections = [:]
        hub.removeAll()
        return EventLoopFuture.andAllComplete(closing, on: eventLoop)
    }
}
