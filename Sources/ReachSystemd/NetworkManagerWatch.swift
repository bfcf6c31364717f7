import Glibc
import LinuxSystem
import Logging
import ReachabilityCore
import SystemPackage

/// Follows NetworkManager over the system bus, read-only and passively: on a thread of its
/// own, it reads every device's connectivity and `Metered` when NetworkManager appears and
/// again after a change that matters (`NetworkManagerReading`), and hands each new answer
/// on. Nothing is asked while NetworkManager is not on the bus; asleep in `poll(2)` between
/// signals. The connection is the thread's alone (sd-bus is not thread-safe).
package final class NetworkManagerWatch: Sendable {
    private let stopBell: EventDescriptor
    private let logger: Logger

    /// A watch that has not started.
    package init(logger: Logger) throws(Errno) {
        stopBell = try EventDescriptor()
        self.logger = logger
    }

    /// Starts the thread; `deliver` hears each new answer, by interface name, on it (first
    /// the answer at start, empty when NetworkManager is not running). False when there is
    /// no thread to be had.
    package func start(deliver: @escaping @Sendable ([String: NetworkManagerDevice]) -> Void) -> Bool {
        let (bell, logger) = (stopBell, logger)
        return DetachedThread.start { Self.run(stop: bell, logger: logger, deliver: deliver) }
    }

    /// Ends the thread at its next wake-up (at once when it waits for signals).
    package func stop() { stopBell.ring() }

    /// The socket of the system bus: `unix:path=` of `DBUS_SYSTEM_BUS_ADDRESS`, else the standard one.
    static func systemBusSocket(address: String?) -> String {
        guard let address, address.hasPrefix("unix:path=") else { return "/run/dbus/system_bus_socket" }
        return String(address.dropFirst("unix:path=".count).prefix { $0 != "," && $0 != ";" })
    }

    /// A burst of signals (a device activating) is read once, this long after the first.
    private static let settleMilliseconds: Int32 = 100

    private static func run(stop: EventDescriptor, logger: Logger, deliver: @Sendable ([String: NetworkManagerDevice]) -> Void) {
        let bus: SystemBus
        do {
            bus = try SystemBus()
            for rule in NetworkManagerReading.matchRules { try bus.addMatch(rule) }
        } catch {
            // A bus that is there but refuses reachd is worth a word: dbus-daemon drops a peer whose
            // uid it cannot name, such as a DynamicUser= (reachd.service has a user of its own).
            if FileSystem.exists(systemBusSocket(address: getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) })) {
                logger.notice("the system bus refused reachd: NetworkManager is not read (dbus-daemon drops a user it cannot name, such as a DynamicUser=)",
                              metadata: ["reason": "\(error)"])
            } else {
                logger.debug("no system bus: NetworkManager is not read", metadata: ["reason": "\(error)"])
            }
            return
        }
        var delivered: [String: NetworkManagerDevice]?
        var readAt: ContinuousClock.Instant? = .now
        while true {
            let drained: Bool
            do {
                let pending = try bus.processPending()
                for message in pending.messages where matters(message) {
                    readAt = readAt ?? .now + .milliseconds(settleMilliseconds)
                }
                drained = pending.drained
            } catch {
                logger.notice("the system bus connection closed: NetworkManager is no longer read", metadata: ["reason": "\(error)"])
                if delivered?.isEmpty == false { deliver([:]) }
                return
            }
            if let due = readAt, due <= .now {
                readAt = nil
                let devices = read(bus, logger: logger)
                logger.debug("read NetworkManager", metadata: ["devices": "\(devices.count)"])
                if devices != delivered {
                    if (delivered ?? [:]).isEmpty != devices.isEmpty {
                        logger.info(devices.isEmpty ? "NetworkManager says nothing of any device" : "NetworkManager read",
                                    metadata: ["devices": "\(devices.count)"])
                    }
                    delivered = devices
                    deliver(devices)
                }
                continue  // what arrived during the calls is queued in sd-bus, not on the socket
            }
            if !drained { continue }
            var descriptors = [
                pollfd(fd: bus.descriptor, events: bus.events, revents: 0),
                pollfd(fd: stop.descriptor.rawValue, events: Int16(POLLIN), revents: 0),
            ]
            let settle = readAt.map { due in
                let left = (due - .now).components
                return Int32(clamping: max(0, left.seconds * 1000 + left.attoseconds / 1_000_000_000_000_000 + 1))
            }
            let timeout = [settle, bus.timeoutMilliseconds].compactMap { $0 }.min() ?? -1
            if poll(&descriptors, 2, timeout) < 0, errno != EINTR {
                logger.error("poll failed: NetworkManager is no longer read", metadata: ["errno": "\(errno)"])
                return
            }
            if descriptors[1].revents != 0 { return }
        }
    }

    /// NetworkManager came or went, or a property that matters changed.
    private static func matters(_ message: SystemBus.Message) -> Bool {
        if message.isSignal(interface: "org.freedesktop.DBus", member: "NameOwnerChanged") { return true }
        guard message.isSignal(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"),
              let interface = try? message.readString(), let changed = try? message.readProperties()
        else { return false }
        return NetworkManagerReading.calls(forReading: interface, changed: changed.keys)
    }

    /// Every device NetworkManager says something of; empty when it is not on the bus or
    /// does not answer (a restart then reads again).
    private static func read(_ bus: SystemBus, logger: Logger) -> [String: NetworkManagerDevice] {
        let properties = "org.freedesktop.DBus.Properties"
        do {
            let running = try bus.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                                       member: "NameHasOwner", arguments: [NetworkManagerReading.service]).readBool()
            guard running else { return [:] }
            let root = try bus.call(destination: NetworkManagerReading.service, path: NetworkManagerReading.rootPath, interface: properties,
                                    member: "GetAll", arguments: [NetworkManagerReading.rootInterface]).readProperties()
            var devices: [String: NetworkManagerDevice] = [:]
            for path in NetworkManagerReading.devicePaths(root) {
                // A device removed between the two calls answers an error: it is left out.
                guard let device = try? bus.call(destination: NetworkManagerReading.service, path: path, interface: properties,
                                                 member: "GetAll", arguments: [NetworkManagerReading.deviceInterface]).readProperties(),
                      let (name, facts) = NetworkManagerReading.device(device)
                else { continue }
                devices[name] = facts
            }
            return devices
        } catch {
            logger.debug("NetworkManager did not answer", metadata: ["reason": "\(error)"])
            return [:]
        }
    }
}
