import ReachabilityCore

/// What reachd-nm says as NetworkManager, derived from reachd's path and nothing else: the
/// decision tables of docs/networkmanager.md, in one place.
package struct NetworkManagerAnswer: Sendable, Hashable {
    /// The manager's `State`.
    package var state: NetworkManagerState
    /// The manager's `Connectivity`.
    package var connectivity: NetworkManagerConnectivity
    /// The manager's (and the primary device's) `Metered`.
    package var metered: NetworkManagerMetered
    /// Whether reachd runs probes: `ConnectivityCheckAvailable` and `ConnectivityCheckEnabled`.
    package var connectivityCheckAvailable: Bool
    /// The primary interface, when the path has one: the one device and active connection shown.
    package var primary: Primary?

    /// The primary interface as NetworkManager's objects show it.
    package struct Primary: Sendable, Hashable {
        /// The kernel's interface name.
        package var interface: String
        /// The device's `DeviceType`.
        package var deviceType: NetworkManagerDeviceType
        /// The active connection's `Type`, and the manager's `PrimaryConnectionType`.
        package var connectionType: String
        /// Whether the connection is up (`activated`) or only waits for one (`connecting`).
        package var activated: Bool

        /// The primary interface `interface`, of `deviceType`.
        package init(interface: String, deviceType: NetworkManagerDeviceType, connectionType: String, activated: Bool) {
            self.interface = interface
            self.deviceType = deviceType
            self.connectionType = connectionType
            self.activated = activated
        }
    }

    /// Before reachd has answered: NetworkManager's own state while it starts.
    package static let unknown = NetworkManagerAnswer(
        state: .unknown, connectivity: .unknown, metered: .unknown, connectivityCheckAvailable: false, primary: nil
    )

    /// The answer for `path`; `probes` is whether reachd has connectivity probes configured.
    package init(path: Path, probes: Bool) {
        state = Self.state(path)
        connectivity = Self.connectivity(path)
        metered = path.status == .unsatisfied ? .unknown : Self.metered(path)
        connectivityCheckAvailable = probes
        primary = path.status == .unsatisfied ? nil : path.primaryInterface.map { name in
            let type = path.primaryInterfaceType ?? .other
            return Primary(
                interface: name, deviceType: Self.deviceType(type), connectionType: Self.connectionType(type),
                activated: path.status == .satisfied
            )
        }
    }

    /// The fields one by one (tests, `unknown`).
    package init(
        state: NetworkManagerState, connectivity: NetworkManagerConnectivity, metered: NetworkManagerMetered,
        connectivityCheckAvailable: Bool, primary: Primary?
    ) {
        self.state = state
        self.connectivity = connectivity
        self.metered = metered
        self.connectivityCheckAvailable = connectivityCheckAvailable
        self.primary = primary
    }

    /// `State`: an unprobed satisfied path is `connectedGlobal`, as NetworkManager says with
    /// its own check off; a probe's verdict short of `full` lowers it to site or local.
    static func state(_ path: Path) -> NetworkManagerState {
        switch path.status {
        case .unsatisfied: return .disconnected
        case .requiresConnection: return .connecting
        case .satisfied:
            switch path.connectivity {
            case .unknown, .full: return .connectedGlobal
            case .portal, .limited, .partial: return .connectedSite
            case .local, .none: return .connectedLocal
            }
        }
    }

    /// `Connectivity`: `none` without a path, else the probes' verdict; never `full` without one.
    static func connectivity(_ path: Path) -> NetworkManagerConnectivity {
        guard path.status == .satisfied else { return .none }
        switch path.connectivity {
        case .unknown: return .unknown
        case .none, .local: return .none
        case .portal: return .portal
        case .limited, .partial: return .limited
        case .full: return .full
        }
    }

    /// `Metered`: what the operator or the interface's kind says is `yes`; what the network
    /// only hints (its DHCP option 43, a phone's tethering driver or a hotspot's address plan) is `guessYes`.
    static func metered(_ path: Path) -> NetworkManagerMetered {
        guard path.isExpensive else { return .no }
        switch path.expensiveReason {
        case .configured, .cellular, .networkManager, nil: return .yes
        case .dhcp, .tethering, .hotspotAddressPlan: return .guessYes
        }
    }

    static func deviceType(_ type: InterfaceType) -> NetworkManagerDeviceType {
        switch type {
        case .wifi: .wifi
        case .cellular: .modem
        case .wiredEthernet: .ethernet
        case .loopback: .loopback
        case .other: .generic
        }
    }

    /// NetworkManager's setting names (`NM_SETTING_*_SETTING_NAME`).
    static func connectionType(_ type: InterfaceType) -> String {
        switch type {
        case .wifi: "802-11-wireless"
        case .cellular: "gsm"
        case .wiredEthernet: "802-3-ethernet"
        case .loopback: "loopback"
        case .other: "generic"
        }
    }
}
