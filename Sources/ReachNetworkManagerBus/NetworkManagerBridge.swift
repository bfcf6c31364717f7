import Glibc
import LinuxSystem
import Logging
import NIOCore
import ReachNetworkManager
import ReachProtocol
import ReachSystemd
import ReachabilityCore
import SystemPackage

/// reachd-nm's one thread: reachd's `Subscribe` stream in, NetworkManager's answer out on
/// the bus. It waits in one poll(2) on the bus and reachd's socket; nothing runs while
/// neither has anything to say. A `CheckConnectivity` call asks reachd on a connection of
/// its own and is answered when reachd has.
package final class NetworkManagerBridge {
    /// Why `run` returned.
    package enum Exit: Error, CustomStringConvertible {
        /// The bus refused the name: NetworkManager (or another reachd-nm) has it, or the policy forbids it.
        case nameRefused(String)
        /// NetworkManager took the name: reachd-nm steps aside (exit 0).
        case nameTaken
        /// The bus connection failed.
        case bus(NetworkManagerBus.Failure)

        /// What the journal says.
        package var description: String {
            switch self {
            case let .nameRefused(error):
                "cannot own org.freedesktop.NetworkManager (\(error)): is NetworkManager running? reachd-nm answers only where it is not"
            case .nameTaken: "NetworkManager took org.freedesktop.NetworkManager: reachd-nm steps aside"
            case let .bus(failure): "the system bus failed: \(failure)"
            }
        }
    }

    /// reachd's stream: connected, or waiting to try again (reachd restarting).
    private enum Link {
        case subscribed(VarlinkConnection)
        case retrying(at: ContinuousClock.Instant, delay: Duration)
    }

    private let bus: NetworkManagerBus
    private let socket: String
    private let logger: Logger
    private let notifier: SystemdNotifier
    private var link: Link = .retrying(at: .now, delay: .milliseconds(250))
    /// The connection of the `CheckConnectivity` in flight, and when it is given up.
    private var check: (connection: VarlinkConnection, deadline: ContinuousClock.Instant)?
    /// Whether reachd's stream has carried a probe's verdict.
    private var probesSeen = false
    private var objects: NetworkManagerObjects

    /// A bridge from reachd at `socket` to `bus`; `version` is the manager's `Version`;
    /// systemd hears READY=1 once the name is reachd-nm's, and each answer as STATUS=.
    package init(bus: NetworkManagerBus, socket: String, version: String, logger: Logger, notifier: SystemdNotifier = SystemdNotifier()) {
        self.bus = bus
        self.notifier = notifier
        self.socket = socket
        self.logger = logger
        objects = NetworkManagerObjects(answer: .unknown, serial: 1, version: version)
    }

    /// Serves until the name is lost or the bus fails.
    package func run() throws(Exit) {
        do {
            try bus.serve(name: NetworkManagerObjects.managerInterface) { [unowned self] call in
                NetworkManagerCalls.reply(to: call, objects: objects)
            }
        } catch {
            throw .bus(error)
        }
        let nothing = SystemPackage.FileDescriptor(rawValue: -1)
        while true {
            let reachd: SystemPackage.FileDescriptor
            if case let .subscribed(connection) = link { reachd = connection.descriptor } else { reachd = nothing }
            var poll = PollSet([SystemPackage.FileDescriptor(rawValue: bus.descriptor), reachd, check?.connection.descriptor ?? nothing])
            poll.setEvents(bus.events, at: 0)
            let ready = (try? poll.wait(timeoutMilliseconds: timeout())) ?? [false, false, false]
            if ready[1] { readReachd() }
            if ready[2] || (check.map { ContinuousClock.now >= $0.deadline } ?? false) { finishCheck() }
            if case let .retrying(at, delay) = link, ContinuousClock.now >= at { subscribe(backoff: delay) }
            do {
                for event in try bus.processPending() { try handle(event) }
            } catch let failure as NetworkManagerBus.Failure {
                throw .bus(failure)
            } catch let exit as Exit {
                throw exit
            } catch {
                continue
            }
            if bus.hasDeferred && check == nil { startCheck() }
        }
    }

    private func handle(_ event: NetworkManagerBus.NameEvent) throws(Exit) {
        switch event {
        case .acquired:
            logger.info("answering as NetworkManager on the system bus, from reachd at \(socket)")
            notifier.ready(status: statusLine)
        case let .refused(error): throw .nameRefused(error)
        case .lost: throw .nameTaken
        }
    }

    private func timeout() -> Int32? {
        var deadlines: [ContinuousClock.Instant] = []
        if case let .retrying(at, _) = link { deadlines.append(at) }
        if let check { deadlines.append(check.deadline) }
        let own = deadlines.min().map { Int32(clamping: Int(max(.zero, $0 - .now) / .milliseconds(1)) + 1) }
        switch (own, bus.timeoutMilliseconds) {
        case let (own?, bus?): return min(own, bus)
        case let (own, bus): return own ?? bus
        }
    }

    private func subscribe(backoff delay: Duration) {
        do {
            let connection = try VarlinkConnection(path: socket, timeout: .seconds(2))
            try connection.send(VarlinkCall<SubscribeParameters>(method: ReachabilityInterface.Method.subscribe, parameters: nil, more: true))
            link = .subscribed(connection)
        } catch {
            if delay == .milliseconds(250) { logger.notice("reachd does not answer at \(socket) (\(error)): State is UNKNOWN until it does") }
            link = .retrying(at: .now + delay, delay: min(delay * 2, .seconds(30)))
        }
    }

    private func readReachd() {
        guard case let .subscribed(connection) = link else { return }
        do {
            while true {
                let received = try connection.receive(timeout: .milliseconds(1))
                guard case let .message(message) = received else {
                    if received == .closed { lose() }
                    return
                }
                let reply = try VarlinkCoding.decode(VarlinkReply<StatusReply>.self, from: message.readableBytesView)
                guard reply.error == nil, let status = reply.parameters else {
                    logger.warning("reachd refused the subscription: \(reply.error ?? "no parameters")")
                    return lose()
                }
                // Only probes give these verdicts (`none` and `local` come from the routes alone).
                probesSeen = probesSeen || [.portal, .limited, .partial, .full].contains(status.path.connectivity)
                publish(NetworkManagerAnswer(path: status.path, probes: probesSeen))
            }
        } catch {
            logger.warning("reachd's stream broke: \(error)")
            lose()
        }
    }

    private func lose() {
        link = .retrying(at: .now + .milliseconds(250), delay: .milliseconds(500))
        publish(.unknown)
    }

    /// Makes `next` the answer: new objects for a new primary interface, `PropertiesChanged`
    /// for what changed, `StateChanged` when the state did.
    private func publish(_ next: NetworkManagerAnswer) {
        guard next != objects.answer else { return }
        let old = objects
        objects = old.replaced(by: next)
        do {
            for path in old.objects.keys.sorted() where objects.objects[path] == nil {
                try bus.emit(path: NetworkManagerObjects.objectManagerPath, interface: "org.freedesktop.DBus.ObjectManager",
                             member: "InterfacesRemoved", [.value(.objectPath(path)), .strings(old.objects[path]!.keys.sorted())])
            }
            for path in objects.objects.keys.sorted() where old.objects[path] == nil {
                try bus.emit(path: NetworkManagerObjects.objectManagerPath, interface: "org.freedesktop.DBus.ObjectManager",
                             member: "InterfacesAdded", [.value(.objectPath(path)), .interfaces(objects.objects[path]!)])
            }
            try bus.emitPropertiesChanged(objects.changes(since: old))
            if next.state != old.answer.state {
                try bus.emit(path: NetworkManagerObjects.managerPath, interface: NetworkManagerObjects.managerInterface,
                             member: "StateChanged", [.value(.uint32(next.state.rawValue))])
            }
        } catch {
            logger.warning("could not signal the change: \(error)")
        }
        logger.info("\(statusLine)")
        notifier.status(statusLine)
    }

    private var statusLine: String {
        "NetworkManager state \(objects.answer.state) connectivity \(objects.answer.connectivity) metered \(objects.answer.metered)"
    }

    private func startCheck() {
        do {
            let connection = try VarlinkConnection(path: socket, timeout: .seconds(2))
            try connection.send(VarlinkCall<ConnectivityCheckParameters>(method: ReachabilityInterface.Method.checkConnectivity, parameters: nil))
            check = (connection, .now + .seconds(30))
        } catch {
            bus.answerDeferred(.uint32(objects.answer.connectivity.rawValue))
        }
    }

    /// reachd answered the check (or took too long): the stream carries any new verdict,
    /// which is read first, then every waiting caller hears the connectivity.
    private func finishCheck() {
        check = nil
        readReachd()
        bus.answerDeferred(.uint32(objects.answer.connectivity.rawValue))
    }
}
