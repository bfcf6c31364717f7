/// The kind of interface a path runs over (NWInterface.InterfaceType).
public enum InterfaceType: String, Sendable, Hashable, Codable, CaseIterable {
    /// A wireless LAN interface (sysfs `wireless`/`phy80211`, or `DEVTYPE=wlan`).
    case wifi
    /// A WWAN modem (`DEVTYPE=wwan`, a WWAN driver, or a raw-IP device).
    case cellular
    /// Any other Ethernet device: a NIC, bridge, bond, VLAN, macvlan or veth.
    case wiredEthernet
    /// The loopback interface.
    case loopback
    /// Anything else: tunnels and overlays (WireGuard, vxlan, GRE, tun/tap), PPP, any device
    /// that is not Ethernet.
    case other
}

/// What provides a path's IPv4 when it is not native.
public enum IPv4Provider: String, Sendable, Hashable, Codable, CaseIterable {
    /// A CLAT (464XLAT, RFC 6877): IPv4 packets are translated to IPv6 on this host and
    /// leave through the IPv6 uplink.
    case clat
}

/// What an interface does for this host, judged by `InterfaceRoles`.
public enum InterfaceRole: String, Sendable, Hashable, Codable, CaseIterable {
    /// A CLAT's device (464XLAT): IPv4 sent into it leaves as IPv6 through the uplink.
    case clat
}

/// NWPath.Status.
public enum PathStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// A usable route to the internet exists.
    case satisfied
    /// No usable route.
    case unsatisfied
    /// A route exists but its interface waits for a connection to be set up (dormant).
    case requiresConnection
}

/// Why a path is not satisfied: the first thing that stands in the way.
public enum UnsatisfiedReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// No interface other than loopback exists.
    case noInterface
    /// No route to the internet at all (ENETUNREACH).
    case noRoute
    /// The default route is `unreachable` (EHOSTUNREACH).
    case unreachableRoute
    /// The default route is `blackhole`.
    case blackholeRoute
    /// The default route is `prohibit`.
    case prohibitedRoute
    /// The route's output interface is administratively down.
    case interfaceDown
    /// The route's output interface has no carrier (cable out, peer down, `linkdown`).
    case noCarrier
    /// The route's output interface has no usable address (only link-local, tentative or none).
    case noAddress
    /// The route's gateway does not answer: the kernel marked its neighbour entry FAILED.
    case gatewayUnreachable
    /// The route's output interface is dormant: it waits for authentication (802.1X) or a dial-up.
    case connectionRequired
    /// The route's output interface is excluded by the subscriber's interface-type filter.
    case interfaceTypeProhibited
    /// The route goes through an interface that configuration marks as ignored.
    case interfaceIgnored
    /// Targets only: the name does not exist (NXDOMAIN, or no address of any family).
    case nameNotFound
    /// Targets only: no DNS server is configured, so the name cannot be resolved.
    case noDNSServer
    /// Targets only: resolving the name failed (server failure, refused, malformed answer).
    case resolutionFailed
    /// Targets only: no answer to the name in time.
    case resolutionTimedOut
}

/// AFNetworkReachabilityStatus, extended with the Linux interface types.
public enum ReachabilityStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Not evaluated yet. Never sent to a client: the daemon answers only after its first evaluation.
    case unknown
    /// The path is not satisfied.
    case notReachable
    /// Satisfied over a `wifi` interface.
    case reachableViaWiFi
    /// Satisfied over a `cellular` interface.
    case reachableViaWWAN
    /// Satisfied over a `wiredEthernet` interface.
    case reachableViaWired
    /// Satisfied over a `loopback` or `other` interface (a tunnel, a VPN, PPP).
    case reachableViaOther
}

/// Result of connectivity probes (NetworkManager's connectivity states).
public enum Connectivity: String, Sendable, Hashable, Codable, CaseIterable {
    /// Not probed (probes are not configured or have not run).
    case unknown
    /// No route: probes cannot run.
    case none
    /// Only local networks are reachable.
    case local
    /// A captive portal intercepts traffic.
    case portal
    /// Probes failed or timed out without a portal in sight.
    case limited
    /// Plain HTTP reaches the internet, HTTPS does not (a firewall, or TLS interception).
    case partial
    /// Probes reached the internet.
    case full
}

