/// What reachd knows about one interface's connection to the internet beyond its routes:
/// the probes' verdict per family, when they last finished, and what the network said
/// about a captive portal (RFC 8910 / 8908). Owned by the event loop; an input of the
/// derivation like the kernel snapshot.
package struct InterfaceConnectivity: Sendable, Hashable {
    /// The IPv4 probes' verdict.
    package var ipv4: Connectivity
    /// The IPv6 probes' verdict.
    package var ipv6: Connectivity
    /// When a probe round last finished, in seconds since the epoch (UTC).
    package var lastChecked: Int?
    /// Captive-portal facts, when the network announced a portal or a probe met one.
    package var captivePortal: CaptivePortal?
    /// The interface's TCP traffic is stalled (`DataStallDetector`): since when, and what
    /// the verdict rests on; nil when it is not.
    package var dataStall: DataStall?
    /// What NetworkManager says of the device, when it manages it.
    package var networkManager: NetworkManagerDevice?
    /// The network's DHCP server sent `ANDROID_METERED` (option 43) in the lease the
    /// interface's DHCP client recorded (`DHCPLeases`).
    package var dhcpMetered = false
    /// What the interface's TCP traffic says of its link (`LinkQualityEstimator`); nil when
    /// the reads saw nothing to estimate from.
    package var linkQuality: LinkQualityEstimate?

    /// Nothing known yet.
    package init(ipv4: Connectivity = .unknown, ipv6: Connectivity = .unknown, lastChecked: Int? = nil, captivePortal: CaptivePortal? = nil,
                dataStall: DataStall? = nil, networkManager: NetworkManagerDevice? = nil) {
        self.ipv4 = ipv4
        self.ipv6 = ipv6
        self.lastChecked = lastChecked
        self.captivePortal = captivePortal
        self.dataStall = dataStall
        self.networkManager = networkManager
    }

    /// One family's verdict.
    package subscript(family: AddressFamily) -> Connectivity {
        get { family == .ipv4 ? ipv4 : ipv6 }
        set { if family == .ipv4 { ipv4 = newValue } else { ipv6 = newValue } }
    }

    /// The interface's connectivity as the path reports it (`ProbeVerdict.combine`).
    package var combined: Connectivity { ProbeVerdict.combine(self) }

    /// Why `combined` is what it is, when something other than the probes decided it.
    package var cause: ConnectivityCause? { ProbeVerdict.cause(self) }

    /// Since when `cause` holds (a stall's start), in seconds since the epoch.
    package var causeSince: Int? { cause == .dataStall ? dataStall?.since : nil }

    /// How many destinations a `dataStall` cause rests on.
    package var causeDestinations: Int? { cause == .dataStall ? dataStall?.destinations : nil }

    /// A user must act before traffic flows (SCNetworkReachability's interventionRequired).
    package var requiresIntervention: Bool { combined == .portal }
}

/// What decided an interface's connectivity other than reachd's own probes.
public enum ConnectivityCause: String, Sendable, Hashable, Codable, CaseIterable {
    /// Its TCP traffic is stalled: segments go out and nothing comes back.
    case dataStall
    /// NetworkManager's connectivity check, where reachd's probes have no verdict.
    case networkManager
}

/// Connectivity facts by interface index.
package typealias ConnectivityTable = [Int32: InterfaceConnectivity]

/// A captive portal as reachd knows it: the API URI the network announced (RFC 8910: RA
/// option 37 or systemd-networkd), what the API answered (RFC 8908), or where a probe
/// was redirected to. Field names are the wire names of `io.reachd.Reachability.CaptivePortal`.
public struct CaptivePortal: Sendable, Hashable, Codable {
    /// The RFC 8908 API URI the network announced; nil when only a probe saw the portal.
    public var apiURI: String?
    /// The network holds traffic until the user acts: the API said so, or a probe was
    /// intercepted. False when the API said the session is open; nil when nobody asked yet.
    public var captive: Bool?
    /// Where the user logs in: the API's `user-portal-url`, or the probe's redirect.
    public var userPortalURL: String?
    /// Information about the venue.
    public var venueInfoURL: String?
    /// The session can be extended.
    public var canExtendSession: Bool?
    /// Seconds left in the session when the API last answered.
    public var secondsRemaining: Int?
    /// Bytes left in the session when the API last answered.
    public var bytesRemaining: Int?

    /// Creates captive-portal facts.
    public init(apiURI: String? = nil, captive: Bool? = nil, userPortalURL: String? = nil, venueInfoURL: String? = nil,
                canExtendSession: Bool? = nil, secondsRemaining: Int? = nil, bytesRemaining: Int? = nil) {
        self.apiURI = apiURI
        self.captive = captive
        self.userPortalURL = userPortalURL
        self.venueInfoURL = venueInfoURL
        self.canExtendSession = canExtendSession
        self.secondsRemaining = secondsRemaining
        self.bytesRemaining = bytesRemaining
    }
}
