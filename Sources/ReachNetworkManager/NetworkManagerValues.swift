/// NetworkManager's D-Bus enums (its `nm-dbus-interface.h`), the numbers its clients compare.
package enum NetworkManagerState: UInt32, Sendable, CaseIterable {
    /// `NM_STATE_UNKNOWN`.
    case unknown = 0
    /// `NM_STATE_ASLEEP`.
    case asleep = 10
    /// `NM_STATE_DISCONNECTED`.
    case disconnected = 20
    /// `NM_STATE_DISCONNECTING`.
    case disconnecting = 30
    /// `NM_STATE_CONNECTING`.
    case connecting = 40
    /// `NM_STATE_CONNECTED_LOCAL`: no default route.
    case connectedLocal = 50
    /// `NM_STATE_CONNECTED_SITE`: a default route, but the internet is not reached.
    case connectedSite = 60
    /// `NM_STATE_CONNECTED_GLOBAL`.
    case connectedGlobal = 70
}

/// `NMConnectivityState`.
package enum NetworkManagerConnectivity: UInt32, Sendable, CaseIterable {
    /// `NM_CONNECTIVITY_UNKNOWN`: not checked.
    case unknown = 0
    /// `NM_CONNECTIVITY_NONE`.
    case none = 1
    /// `NM_CONNECTIVITY_PORTAL`.
    case portal = 2
    /// `NM_CONNECTIVITY_LIMITED`.
    case limited = 3
    /// `NM_CONNECTIVITY_FULL`.
    case full = 4
}

/// `NMMetered`.
package enum NetworkManagerMetered: UInt32, Sendable, CaseIterable {
    /// `NM_METERED_UNKNOWN`.
    case unknown = 0
    /// `NM_METERED_YES`.
    case yes = 1
    /// `NM_METERED_NO`.
    case no = 2
    /// `NM_METERED_GUESS_YES`.
    case guessYes = 3
    /// `NM_METERED_GUESS_NO`.
    case guessNo = 4
}

/// `NMDeviceType`, the kinds reachd's interface types map to.
package enum NetworkManagerDeviceType: UInt32, Sendable, CaseIterable {
    /// `NM_DEVICE_TYPE_ETHERNET`.
    case ethernet = 1
    /// `NM_DEVICE_TYPE_WIFI`.
    case wifi = 2
    /// `NM_DEVICE_TYPE_MODEM`.
    case modem = 8
    /// `NM_DEVICE_TYPE_GENERIC`.
    case generic = 14
    /// `NM_DEVICE_TYPE_LOOPBACK`.
    case loopback = 32
}

/// A value as it goes on the bus, with its D-Bus signature: the kinds NetworkManager's
/// properties and replies that reachd-nm answers have.
package indirect enum BusReplyValue: Sendable, Hashable {
    /// `u`.
    case uint32(UInt32)
    /// `b`.
    case bool(Bool)
    /// `s`.
    case string(String)
    /// `o`.
    case objectPath(String)
    /// `ao`.
    case objectPaths([String])
    /// `au`.
    case uint32s([UInt32])
    /// `(uu)`, a device's `StateReason`.
    case uint32Pair(UInt32, UInt32)
    /// `a{sv}`.
    case properties([String: BusReplyValue])
    /// `a{ss}`, `GetPermissions`' answer.
    case stringMap([String: String])
    /// `v`, what `Properties.Get` answers.
    case variant(BusReplyValue)
    /// `a{oa{sa{sv}}}`, what `GetManagedObjects` answers.
    case objects([String: [String: [String: BusReplyValue]]])

    /// The D-Bus type signature.
    package var signature: String {
        switch self {
        case .uint32: "u"
        case .bool: "b"
        case .string: "s"
        case .objectPath: "o"
        case .objectPaths: "ao"
        case .uint32s: "au"
        case .uint32Pair: "(uu)"
        case .properties: "a{sv}"
        case .stringMap: "a{ss}"
        case .variant: "v"
        case .objects: "a{oa{sa{sv}}}"
        }
    }
}
