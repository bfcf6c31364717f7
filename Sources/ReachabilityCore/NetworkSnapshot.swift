/// What the kernel told reachd about the network, reduced to what the answer needs.
///
/// The snapshot holds links, their addresses and the *default* routes of every table;
/// never the rest of the routing table (docs/DESIGN.md rule 1). The system-wide answer per
/// family comes from a FIB lookup (`lookups`), which the kernel answers with its own
/// policy routing, so the snapshot never re-implements route selection.
package struct NetworkSnapshot: Sendable, Hashable {
    /// Known links by interface index.
    package var links: [Int32: Link]
    /// Every address of every known link.
    package var addresses: [InterfaceAddress]
    /// Routes with a zero-length destination, from every table and of every type.
    package var defaultRoutes: [DefaultRoute]
    /// The kernel's FIB answer per family for a well-known internet destination.
    package var lookups: [AddressFamily: RouteLookup]
    /// Whether a DNS server is configured.
    package var hasNameserver: Bool
    /// The kernel's FIB answer for each monitored target address, looked up with the
    /// uid of the client that asked (taken with the snapshot, so they always agree).
    package var targets: [TargetKey: RouteLookup] = [:]
    /// For a monitored unscoped IPv4 target while some link carries a NAT64 prefix: the
    /// lookup of its synthesized address (`NAT64Lookup.choose`), taken with `targets`.
    package var nat64Targets: [TargetKey: NAT64Lookup] = [:]
    /// Captive-portal API URIs the networks announced, by interface index (RFC 8910: RA
    /// option 37); an interface whose network said "no portal" has no entry.
    package var announcedCaptivePortals: [Int32: String] = [:]
    /// The NAT64 prefixes each interface carries (`NAT64PrefixStore.prefixes(on:)`: RA
    /// PREF64, else DNS64), by interface index; an interface without any has no entry.
    package var nat64Prefixes: [Int32: [NAT64Prefix]] = [:]
    /// Families whose default routes are still being read at start (a dump of a million
    /// routes takes longer than the first answer may): for these, `defaultRoutes` holds
    /// only the route each lookup matched. `PathDerivation.familiesAwaitingRoutes` says
    /// whether an answer may be given before the rest are known.
    package var pendingRouteFamilies: Set<AddressFamily> = []
    /// The neighbour entries of the gateways `GatewayNeighbours.watched` names, by
    /// interface and address; a gateway without an entry has none in the kernel.
    package var gatewayNeighbours: [GatewayKey: GatewayNeighbour] = [:]

    /// Creates a snapshot.
    package init(
        links: [Int32: Link] = [:],
        addresses: [InterfaceAddress] = [],
        defaultRoutes: [DefaultRoute] = [],
        lookups: [AddressFamily: RouteLookup] = [:],
        hasNameserver: Bool = false
    ) {
        self.links = links
        self.addresses = addresses
        self.defaultRoutes = defaultRoutes
        self.lookups = lookups
        self.hasNameserver = hasNameserver
    }

    /// The addresses of one link.
    package func addresses(of interfaceIndex: Int32) -> [InterfaceAddress] {
        addresses.filter { $0.interfaceIndex == interfaceIndex }
    }
}

/// Interface flags as the kernel reports them (`IFF_*` from `<linux/if.h>`; the raw
/// values are the kernel's, so the monitor can pass them through unchanged).
package struct LinkFlags: OptionSet, Sendable, Hashable {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// IFF_UP: administratively up.
    package static let up = LinkFlags(rawValue: 0x1)
    /// IFF_LOOPBACK.
    package static let loopback = LinkFlags(rawValue: 0x8)
    /// IFF_POINTOPOINT: a point-to-point link (ppp, some tunnels).
    package static let pointToPoint = LinkFlags(rawValue: 0x10)
    /// IFF_RUNNING: operationally up (RFC 2863 up or unknown).
    package static let running = LinkFlags(rawValue: 0x40)
    /// IFF_NOARP.
    package static let noARP = LinkFlags(rawValue: 0x80)
    /// IFF_LOWER_UP: the driver signals carrier.
    package static let lowerUp = LinkFlags(rawValue: 0x10000)
    /// IFF_DORMANT: the driver signals the link waits for an external event (802.1X).
    package static let dormant = LinkFlags(rawValue: 0x20000)
}