/// SCNetworkReachabilityFlags, by name. Raw values are Apple's bit positions.
public struct ReachabilityFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Reached over a transient link such as PPP.
    public static let transientConnection = ReachabilityFlags(rawValue: 1 << 0)
    /// A route exists over an interface that is up, has carrier and a usable address.
    public static let reachable = ReachabilityFlags(rawValue: 1 << 1)
    /// Reachable once a connection is set up (output interface dormant).
    public static let connectionRequired = ReachabilityFlags(rawValue: 1 << 2)
    /// Never set on Linux (no on-traffic VPN dialling); present for completeness.
    public static let connectionOnTraffic = ReachabilityFlags(rawValue: 1 << 3)
    /// The user must act (captive portal).
    public static let interventionRequired = ReachabilityFlags(rawValue: 1 << 4)
    /// Never set on Linux (no dial-on-demand); present for completeness.
    public static let connectionOnDemand = ReachabilityFlags(rawValue: 1 << 5)
    /// The target is an address of this host.
    public static let isLocalAddress = ReachabilityFlags(rawValue: 1 << 16)
    /// The target is on-link: the route has no gateway.
    public static let isDirect = ReachabilityFlags(rawValue: 1 << 17)
    /// The output interface is cellular.
    public static let isWWAN = ReachabilityFlags(rawValue: 1 << 18)

    /// Every flag with its wire name, in Apple's bit order.
    package static let named: [(ReachabilityFlags, String)] = [
        (.transientConnection, "transientConnection"), (.reachable, "reachable"),
        (.connectionRequired, "connectionRequired"), (.connectionOnTraffic, "connectionOnTraffic"),
        (.interventionRequired, "interventionRequired"), (.connectionOnDemand, "connectionOnDemand"),
        (.isLocalAddress, "isLocalAddress"), (.isDirect, "isDirect"), (.isWWAN, "isWWAN"),
    ]

    /// The names of the flags that are set, in Apple's bit order.
    public var names: [String] { Self.named.filter { contains($0.0) }.map(\.1) }

    /// Builds flags from names; nil if any name is unknown.
    public init?(names: [String]) {
        var flags: ReachabilityFlags = []
        for name in names {
            guard let flag = Self.named.first(where: { $0.1 == name })?.0 else { return nil }
            flags.insert(flag)
        }
        self = flags
    }
}

extension ReachabilityFlags: Codable {
    /// Decodes from a list of flag names.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let names = try container.decode([String].self)
        guard let flags = ReachabilityFlags(names: names) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "unknown flag in \(names)")
        }
        self = flags
    }

    /// Encodes as a list of flag names.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(names)
    }
}

/// reachd's answer: an NWPath-like description of how this host reaches the internet.
/// Field names are the wire names of `io.reachd.Reachability.Path`.
public struct Path: Sendable, Hashable, Codable {
    /// Satisfied, unsatisfied, or requires a connection.
    public var status: PathStatus
    /// Why the path is not satisfied; nil when it is.
    public var unsatisfiedReason: UnsatisfiedReason?
    /// AFNetworking-style status.
    public var reachability: ReachabilityStatus
    /// SCNetworkReachability flags that hold.
    public var flags: ReachabilityFlags
    /// Interface the internet traffic leaves by.
    public var primaryInterface: String?
    /// Type of the primary interface.
    public var primaryInterfaceType: InterfaceType?
    /// Usable interfaces in order of preference, primary first.
    public var availableInterfaces: [String]
    /// Default gateways of the primary route, IPv4 first.
    public var gateways: [String]
    /// IPv4 internet route usable.
    public var supportsIPv4: Bool
    /// IPv6 internet route usable.
    public var supportsIPv6: Bool
    /// A DNS server is configured.
    public var supportsDNS: Bool
    /// The primary interface is costly (cellular, configured so, or metered in NetworkManager).
    public var isExpensive: Bool
    /// Why the primary interface is costly; nil when it is not.
    public var expensiveReason: ExpensiveReason?
    /// The primary interface is in a low-data mode (configured).
    public var isConstrained: Bool
    /// The primary interface's connectivity (probes, captive-portal API); `unknown` until
    /// probes ran, `none` or `local` without a path.
    public var connectivity: Connectivity
    /// The primary interface's captive portal, when one is known.
    public var captivePortal: CaptivePortal?
    /// What decided `connectivity` other than the probes (a data stall, NetworkManager's check).
    public var connectivityCause: ConnectivityCause?
    /// Since when `connectivityCause` holds, in seconds since the epoch.
    public var connectivityCauseSince: Int?
    /// How many destinations (IPv4 /24s, IPv6 /64s) a `dataStall` cause rests on.
    public var connectivityCauseDestinations: Int?
    /// The NAT64 prefixes of the network IPv6 traffic leaves by (a router's PREF64, else
    /// DNS64); nil when it announced none.
    public var nat64Prefixes: [NAT64Prefix]?
    /// Without native IPv4 (`supportsIPv4` false) but with IPv6 to a network that runs a
    /// NAT64: the prefix under which every IPv4 destination is reached. Nil otherwise.
    public var ipv4ViaNAT64: NAT64Prefix?
    /// What gives this host its IPv4 when it is not native: `clat` when its IPv4 route
    /// leaves through a CLAT (464XLAT) that translates it onto the IPv6 uplink, the primary
    /// interface. Nil for native IPv4 or none.
    public var ipv4ProvidedBy: IPv4Provider?
    /// What the primary interface's link can carry, from the host's own TCP traffic
    /// (NWPath.linkQuality); `unknown` without enough of it, nil from a reachd older than it.
    public var linkQuality: LinkQuality?

