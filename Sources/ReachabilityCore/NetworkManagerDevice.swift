/// What NetworkManager says of one device it manages, read over D-Bus: its own
/// connectivity check per family and whether the user (or NetworkManager's guess) made the
/// connection metered. reachd merges it with its own facts (`ProbeVerdict`,
/// `InterfacePolicy.expense`), so a GLib app hearing reachd never knows less than
/// NetworkManager's own GNetworkMonitor would have told it.
package struct NetworkManagerDevice: Sendable, Hashable {
    /// `Ip4Connectivity`.
    package var ipv4: Connectivity
    /// `Ip6Connectivity`.
    package var ipv6: Connectivity
    /// `Metered`: true for yes or guess-yes, false for no (the user's choice), nil for
    /// unknown or guess-no (NetworkManager's guess leaves reachd's own to decide).
    package var metered: Bool?

    /// Creates NetworkManager's facts for a device.
    package init(ipv4: Connectivity = .unknown, ipv6: Connectivity = .unknown, metered: Bool? = nil) {
        self.ipv4 = ipv4
        self.ipv6 = ipv6
        self.metered = metered
    }

    /// From the raw D-Bus values (`NMConnectivityState`, `NMMetered`); values NetworkManager
    /// may add later read as unknown.
    package init(ip4Connectivity: UInt32, ip6Connectivity: UInt32, metered: UInt32) {
        self.init(ipv4: Self.connectivity(ip4Connectivity), ipv6: Self.connectivity(ip6Connectivity), metered: Self.metered(metered))
    }

    /// `NMConnectivityState`: 0 unknown, 1 none, 2 portal, 3 limited, 4 full.
    package static func connectivity(_ state: UInt32) -> Connectivity {
        switch state {
        case 1: return .none
        case 2: return .portal
        case 3: return .limited
        case 4: return .full
        default: return .unknown
        }
    }

    /// `NMMetered`: 1 yes and 3 guess-yes are metered (what NetworkManager's own GLib
    /// backend reports); 2 no is the user saying it is not; 0 unknown and 4 guess-no say nothing.
    package static func metered(_ value: UInt32) -> Bool? {
        switch value {
        case 1, 3: return true
        case 2: return false
        default: return nil
        }
    }

    /// NetworkManager's verdict for the interface: a portal on either family wins, else the
    /// better family's, as reachd combines its own probes.
    package var verdict: Connectivity {
        if ipv4 == .portal || ipv6 == .portal { return .portal }
        return ProbeVerdict.better(ipv4, ipv6)
    }
}

/// Why an interface is costly to use, the first that holds (`InterfacePolicy.expense`).
public enum ExpensiveReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// `expensive = true` in an `[[interfaces.override]]`.
    case configured
    /// A cellular (WWAN) interface.
    case cellular
    /// NetworkManager says the device's connection is metered.
    case networkManager
    /// A phone tethered over USB or Bluetooth (`CostlyNetworks.tetheringDriver`).
    case tethering
    /// The network's DHCP server said so (option 43 `ANDROID_METERED`, what Android's
    /// hotspot and USB tethering send).
    case dhcp
    /// An iPhone Personal Hotspot's address plan (`CostlyNetworks.isHotspotAddressPlan`).
    case hotspotAddressPlan
}