/// RFC 2863 operational state (`IF_OPER_*`), as `ip link` prints it.
package enum OperationalState: String, Sendable, Hashable, Codable, CaseIterable {
    case unknown = "UNKNOWN"
    case notPresent = "NOTPRESENT"
    case down = "DOWN"
    case lowerLayerDown = "LOWERLAYERDOWN"
    case testing = "TESTING"
    case dormant = "DORMANT"
    case up = "UP"

    /// Maps the kernel's `IF_OPER_*` number; anything unknown reads as `.unknown`.
    package init(kernelValue: UInt8) {
        switch kernelValue {
        case 1: self = .notPresent
        case 2: self = .down
        case 3: self = .lowerLayerDown
        case 4: self = .testing
        case 5: self = .dormant
        case 6: self = .up
        default: self = .unknown
        }
    }
}

/// Facts about a device that netlink does not carry and sysfs does.
package struct DeviceFacts: Sendable, Hashable {
    /// `/sys/class/net/IF/wireless` or `/sys/class/net/IF/phy80211` exists.
    package var isWireless: Bool
    /// `DEVTYPE=` from `/sys/class/net/IF/uevent` (`wlan`, `wwan`, `bridge`, …).
    package var deviceType: String?
    /// Name of the bound driver (`/sys/class/net/IF/device/driver` link target).
    package var driver: String?
    /// The USB device's vendor ID (`idVendor` of the USB device the interface belongs to);
    /// nil when it is not a USB device.
    package var usbVendor: UInt16?

    /// Creates device facts.
    package init(isWireless: Bool = false, deviceType: String? = nil, driver: String? = nil, usbVendor: UInt16? = nil) {
        self.isWireless = isWireless
        self.deviceType = deviceType
        self.driver = driver
        self.usbVendor = usbVendor
    }
}

/// One network interface as the kernel describes it.
package struct Link: Sendable, Hashable {
    /// Kernel interface index.
    package var index: Int32
    /// Interface name (changes on rename; the index does not).
    package var name: String
    /// `IFF_*` flags.
    package var flags: LinkFlags
    /// RFC 2863 operational state.
    package var operState: OperationalState
    /// `IFLA_CARRIER`.
    package var carrier: Bool
    /// `ARPHRD_*` hardware type (1 ethernet, 772 loopback, 65534 none, 519 rawip, 512 ppp …).
    package var hardwareType: UInt16
    /// `IFLA_INFO_KIND` (veth, bridge, tun, wireguard …), nil for plain hardware.
    package var kind: String?
    /// Facts read from sysfs when the link appeared.
    package var device: DeviceFacts
    /// The bridge or bond this link is a port of (`IFLA_MASTER`), nil for none.
    package var masterIndex: Int32?
    /// The device this one is stacked on in the same namespace: `IFLA_LINK` (macvlan, vlan,
    /// ip tunnels) or a vxlan's `dev`; nil when there is none or it lives in another namespace.
    package var lowerIndex: Int32?

    /// Creates a link.
    package init(
        index: Int32, name: String, flags: LinkFlags, operState: OperationalState,
        carrier: Bool, hardwareType: UInt16 = ARPHardwareType.ether, kind: String? = nil,
        device: DeviceFacts = DeviceFacts(), masterIndex: Int32? = nil, lowerIndex: Int32? = nil
    ) {
        self.index = index
        self.name = name
        self.flags = flags
        self.operState = operState
        self.carrier = carrier
        self.hardwareType = hardwareType
        self.kind = kind
        self.device = device
        self.masterIndex = masterIndex
        self.lowerIndex = lowerIndex
    }

    /// Administratively up (`IFF_UP`).
    package var isUp: Bool { flags.contains(.up) }
}

