import Logging
import NIOCore
import ReachabilityCore
import ReachProtocol

/// Everything the server owns, on its one event loop: the `Publication` (what is
/// published and whether it changed), the subscribers of each filter group, the open
/// connections. Every method runs on the loop, so nothing here needs a lock.
///
/// It carries out the publication's actions: announcements become a log line and a
/// systemd `STATUS=`, group updates are framed once and handed to each member.
final class ServerCore {
    let eventLoop: any EventLoop
    let logger: Logger
    let notifier: SystemdNotifier
    let dispatcher: VarlinkDispatcher
    /// Called once if the server fails for good (its listening socket closed under it).
    let onFatalError: @Sendable (String) -> Void

    private(set) var publication: Publication
    private var members: [PathFilter: [ObjectIdentifier: VarlinkConnectionHandler]] = [:]
    private var connections: [ObjectIdentifier: any Channel] = [:]
    private var lastConnectionID = 0
    private var isShuttingDown = false
    private var serverChannel: (any Channel)?
    /// Whether shutdown removes the socket file (not when systemd owns it).
    private(set) var ownsSocketFile = false

    init(
        publication: Publication, serviceInfo: ServiceInfo, eventLoop: any EventLoop, logger: Logger,
        notifier: SystemdNotifier, onFatalError: @escaping @Sendable (String) -> Void
    ) {
        self.publication = publication
        self.dispatcher = VarlinkDispatcher(serviceInfo: serviceInfo)
        self.eventLoop = eventLoop
        self.logger = logger
        self.notifier = notifier
        self.onFatalError = onFatalError
    }

    // MARK: Publishing

    /// A new kernel snapshot from the engine.
    func update(snapshot: NetworkSnapshot) {
        perform(publication.update(snapshot: snapshot))
    }

    /// A new interface policy from a reload.
    func update(policy: InterfacePolicy) {
        perform(publication.update(policy: policy))
    }

    private func perform(_ actions: [Publication.Action]) {
        for action in actions {
            switch action {
            case let .announce(line, status):
                logger.info("\(line)")
                notifier.status(status)
            case let .notify(filter, update):
                guard let group = members[filter] else { continue }
                let frame = Self.frame(update.reply)
                for member in group.values {
                    member.deliver(SubscriberUpdate(group: update, frame: frame))
                }
            }
        }
    }

    /// A `Subscribe` reply framed for the wire (`continues: true`); nil only if encoding
    /// failed, which reachd's own wire types never do.
    static func frame(_ reply: StatusReply) -> ByteBuffer? {
        var buffer = ByteBuffer()
        do {
            try buffer.writeVarlinkMessage(VarlinkReply(parameters: reply, continues: true))
        } catch {
            return nil
        }
        return buffer
    }

    // MARK: Calls and subscriptions

    /// The outcome of a call against the state published now.
    func outcome(for call: AnyVarlinkCall) -> CallOutcome {
        dispatcher.outcome(for: call, publication: publication)
    }

    /// Adds `handler` to the subscribers of `filter` and returns its first reply.
    func subscribe(_ handler: VarlinkConnectionHandler, filter: PathFilter) -> SubscriberUpdate {
        members[filter, default: [:]][ObjectIdentifier(handler)] = handler
        let first = publication.subscribe(filter: filter)
        return SubscriberUpdate(group: first, frame: Self.frame(first.reply))
    }

    // MARK: Connections

    /// Registers an accepted connection and numbers it for the logs; nil once shutdown has begun.
    func connectionOpened(_ handler: VarlinkConnectionHandler, channel: any Channel) -> Int? {
        guard !isShuttingDown else { return nil }
        connections[ObjectIdentifier(handler)] = channel
        lastConnectionID += 1
        return lastConnectionID
    }

    /// Forgets a connection and its subscription (called more than once per connection: idempotent).
    func connectionClosed(_ handler: VarlinkConnectionHandler, filter: PathFilter?) {
        let id = ObjectIdentifier(handler)
        connections[id] = nil
        guard let filter, members[filter]?.removeValue(forKey: id) != nil else { return }
        if members[filter]?.isEmpty == true { members[filter] = nil }
        publication.unsubscribe(filter: filter)
    }

    /// Serves on `channel`; its closing before `shutdown()` is fatal.
    func adopt(_ channel: any Channel, ownsSocketFile: Bool) {
        serverChannel = channel
        self.ownsSocketFile = ownsSocketFile
        channel.closeFuture.assumeIsolated().whenComplete { [self] _ in
            guard !isShuttingDown else { return }
            onFatalError("the listening socket closed unexpectedly")
        }
    }

    /// Stops accepting and closes every connection.
    func shutdown() -> EventLoopFuture<Void> {
        isShuttingDown = true
        var closing: [EventLoopFuture<Void>] = []
        if let serverChannel { closing.append(serverChannel.close().recover { _ in }) }
        serverChannel = nil
        for channel in connections.values { closing.append(channel.close().recover { _ in }) }
        connections = [:]
        members = [:]
        return EventLoopFuture.andAllComplete(closing, on: eventLoop)
    }
}