    /// Creates a path.
    public init(
        status: PathStatus, unsatisfiedReason: UnsatisfiedReason? = nil, reachability: ReachabilityStatus,
        flags: ReachabilityFlags = [], primaryInterface: String? = nil, primaryInterfaceType: InterfaceType? = nil,
        availableInterfaces: [String] = [], gateways: [String] = [], supportsIPv4: Bool = false,
        supportsIPv6: Bool = false, supportsDNS: Bool = false, isExpensive: Bool = false, expensiveReason: ExpensiveReason? = nil,
        isConstrained: Bool = false, connectivity: Connectivity = .unknown, captivePortal: CaptivePortal? = nil,
        connectivityCause: ConnectivityCause? = nil, connectivityCauseSince: Int? = nil, connectivityCauseDestinations: Int? = nil,
        nat64Prefixes: [NAT64Prefix]? = nil, ipv4ViaNAT64: NAT64Prefix? = nil, ipv4ProvidedBy: IPv4Provider? = nil,
        linkQuality: LinkQuality? = nil
    ) {
        self.linkQuality = linkQuality
        self.status = status
        self.unsatisfiedReason = unsatisfiedReason
        self.reachability = reachability
        self.flags = flags
        self.primaryInterface = primaryInterface
        self.primaryInterfaceType = primaryInterfaceType
        self.availableInterfaces = availableInterfaces
        self.gateways = gateways
        self.supportsIPv4 = supportsIPv4
        self.supportsIPv6 = supportsIPv6
        self.supportsDNS = supportsDNS
        self.isExpensive = isExpensive
        self.expensiveReason = expensiveReason
        self.isConstrained = isConstrained
        self.connectivity = connectivity
        self.captivePortal = captivePortal
        self.connectivityCause = connectivityCause
        self.connectivityCauseSince = connectivityCauseSince
        self.connectivityCauseDestinations = connectivityCauseDestinations
        self.nat64Prefixes = nat64Prefixes
        self.ipv4ViaNAT64 = ipv4ViaNAT64
        self.ipv4ProvidedBy = ipv4ProvidedBy
    }

    /// NWPath.usesInterfaceType: whether the primary interface is of this type.
    public func usesInterfaceType(_ type: InterfaceType) -> Bool { primaryInterfaceType == type }
}

/// One interface as `ListInterfaces` reports it.
public struct InterfaceDescription: Sendable, Hashable, Codable {
    /// One address of the interface, as reported on the wire.
    public struct Address: Sendable, Hashable, Codable {
        /// The address text.
        public var address: String
        /// Prefix length.
        public var prefixLength: Int
        /// `ipv4` or `ipv6`.
        public var family: AddressFamily
        /// Kernel scope.
        public var scope: AddressScope
        /// DAD still running.
        public var tentative: Bool
        /// DAD failed.
        public var dadFailed: Bool
        /// Counts towards internet reachability.
        public var usable: Bool