/// The `ARPHRD_*` values reachd interprets.
package enum ARPHardwareType {
    /// ARPHRD_ETHER.
    package static let ether: UInt16 = 1
    /// ARPHRD_PPP.
    package static let ppp: UInt16 = 512
    /// ARPHRD_RAWIP: raw IP, used by WWAN modems (qmi_wwan, mhi_net, rmnet).
    package static let rawIP: UInt16 = 519
    /// ARPHRD_LOOPBACK.
    package static let loopback: UInt16 = 772
    /// ARPHRD_NONE: tun, wireguard.
    package static let none: UInt16 = 65534
}

/// Address scope (`RT_SCOPE_*`).
public enum AddressScope: String, Sendable, Hashable, Codable {
    /// Valid everywhere (`RT_SCOPE_UNIVERSE`).
    case global
    /// Valid within the site (`RT_SCOPE_SITE`, IPv6 site-local; deprecated).
    case site
    /// Valid on the link only (`RT_SCOPE_LINK`: 169.254/16, fe80::/10).
    case link
    /// Valid on this host only (`RT_SCOPE_HOST`: loopback).
    case host
    /// Any other scope (`RT_SCOPE_NOWHERE`, or a number without a name).
    case nowhere

    /// Maps the kernel's scope number.
    package init(kernelValue: UInt8) {
        switch kernelValue {
        case 0: self = .global
        case 200: self = .site
        case 253: self = .link
        case 254: self = .host
        default: self = .nowhere
        }
    }
}

/// Address flags (`IFA_F_*` from `<linux/if_addr.h>`).
package struct AddressFlags: OptionSet, Sendable, Hashable {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// IFA_F_DADFAILED: duplicate address detection failed; the address is never used.
    package static let dadFailed = AddressFlags(rawValue: 0x08)
    /// IFA_F_DEPRECATED: preferred lifetime over; still usable for existing flows.
    package static let deprecated = AddressFlags(rawValue: 0x20)
    /// IFA_F_TENTATIVE: DAD still running; not usable yet.
    package static let tentative = AddressFlags(rawValue: 0x40)
    /// IFA_F_PERMANENT: configured statically.
    package static let permanent = AddressFlags(rawValue: 0x80)
    /// IFA_F_OPTIMISTIC: optimistic DAD, usable while DAD runs.
    package static let optimistic = AddressFlags(rawValue: 0x04)
}

/// An address assigned to a link.
package struct InterfaceAddress: Sendable, Hashable {
    /// The link it belongs to.
    package var interfaceIndex: Int32
    /// The local address.
    package var address: IPAddress
    /// Prefix length of the subnet.
    package var prefixLength: UInt8
    /// Kernel scope.
    package var scope: AddressScope
    /// `IFA_F_*` flags.
    package var flags: AddressFlags

    /// Creates an address record.
    package init(interfaceIndex: Int32, address: IPAddress, prefixLength: UInt8, scope: AddressScope = .global, flags: AddressFlags = []) {
        self.interfaceIndex = interfaceIndex
        self.address = address
        self.prefixLength = prefixLength
        self.scope = scope
        self.flags = flags
    }

    /// The family of the address.
    package var family: AddressFamily { address.family }

    /// Usable as a source towards the internet: global or site scope, not link-local by
    /// value (169.254/16 and fe80::/10 count as local whatever scope they were given),
    /// not still tentative (DAD running) and not DAD-failed.
    package var isUsableForInternet: Bool {
        guard scope == .global || scope == .site else { return false }
        guard !address.isLinkLocal, !address.isLoopback else { return false }
        if flags.contains(.dadFailed) { return false }
        if flags.contains(.tentative) && !flags.contains(.optimistic) { return false }
        return true
    }
}

