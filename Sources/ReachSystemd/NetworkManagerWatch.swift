import Glibc
import LinuxSystem
import Logging
import ReachabilityCore
import SystemPackage

/// Follows NetworkManager over the system bus, read-only and passively: it reads every
/// device's connectivity and `Metered` when NetworkManager appears and again after a change
/// that matters (`NetworkManagerReads` decides, `NetworkManagerReading` says what matters), and
/// hands each new answer on. Nothing is asked while NetworkManager is not on the bus. It never
/// waits: its owner (the event loop, through `LoopReadiness`) runs `process` when `descriptor`
/// is ready for `events` or `timeout` passed, and every call is asynchronous. The connection
/// is its owner's thread's alone (sd-bus is not thread-safe).
package final class NetworkManagerWatch {
    private let bus: SystemBus
    private let logger: Logger
    private let deliver: ([String: NetworkManagerDevice]) -> Void
    private var reads: NetworkManagerReads
    /// The questions asked, by the cookie of their call.
    private var asked: [UInt64: NetworkManagerReads.Question] = [:]
    /// Whether the bus answered a call: a connection closed before that was refused.
    private var hasAnswered = false
    private var isOver = false

    /// Starts connecting to the system bus and asks for NetworkManager's signals and a first
    /// read, without waiting; `deliver` hears each new answer during `process` (first the
    /// answer at start, empty when NetworkManager is not running). Nil, with the reason
    /// logged, when there is no system bus or it refused reachd at once.
    package init?(logger: Logger, now: ContinuousClock.Instant = .now, deliver: @escaping ([String: NetworkManagerDevice]) -> Void) {
        do {
            bus = try SystemBus()
            for rule in NetworkManagerReading.matchRules { try bus.addMatch(rule) }
        } catch {
            if FileSystem.exists(Self.systemBusSocket(address: getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) })) {
                Self.refused(error, logger: logger)
            } else {
                logger.debug("no system bus: NetworkManager is not read", metadata: ["reason": "\(error)"])
            }
            return nil
        }
        (self.logger, self.deliver) = (logger, deliver)
        reads = NetworkManagerReads(now: now)
        // Queued behind the match rules, so no signal after the first answer is missed.
        perform(reads.tick(now: now))
    }

    /// The connection's descriptor, to watch for `events`.
    package var descriptor: FileDescriptor { FileDescriptor(rawValue: bus.descriptor) }

    /// What to watch the descriptor for (`POLLIN`, and `POLLOUT` while writes are queued).
    package var events: Int16 { bus.events }

    /// How long `process` may wait for the descriptor before it must run anyway (a call's
    /// deadline, a burst of signals settled); nil for as long as it takes.
    package func timeout(now: ContinuousClock.Instant) -> Duration? {
        let settled = reads.nextTick.map { max(.zero, $0 - now) }
        let call = bus.timeoutMilliseconds.map { Duration.milliseconds($0) }
        return [settled, call].compactMap { $0 }.min()
    }

    /// Handles what arrived and what is due. False once the watch is over (the connection
    /// closed or was refused, said in the log; an answer NetworkManager gave is taken back).
    package func process(now: ContinuousClock.Instant = .now) -> Bool {
        guard !isOver else { return false }
        var drained = false
        while !drained, !isOver {
            let pending: SystemBus.Pending
            do {
                pending = try bus.processPending()
            } catch {
                end(error)
                return false
            }
            for signal in pending.signals where Self.matters(signal) { reads.signalled(now: now) }
            for (cookie, reply) in pending.replies {
                guard let question = asked.removeValue(forKey: cookie) else { continue }
                let answer = Self.answer(reply, to: question)
                if answer != .failed { hasAnswered = true }
                perform(reads.answered(question, with: answer, now: now))
            }
            drained = pending.drained
        }
        perform(reads.tick(now: now))
        return !isOver
    }

    /// The socket of the system bus: `unix:path=` of `DBUS_SYSTEM_BUS_ADDRESS`, else the standard one.
    static func systemBusSocket(address: String?) -> String {
        guard let address, address.hasPrefix("unix:path=") else { return "/run/dbus/system_bus_socket" }
        return String(address.dropFirst("unix:path=".count).prefix { $0 != "," && $0 != ";" })
    }

    /// NetworkManager came or went, or a property that matters changed.
    private static func matters(_ message: SystemBus.Message) -> Bool {
        if message.isSignal(interface: "org.freedesktop.DBus", member: "NameOwnerChanged") { return true }
        guard message.isSignal(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"),
              let interface = try? message.readString(), let changed = try? message.readProperties()
        else { return false }
        return NetworkManagerReading.calls(forReading: interface, changed: changed.keys)
    }

    private func perform(_ actions: [NetworkManagerReads.Action]) {
        for action in actions where !isOver {
            switch action {
            case let .ask(question):
                do {
                    asked[try send(question)] = question
                } catch {
                    end(error)
                }
            case let .read(devices):
                logger.debug("read NetworkManager", metadata: ["devices": "\(devices)"])
            case let .deliver(devices, announce):
                if announce {
                    logger.info(devices.isEmpty ? "NetworkManager says nothing of any device" : "NetworkManager read",
                                metadata: ["devices": "\(devices.count)"])
                }
                deliver(devices)
            }
        }
    }

    private func send(_ question: NetworkManagerReads.Question) throws(SystemBus.Failure) -> UInt64 {
        let properties = "org.freedesktop.DBus.Properties"
        switch question {
        case .isRunning:
            return try bus.send(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                                member: "NameHasOwner", arguments: [NetworkManagerReading.service])
        case .root:
            return try bus.send(destination: NetworkManagerReading.service, path: NetworkManagerReading.rootPath, interface: properties,
                                member: "GetAll", arguments: [NetworkManagerReading.rootInterface])
        case let .device(path):
            return try bus.send(destination: NetworkManagerReading.service, path: path, interface: properties,
                                member: "GetAll", arguments: [NetworkManagerReading.deviceInterface])
        }
    }

    private static func answer(_ reply: SystemBus.Message, to question: NetworkManagerReads.Question) -> NetworkManagerReads.Answer {
        guard reply.failure == nil else { return .failed }
        switch question {
        case .isRunning: return (try? reply.readBool()).map { .running($0) } ?? .failed
        case .root, .device: return (try? reply.readProperties()).map { .properties($0) } ?? .failed
        }
    }

    /// The connection is gone: said once, NetworkManager's word taken back, nothing asked again.
    private func end(_ error: SystemBus.Failure) {
        if hasAnswered {
            logger.notice("the system bus connection closed: NetworkManager is no longer read", metadata: ["reason": "\(error)"])
        } else {
            Self.refused(error, logger: logger)
        }
        let taken = reads.closed()
        isOver = true
        asked = [:]
        for case let .deliver(devices, _) in taken { deliver(devices) }
    }

    /// A bus that is there but refuses reachd is worth a word: dbus-daemon drops a peer whose
    /// uid it cannot name, such as a DynamicUser= (reachd.service has a user of its own).
    private static func refused(_ error: SystemBus.Failure, logger: Logger) {
        logger.notice("the system bus refused reachd: NetworkManager is not read (dbus-daemon drops a user it cannot name, such as a DynamicUser=)",
                      metadata: ["reason": "\(error)"])
    }
}