        /// Creates an address description.
        public init(address: String, prefixLength: Int, family: AddressFamily, scope: AddressScope, tentative: Bool, dadFailed: Bool, usable: Bool) {
            self.address = address
            self.prefixLength = prefixLength
            self.family = family
            self.scope = scope
            self.tentative = tentative
            self.dadFailed = dadFailed
            self.usable = usable
        }
    }

    /// Kernel interface index.
    public var index: Int
    /// Interface name.
    public var name: String
    /// Classified type.
    public var type: InterfaceType
    /// `IFLA_INFO_KIND` (veth, bridge, tun, …).
    public var kind: String?
    /// The bound driver (sysfs), nil for virtual devices.
    public var driver: String?
    /// RFC 2863 operational state as `ip link` prints it.
    public var operState: String
    /// Administratively up.
    public var up: Bool
    /// Carrier present.
    public var carrier: Bool
    /// Addresses.
    public var addresses: [Address]
    /// Costly to use.
    public var isExpensive: Bool
    /// Why it is costly; nil when it is not.
    public var expensiveReason: ExpensiveReason?
    /// Low-data mode.
    public var isConstrained: Bool
    /// Left out of the answer by configuration (container and bridge noise).
    public var ignored: Bool
    /// The neighbour entries of the gateways reachd watches on this interface (those of the
    /// default routes and lookups through it), by address; nil when there are none.
    public var gateways: [GatewayNeighbourDescription]?
    /// The NAT64 prefixes the interface's network announced (PREF64, else DNS64); nil when none.
    public var nat64Prefixes: [NAT64Prefix]?
    /// What the interface does for this host beyond its type (`InterfaceRoles`): `clat`
    /// for a CLAT's device that provides IPv4 over an IPv6 uplink; nil for none.
    public var role: InterfaceRole?
    /// The IPv4 probes' verdict, else NetworkManager's (`connectivityCause` networkManager).
    public var ipv4Connectivity: Connectivity
    /// The IPv6 probes' verdict, else NetworkManager's.
    public var ipv6Connectivity: Connectivity
    /// When a probe round last finished, in seconds since the epoch.
    public var lastChecked: Int?
    /// The interface's captive portal, when one is known.
    public var captivePortal: CaptivePortal?
    /// What decided the interface's connectivity other than its probes, when something did.
    public var connectivityCause: ConnectivityCause?
    /// Since when `connectivityCause` holds, in seconds since the epoch.
    public var connectivityCauseSince: Int?
    /// How many destinations (IPv4 /24s, IPv6 /64s) a `dataStall` cause rests on.
    public var connectivityCauseDestinations: Int?
    /// What its TCP traffic says of its link: the class and the estimates behind it; nil
    /// when the reads saw nothing to estimate from.
    public var quality: LinkQualityEstimate?

    /// Creates an interface description.
    package init(index: Int, name: String, type: InterfaceType, kind: String?, operState: String, up: Bool, carrier: Bool, addresses: [Address], isExpensive: Bool, isConstrained: Bool, ignored: Bool,
                connectivity: InterfaceConnectivity = InterfaceConnectivity(), expensiveReason: ExpensiveReason? = nil) {
        self.index = index
        self.name = name
        self.type = type
        self.kind = kind
        self.operState = operState
        self.up = up
        self.carrier = carrier
        self.addresses = addresses
        self.isExpensive = isExpensive
        self.expensiveReason = expensiveReason
        self.isConstrained = isConstrained
        self.ignored = ignored
        // Without a verdict of reachd's probes, NetworkManager's per family (cause networkManager).
        let verdicts = connectivity.cause == .networkManager ? connectivity.networkManager.map { ($0.ipv4, $0.ipv6) } : nil
        self.ipv4Connectivity = verdicts?.0 ?? connectivity.ipv4
        self.ipv6Connectivity = verdicts?.1 ?? connectivity.ipv6
        self.lastChecked = connectivity.lastChecked
        self.captivePortal = connectivity.captivePortal
        self.connectivityCause = connectivity.cause
        self.connectivityCauseSince = connectivity.causeSince
        self.connectivityCauseDestinations = connectivity.causeDestinations
        self.quality = connectivity.linkQuality
    }
}