/// Route type (`RTN_*`).
package enum RouteType: String, Sendable, Hashable, Codable {
    case unicast, local, broadcast, anycast, multicast, blackhole, unreachable, prohibit, `throw`, nat, other

    /// Maps the kernel's route type number.
    package init(kernelValue: UInt8) {
        switch kernelValue {
        case 1: self = .unicast
        case 2: self = .local
        case 3: self = .broadcast
        case 4: self = .anycast
        case 5: self = .multicast
        case 6: self = .blackhole
        case 7: self = .unreachable
        case 8: self = .prohibit
        case 9: self = .throw
        case 10: self = .nat
        default: self = .other
        }
    }
}

/// One next hop of a route.
package struct NextHop: Sendable, Hashable {
    /// Output interface index (0 when the route has none, e.g. blackhole).
    package var interfaceIndex: Int32
    /// Gateway, nil for on-link routes.
    package var gateway: IPAddress?
    /// `RTNH_F_LINKDOWN`: the kernel still has the route but the link lost carrier.
    package var isLinkDown: Bool

    /// Creates a next hop.
    package init(interfaceIndex: Int32, gateway: IPAddress? = nil, isLinkDown: Bool = false) {
        self.interfaceIndex = interfaceIndex
        self.gateway = gateway
        self.isLinkDown = isLinkDown
    }
}

/// A route with a zero-length destination (`default`), from any table.
package struct DefaultRoute: Sendable, Hashable {
    /// IPv4 or IPv6.
    package var family: AddressFamily
    /// Routing table id (254 main, 255 local, …).
    package var table: UInt32
    /// Route type; blackhole / unreachable / prohibit defaults are tracked too.
    package var type: RouteType
    /// Metric (`RTA_PRIORITY`); lower is preferred.
    package var metric: UInt32
    /// One or more next hops (more than one for a multipath default).
    package var nextHops: [NextHop]

    /// Creates a default route.
    package init(family: AddressFamily, table: UInt32 = 254, type: RouteType = .unicast, metric: UInt32 = 0, nextHops: [NextHop] = []) {
        self.family = family
        self.table = table
        self.type = type
        self.metric = metric
        self.nextHops = nextHops
    }
}

/// The kernel's answer to "how would a packet to the probe destination leave?"
/// (RTM_GETROUTE, what `ip route get` prints). No packet is sent.
package enum RouteLookup: Sendable, Hashable {
    /// The FIB selected a route.
    case route(RouteLookupResult)
    /// The FIB refused; the reason says why.
    case failure(RouteLookupFailure)
}

/// A successful FIB lookup.
package struct RouteLookupResult: Sendable, Hashable {
    /// Route type of the match (`unicast`, or `local` for an address of this host).
    package var type: RouteType
    /// Output interface index.
    package var outputInterface: Int32
    /// Gateway, nil when the destination is on-link.
    package var gateway: IPAddress?
    /// Preferred source address the kernel would use.
    package var preferredSource: IPAddress?
    /// `RTNH_F_LINKDOWN` on the chosen next hop.
    package var isLinkDown: Bool
    /// Table the matching route lives in, when the kernel reports it.
    package var table: UInt32?

    /// Creates a lookup result.
    package init(type: RouteType = .unicast, outputInterface: Int32, gateway: IPAddress? = nil, preferredSource: IPAddress? = nil, isLinkDown: Bool = false, table: UInt32? = nil) {
        self.type = type
        self.outputInterface = outputInterface
        self.gateway = gateway
        self.preferredSource = preferredSource
        self.isLinkDown = isLinkDown
        self.table = table
    }
}

/// Why a FIB lookup found no usable route. The netlink layer maps the kernel's answer
/// (an errno, or an old kernel's reject route) to these; no errno number reaches this module.
package enum RouteLookupFailure: Sendable, Hashable {
    /// No route matches (ENETUNREACH).
    case noRoute
    /// An `unreachable` route matches (EHOSTUNREACH).
    case unreachableRoute
    /// A `blackhole` route matches (EINVAL).
    case blackholeRoute
    /// A `prohibit` route matches (EACCES / EPERM).
    case prohibitedRoute
    /// The lookup itself failed (a socket error, an unexpected answer); the text says why.
    case lookupFailed(String)
}
