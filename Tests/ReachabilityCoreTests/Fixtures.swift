import ReachabilityCore
import XCTest

// Builders for snapshots, so each derivation case reads like `ip link` / `ip addr` /
// `ip route` output rather than a wall of initialisers.

/// Parses an address literal; a typo in a test fails loudly instead of crashing.
func ip(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> IPAddress {
    guard let address = IPAddress(text) else {
        XCTFail("bad address literal in test: \(text)", file: file, line: line)
        return .v4(0, 0, 0, 0)
    }
    return address
}

/// Device facts shorthand for the interface types `InterfaceClassifier` tells apart.
enum Device {
    case nic
    case wireless
    case devtype(String)
    case driver(String)
    case usb(String, vendor: UInt16)

    var facts: DeviceFacts {
        switch self {
        case .nic: return DeviceFacts()
        case .wireless: return DeviceFacts(isWireless: true)
        case let .devtype(type): return DeviceFacts(deviceType: type)
        case let .driver(driver): return DeviceFacts(driver: driver)
        case let .usb(driver, vendor): return DeviceFacts(driver: driver, usbVendor: vendor)
        }
    }
}

/// A link with flags consistent with its state: `up` sets IFF_UP, carrier sets
/// IFF_LOWER_UP, operstate UP/UNKNOWN sets IFF_RUNNING.
func link(
    _ index: Int32, _ name: String, up: Bool = true, carrier: Bool = true, oper: OperationalState = .up,
    hw: UInt16 = ARPHardwareType.ether, kind: String? = nil, device: Device = .nic,
    extraFlags: LinkFlags = []
) -> Link {
    var flags = extraFlags
    if up { flags.insert(.up) }
    if up && carrier { flags.insert(.lowerUp) }
    if up && (oper == .up || oper == .unknown) { flags.insert(.running) }
    if oper == .dormant { flags.insert(.dormant) }
    return Link(index: index, name: name, flags: flags, operState: up ? oper : .down,
                carrier: carrier, hardwareType: hw, kind: kind, device: device.facts)
}

// The usual cast of interfaces.
let lo = link(1, "lo", oper: .unknown, hw: ARPHardwareType.loopback, extraFlags: .loopback)
let eth0 = link(2, "eth0")
let wlan0 = link(3, "wlan0", device: .wireless)
let wwan0 = link(4, "wwan0", oper: .unknown, hw: ARPHardwareType.rawIP, device: .devtype("wwan"), extraFlags: [.pointToPoint, .noARP])
let tun0 = link(5, "tun0", oper: .unknown, hw: ARPHardwareType.none, kind: "tun", extraFlags: [.pointToPoint, .noARP])
let ppp0 = link(6, "ppp0", oper: .unknown, hw: ARPHardwareType.ppp, extraFlags: [.pointToPoint, .noARP])
let docker0 = link(7, "docker0", kind: "bridge")
let eth1 = link(8, "eth1")

/// An address on a link; scope defaults to what the kernel gives that address.
func addr(_ index: Int32, _ text: String, _ prefix: UInt8? = nil, scope: AddressScope? = nil, flags: AddressFlags = []) -> InterfaceAddress {
    let address = ip(text)
    let defaultScope: AddressScope = address.isLoopback ? .host : (address.isLinkLocal ? .link : .global)
    let defaultPrefix: UInt8 = address.family == .ipv4 ? 24 : 64
    return InterfaceAddress(interfaceIndex: index, address: address, prefixLength: prefix ?? defaultPrefix,
                            scope: scope ?? defaultScope, flags: flags)
}

/// The loopback addresses every host has.
let loAddresses = [addr(1, "127.0.0.1", 8), addr(1, "::1", 128)]

/// A tracked default route with one next hop (`via` nil: on-link).
func defaultRoute(
    _ family: AddressFamily, dev index: Int32, via gateway: String? = nil, metric: UInt32 = 0,
    type: RouteType = .unicast, linkdown: Bool = false, table: UInt32 = 254
) -> DefaultRoute {
    DefaultRoute(family: family, table: table, type: type, metric: metric,
                 nextHops: [NextHop(interfaceIndex: index, gateway: gateway.map { ip($0) }, isLinkDown: linkdown)])
}

/// The FIB answer "leaves by `dev`" (what `ip route get` prints).
func routeVia(
    _ index: Int32, gateway: String? = nil, source: String? = nil, type: RouteType = .unicast, linkdown: Bool = false,
    table: UInt32? = nil
) -> RouteLookup {
    .route(RouteLookupResult(type: type, outputInterface: index, gateway: gateway.map { ip($0) },
                             preferredSource: source.map { ip($0) }, isLinkDown: linkdown, table: table))
}

/// The FIB refused.
func lookupFailure(_ failure: RouteLookupFailure) -> RouteLookup { .failure(failure) }

/// A snapshot from lists; links are keyed by their index.
func snapshot(
    links: [Link], addresses: [InterfaceAddress] = [], defaults: [DefaultRoute] = [],
    v4: RouteLookup? = nil, v6: RouteLookup? = nil, nameserver: Bool = false
) -> NetworkSnapshot {
    var lookups: [AddressFamily: RouteLookup] = [:]
    lookups[.ipv4] = v4
    lookups[.ipv6] = v6
    return NetworkSnapshot(
        links: Dictionary(uniqueKeysWithValues: links.map { ($0.index, $0) }),
        addresses: addresses, defaultRoutes: defaults, lookups: lookups, hasNameserver: nameserver
    )
}
