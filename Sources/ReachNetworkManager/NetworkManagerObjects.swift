/// The object tree reachd-nm exports for one answer: the manager, the settings object, and
/// for a primary interface its device and active connection, each interface with the
/// properties libnm's client reads at start-up (`GetManagedObjects`).
package struct NetworkManagerObjects: Sendable, Hashable {
    /// The manager's object path.
    package static let managerPath = "/org/freedesktop/NetworkManager"
    /// Where the object manager is, as NetworkManager has it.
    package static let objectManagerPath = "/org/freedesktop"
    /// The settings object's path.
    package static let settingsPath = "/org/freedesktop/NetworkManager/Settings"
    /// The manager's interface, also the bus name.
    package static let managerInterface = "org.freedesktop.NetworkManager"
    static let deviceInterface = "org.freedesktop.NetworkManager.Device"
    static let activeInterface = "org.freedesktop.NetworkManager.Connection.Active"
    static let settingsInterface = "org.freedesktop.NetworkManager.Settings"

    /// Properties by object path, then interface, then name.
    package var objects: [String: [String: [String: BusReplyValue]]]
    /// The answer the tree shows.
    package let answer: NetworkManagerAnswer
    /// The number in the device's and active connection's paths.
    package let serial: Int
    /// The manager's `Version`.
    package let version: String

    /// The tree for `answer`; `serial` numbers the device and active connection objects
    /// (a new primary interface gets a new number, as NetworkManager's paths never repeat),
    /// `version` is the manager's `Version`.
    package init(answer: NetworkManagerAnswer, serial: Int, version: String) {
        self.answer = answer
        self.serial = serial
        self.version = version
        let device = answer.primary.map { _ in "\(Self.managerPath)/Devices/\(serial)" }
        let active = answer.primary.map { _ in "\(Self.managerPath)/ActiveConnection/\(serial)" }
        let activeConnections = active.map { [$0] } ?? []
        let activated = answer.primary?.activated ?? false
        objects = [:]
        objects[Self.managerPath] = [Self.managerInterface: [
            "Devices": .objectPaths(device.map { [$0] } ?? []),
            "AllDevices": .objectPaths(device.map { [$0] } ?? []),
            "Checkpoints": .objectPaths([]),
            "NetworkingEnabled": .bool(true),
            "WirelessEnabled": .bool(true),
            "WirelessHardwareEnabled": .bool(true),
            "WwanEnabled": .bool(true),
            "WwanHardwareEnabled": .bool(true),
            "WimaxEnabled": .bool(false),
            "WimaxHardwareEnabled": .bool(false),
            "ActiveConnections": .objectPaths(activeConnections),
            "PrimaryConnection": .objectPath(activated ? active ?? "/" : "/"),
            "PrimaryConnectionType": .string(activated ? answer.primary?.connectionType ?? "" : ""),
            "ActivatingConnection": .objectPath(activated ? "/" : active ?? "/"),
            "Metered": .uint32(answer.metered.rawValue),
            "Startup": .bool(false),
            "Version": .string(version),
            "Capabilities": .uint32s([]),
            "State": .uint32(answer.state.rawValue),
            "Connectivity": .uint32(answer.connectivity.rawValue),
            "ConnectivityCheckAvailable": .bool(answer.connectivityCheckAvailable),
            "ConnectivityCheckEnabled": .bool(answer.connectivityCheckAvailable),
            "ConnectivityCheckUri": .string(""),
            "GlobalDnsConfiguration": .properties([:]),
        ]]
        objects[Self.settingsPath] = [Self.settingsInterface: [
            "Connections": .objectPaths([]),
            "Hostname": .string(""),
            "CanModify": .bool(false),
        ]]
        if let primary = answer.primary, let device, let active {
            objects[device] = Self.device(primary, answer: answer, active: active)
            objects[active] = [Self.activeInterface: [
                "Connection": .objectPath("/"),
                "SpecificObject": .objectPath("/"),
                "Id": .string(primary.interface),
                "Uuid": .string(StableUUID(primary.interface).text),
                "Type": .string(primary.connectionType),
                "Devices": .objectPaths([device]),
                "State": .uint32(primary.activated ? 2 : 1),  // NM_ACTIVE_CONNECTION_STATE_ACTIVATED / _ACTIVATING
                "StateFlags": .uint32(0),
                "Default": .bool(primary.activated),
                "Default6": .bool(false),
                "Ip4Config": .objectPath("/"),
                "Dhcp4Config": .objectPath("/"),
                "Ip6Config": .objectPath("/"),
                "Dhcp6Config": .objectPath("/"),
                "Vpn": .bool(false),
                "Master": .objectPath("/"),
            ]]
        }
    }

    private static func device(
        _ primary: NetworkManagerAnswer.Primary, answer: NetworkManagerAnswer, active: String
    ) -> [String: [String: BusReplyValue]] {
        let connectivity = BusReplyValue.uint32(answer.connectivity.rawValue)
        var interfaces: [String: [String: BusReplyValue]] = [deviceInterface: [
            "Udi": .string("/sys/class/net/\(primary.interface)"),
            "Path": .string(""),
            "Interface": .string(primary.interface),
            "IpInterface": .string(primary.interface),
            "Driver": .string(""),
            "DriverVersion": .string(""),
            "FirmwareVersion": .string(""),
            "Capabilities": .uint32(0),
            "Ip4Address": .uint32(0),
            // NM_DEVICE_STATE_ACTIVATED, else _IP_CONFIG (waiting for its connection).
            "State": .uint32(primary.activated ? 100 : 70),
            "StateReason": .uint32Pair(primary.activated ? 100 : 70, 0),
            "ActiveConnection": .objectPath(active),
            "Ip4Config": .objectPath("/"),
            "Dhcp4Config": .objectPath("/"),
            "Ip6Config": .objectPath("/"),
            "Dhcp6Config": .objectPath("/"),
            "Managed": .bool(false),
            "Autoconnect": .bool(false),
            "FirmwareMissing": .bool(false),
            "NmPluginMissing": .bool(false),
            "DeviceType": .uint32(primary.deviceType.rawValue),
            "AvailableConnections": .objectPaths([]),
            "PhysicalPortId": .string(""),
            "Mtu": .uint32(0),
            "Metered": .uint32(answer.metered.rawValue),
            "Real": .bool(true),
            "Ip4Connectivity": connectivity,
            "Ip6Connectivity": connectivity,
            "InterfaceFlags": .uint32(0),
            "HwAddress": .string(""),
            "Ports": .objectPaths([]),
        ]]
        // libnm makes a device's class from its type interface; the generic one asks nothing of the radio.
        interfaces["\(deviceInterface).Generic"] = ["HwAddress": .string(""), "TypeDescription": .string(primary.connectionType)]
        return interfaces
    }

    /// The tree for `next`: a new primary interface gets the next serial, the same one keeps its paths.
    package func replaced(by next: NetworkManagerAnswer) -> NetworkManagerObjects {
        let newPrimary = next.primary != nil && next.primary?.interface != answer.primary?.interface
        return NetworkManagerObjects(answer: next, serial: newPrimary ? serial + 1 : serial, version: version)
    }

    /// The properties that differ between `old` and `self`, by path and interface: what
    /// `PropertiesChanged` says. Objects that come or go are not listed (`InterfacesAdded`
    /// and `InterfacesRemoved` say those).
    package func changes(since old: NetworkManagerObjects) -> [String: [String: [String: BusReplyValue]]] {
        var changes: [String: [String: [String: BusReplyValue]]] = [:]
        for (path, interfaces) in objects {
            guard let oldInterfaces = old.objects[path] else { continue }
            for (interface, properties) in interfaces {
                let oldProperties = oldInterfaces[interface] ?? [:]
                let changed = properties.filter { oldProperties[$0.key] != $0.value }
                if !changed.isEmpty { changes[path, default: [:]][interface] = changed }
            }
        }
        return changes
    }
}

/// A UUID-shaped identifier that is the same for the same name: an active connection's `Uuid`
/// stays put while its interface is primary and across restarts (two FNV-1a 64 hashes).
struct StableUUID {
    let text: String

    init(_ name: String) {
        func fnv(_ seed: UInt64) -> UInt64 {
            name.utf8.reduce(seed) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
        }
        let hex = String(fnv(0xcbf2_9ce4_8422_2325), radix: 16).leftPadded(16) + String(fnv(0x8422_2325_cbf2_9ce4), radix: 16).leftPadded(16)
        let characters = Array(hex)
        text = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
