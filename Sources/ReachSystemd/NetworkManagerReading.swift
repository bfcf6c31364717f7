import ReachabilityCore

/// What reachd reads of NetworkManager over D-Bus, and when it reads again: pure, from the
/// properties `org.freedesktop.DBus.Properties.GetAll` and `PropertiesChanged` carry.
package enum NetworkManagerReading {
    /// NetworkManager's bus name.
    package static let service = "org.freedesktop.NetworkManager"
    /// Its root object.
    package static let rootPath = "/org/freedesktop/NetworkManager"
    /// The root object's interface.
    package static let rootInterface = "org.freedesktop.NetworkManager"
    /// Every device object's interface.
    package static let deviceInterface = "org.freedesktop.NetworkManager.Device"
    /// Devices read at most: a host with more is no desktop, and the rest are left out.
    package static let deviceLimit = 128

    /// The signals that can change an answer: NetworkManager coming and going (a restart),
    /// and property changes on its root object and devices.
    package static let matchRules = [
        "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(service)'",
        "type='signal',sender='\(service)',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path_namespace='\(rootPath)',arg0='\(rootInterface)'",
        "type='signal',sender='\(service)',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path_namespace='\(rootPath)',arg0='\(deviceInterface)'",
    ]

    /// The properties whose change is read again: the device list, and a device's name,
    /// state, metering and connectivity. Others (statistics, Wi-Fi strength) change nothing.
    package static let relevantProperties: Set<String> = [
        "Devices", "Connectivity", "Interface", "IpInterface", "State", "Metered", "Ip4Connectivity", "Ip6Connectivity",
    ]

    /// Whether a `PropertiesChanged` of `interface` with these changed and invalidated
    /// names calls for reading again.
    package static func calls(forReading interface: String, changed: some Sequence<String>) -> Bool {
        (interface == rootInterface || interface == deviceInterface) && changed.contains(where: relevantProperties.contains)
    }

    /// How reachd-nm's `Version` ends: the name is reachd's own answer, not NetworkManager's.
    package static let reachdAnswerVersionSuffix = "-reachd-nm"

    /// The device object paths of the root object's properties, at most `deviceLimit`; none
    /// when reachd-nm has the name (its devices echo reachd, and reading them would loop).
    package static func devicePaths(_ root: [String: BusValue]) -> [String] {
        if case let .string(version)? = root["Version"], version.hasSuffix(reachdAnswerVersionSuffix) { return [] }
        guard case let .objectPaths(paths)? = root["Devices"] else { return [] }
        return Array(paths.prefix(deviceLimit))
    }

    /// A device's interface name and what NetworkManager says of it; nil when it names no
    /// interface or says nothing (unknown connectivity, metering unknown or guessed no).
    package static func device(_ properties: [String: BusValue]) -> (name: String, facts: NetworkManagerDevice)? {
        // IpInterface is the one carrying IP (ppp0 over a modem's ttyUSB0); else Interface.
        let name = [properties["IpInterface"], properties["Interface"]].lazy.compactMap { value -> String? in
            guard case let .string(name)? = value, !name.isEmpty, name.utf8.count <= 15 else { return nil }
            return name
        }.first
        guard let name else { return nil }
        func number(_ key: String) -> UInt32 {
            if case let .uint32(value)? = properties[key] { return value }
            return 0
        }
        let facts = NetworkManagerDevice(ip4Connectivity: number("Ip4Connectivity"), ip6Connectivity: number("Ip6Connectivity"),
                                         metered: number("Metered"))
        return facts == NetworkManagerDevice() ? nil : (name, facts)
    }
}
