// Over 500 lines because it is one table of cases, each a snapshot and the answer it must
// give, read top to bottom and run by one loop at the end.

import ReachabilityCore
import XCTest

/// The derivation, case by case: the edge cases peers get wrong and PathDerivation's header
/// comment (checks 1–5) turned into snapshots with the answer each must give.
final class PathDerivationTests: XCTestCase {
    /// One field of the answer a case pins down (status and reason are always checked).
    enum Check {
        case reachability(ReachabilityStatus)
        case flags(ReachabilityFlags)
        case primary(String?)
        case primaryType(InterfaceType?)
        case available([String])
        case gateways([String])
        case ipv4(Bool)
        case ipv6(Bool)
        case dns(Bool)
        case expensive(Bool)
        case constrained(Bool)
        case connectivity(Connectivity)
        case captivePortal(CaptivePortal?)
    }

    struct Case {
        var name: String
        var snapshot: NetworkSnapshot
        var policy = InterfacePolicy()
        var filter = PathFilter.none
        var connectivity: ConnectivityTable = [:]
        var status: PathStatus
        var reason: UnsatisfiedReason?
        var checks: [Check] = []
    }

    // Addresses of the usual cast (see Fixtures.swift).
    static let eth0v4 = addr(2, "10.0.0.2")
    static let eth0v6 = addr(2, "2001:db8:1::2")
    static let eth0ll = addr(2, "fe80::2")
    static let wlan0v4 = addr(3, "192.168.1.10")
    static let wlan0v6 = addr(3, "2001:db8:2::10")
    static let wwan0v4 = addr(4, "100.64.0.2", 30)
    static let tun0v4 = addr(5, "10.8.0.2")
    static let ppp0v4 = addr(6, "100.100.0.1", 32)
    static let docker0v4 = addr(7, "172.17.0.1", 16)
    static let eth1v4 = addr(8, "10.0.1.2")

    static let eth0Default = defaultRoute(.ipv4, dev: 2, via: "10.0.0.1", metric: 100)
    static let wlan0Default = defaultRoute(.ipv4, dev: 3, via: "192.168.1.1", metric: 600)
    static let wwan0Default = defaultRoute(.ipv4, dev: 4, metric: 700)
    static let noRoute = lookupFailure(.noRoute)

    /// Wired eth0 with an IPv4 default via 10.0.0.1; the base most cases vary.
    static func wired(
        _ eth: Link = eth0, addresses: [InterfaceAddress] = [eth0v4], lookup: RouteLookup = routeVia(2, gateway: "10.0.0.1"),
        v6: RouteLookup = noRoute, nameserver: Bool = false
    ) -> NetworkSnapshot {
        snapshot(links: [lo, eth], addresses: loAddresses + addresses, defaults: [eth0Default],
                 v4: lookup, v6: v6, nameserver: nameserver)
    }

    // MARK: - No interface, no route

    static let emptyAndNoRoute: [Case] = [
        Case(name: "empty snapshot", snapshot: NetworkSnapshot(), status: .unsatisfied, reason: .noInterface,
             checks: [.reachability(.notReachable), .flags([]), .primary(nil), .primaryType(nil), .available([]),
                      .gateways([]), .ipv4(false), .ipv6(false), .dns(false), .connectivity(.none)]),
        Case(name: "only lo", snapshot: snapshot(links: [lo], addresses: loAddresses, v4: noRoute, v6: noRoute),
             status: .unsatisfied, reason: .noInterface,
             checks: [.available([]), .primary(nil), .connectivity(.none)]),
        Case(name: "only lo, even when the lookup names it",
             snapshot: snapshot(links: [lo], addresses: loAddresses, v4: routeVia(1, type: .local)),
             status: .unsatisfied, reason: .noInterface, checks: [.flags([]), .primary(nil)]),
        Case(name: "eth0 up with an address, no route",
             snapshot: snapshot(links: [lo, eth0], addresses: loAddresses + [eth0v4], v4: noRoute, v6: noRoute),
             status: .unsatisfied, reason: .noRoute,
             checks: [.reachability(.notReachable), .flags([]), .primary(nil), .available(["eth0"]), .gateways([]),
                      .ipv4(false), .ipv6(false), .connectivity(.local)]),
        Case(name: "no lookup answered yet reads as no route",
             snapshot: snapshot(links: [lo, eth0], addresses: [eth0v4], defaults: [eth0Default]),
             status: .unsatisfied, reason: .noRoute),
        Case(name: "lookup names an interface the snapshot does not know",
             snapshot: snapshot(links: [lo, eth0], addresses: [eth0v4], v4: routeVia(42, gateway: "10.0.0.1"), v6: noRoute),
             status: .unsatisfied, reason: .noRoute),
        Case(name: "the lookup itself failed",
             snapshot: snapshot(links: [lo, eth0], addresses: [eth0v4], v4: lookupFailure(.lookupFailed("No buffer space available")), v6: noRoute),
             status: .unsatisfied, reason: .noRoute),
    ]

    // MARK: - Satisfied over each interface type

    static let satisfiedByType: [Case] = [
        Case(name: "IPv4 default via gateway on wired eth0", snapshot: wired(), status: .satisfied, reason: nil,
             checks: [.reachability(.reachableViaWired), .flags([.reachable]), .primary("eth0"), .primaryType(.wiredEthernet),
                      .available(["eth0"]), .gateways(["10.0.0.1"]), .ipv4(true), .ipv6(false), .dns(false),
                      .expensive(false), .constrained(false), .connectivity(.unknown)]),
        Case(name: "on-link default (no gateway) is direct",
             snapshot: snapshot(links: [lo, eth0], addresses: [eth0v4], defaults: [defaultRoute(.ipv4, dev: 2)],
                                v4: routeVia(2), v6: noRoute),
             status: .satisfied, reason: nil,
             checks: [.flags([.reachable, .isDirect]), .gateways([]), .reachability(.reachableViaWired)]),
        Case(name: "wifi primary (sysfs wireless)",
             snapshot: snapshot(links: [lo, wlan0], addresses: [wlan0v4], defaults: [wlan0Default],
                                v4: routeVia(3, gateway: "192.168.1.1"), v6: noRoute),
             status: .satisfied, reason: nil,
             checks: [.reachability(.reachableViaWiFi), .flags([.reachable]), .primary("wlan0"), .primaryType(.wifi),
                      .gateways(["192.168.1.1"]), .expensive(false)]),
        Case(name: "wifi primary (DEVTYPE=wlan)",
             snapshot: snapshot(links: [lo, link(3, "wlp0", device: .devtype("wlan"))], addresses: [wlan0v4],
                                defaults: [wlan0Default], v4: routeVia(3, gateway: "192.168.1.1"), v6: noRoute),
             status: .satisfied, reason: nil, checks: [.reachability(.reachableViaWiFi), .primaryType(.wifi)]),
        Case(name: "cellular primary is WWAN and expensive",
             snapshot: snapshot(links: [lo, wwan0], addresses: [wwan0v4],
                                defaults: [defaultRoute(.ipv4, dev: 4, via: "100.64.0.1")],
                                v4: routeVia(4, gateway: "100.64.0.1"), v6: noRoute),
             status: .satisfied, reason: nil,
             checks: [.reachability(.reachableViaWWAN), .flags([.reachable, .isWWAN]), .primaryType(.cellular),
                      .expensive(true), .constrained(false)]),
        Case(name: "tun primary is other",
             snapshot: snapshot(links: [lo, eth0, tun0], addresses: [eth0v4, tun0v4],
                                defaults: [eth0Default, defaultRoute(.ipv4, dev: 5, table: 51820)],
                                v4: routeVia(5), v6: noRoute),
             status: .satisfied, reason: nil,
             checks: [.reachability(.reachableViaOther), .flags([.reachable]), .primary("tun0"),
                      .primaryType(.other), .available(["tun0", "eth0"])]),
        Case(name: "ppp primary is a transient connection",
             snapshot: snapshot(links: [lo, ppp0], addresses: [ppp0v4], defaults: [defaultRoute(.ipv4, dev: 6)],
                                v4: routeVia(6), v6: noRoute),
             status: .satisfied, reason: nil,
             checks: [.reachability(.reachableViaOther), .flags([.transientConnection, .reachable]),
                      .primaryType(.other)]),
        Case(name: "pppoe-style link of kind ppp is transient too",
             snapshot: snapshot(links: [lo, link(6, "ppp1", hw: ARPHardwareType.none, kind: "ppp")], addresses: [addr(6, "100.100.0.1", 32)],
                                v4: routeVia(6), v6: noRoute),
             status: .satisfied, reason: nil, checks: [.flags([.transientConnection, .reachable])]),
        Case(name: "IPv6-only host with a link-local gateway",
             snapshot: snapshot(links: [lo, eth0], addresses: [eth0v6, eth0ll],
                                defaults: [defaultRoute(.ipv6, dev: 2, via: "fe80::1", metric: 1024)],
                                v4: noRoute, v6: routeVia(2, gateway: "fe80::1")),
             status: .satisfied, reason: nil,
             checks: [.ipv4(false), .ipv6(true), .gateways(["fe80::1"]), .primary("eth0"), .flags([.reachable])]),
        Case(name: "dual stack: both families, gateways IPv4 first",
             snapshot: snapshot(links: [lo, eth0], addresses: [eth0v4, eth0v6, eth0ll],
                                defaults: [defaultRoute(.ipv6, dev: 2, via: "fe80::1", metric: 1024), eth0Default],
                                v4: routeVia(2, gateway: "10.0.0.1"), v6: routeVia(2, gateway: "fe80::1")),
             status: .satisfied, reason: nil,
             checks: [.ipv4(true), .ipv6(true), .gateways(["10.0.0.1", "fe80::1"]), .available(["eth0"])]),
        Case(name: "an unknown operstate (tun, many drivers) counts as carrying",
             snapshot: wired(link(2, "eth0", oper: .unknown)), status: .satisfied, reason: nil),
    ]

    // MARK: - Checks 2 and 3: admin state and carrier

    static let linkState: [Case] = [
        Case(name: "lookup via interface with carrier false",
             snapshot: wired(link(2, "eth0", carrier: false, oper: .down)), status: .unsatisfied, reason: .noCarrier,
             checks: [.flags([]), .primary(nil), .available([]), .connectivity(.none)]),
        Case(name: "carrier false while operstate still says up",
             snapshot: wired(link(2, "eth0", carrier: false, oper: .up)), status: .unsatisfied, reason: .noCarrier),
        Case(name: "operstate lowerlayerdown (a bond or vlan whose lower link is down)",
             snapshot: wired(link(2, "eth0", carrier: true, oper: .lowerLayerDown)), status: .unsatisfied, reason: .noCarrier),
        Case(name: "route linkdown flag",
             snapshot: wired(lookup: routeVia(2, gateway: "10.0.0.1", linkdown: true)), status: .unsatisfied, reason: .noCarrier),
        Case(name: "interface admin-down",
             snapshot: wired(link(2, "eth0", up: false, carrier: false)), status: .unsatisfied, reason: .interfaceDown,
             checks: [.flags([]), .primary(nil), .available([])]),
        Case(name: "admin-down wins over no carrier (checked first)",
             snapshot: wired(link(2, "eth0", up: false, carrier: false), lookup: routeVia(2, gateway: "10.0.0.1", linkdown: true)),
             status: .unsatisfied, reason: .interfaceDown),
        Case(name: "lookup noRoute but tracked linkdown default route",
             snapshot: snapshot(links: [lo, link(2, "eth0", carrier: false, oper: .down)], addresses: [eth0v4],
                                defaults: [defaultRoute(.ipv4, dev: 2, via: "10.0.0.1", linkdown: true)], v4: noRoute, v6: noRoute),
             status: .unsatisfied, reason: .noCarrier),
        Case(name: "lookup noRoute but tracked default via an admin-down interface",
             snapshot: snapshot(links: [lo, link(2, "eth0", up: false)], addresses: [eth0v4], defaults: [eth0Default],
                                v4: noRoute, v6: noRoute),
             status: .unsatisfied, reason: .interfaceDown),
        Case(name: "lookup noRoute wins over a tracked default that looks fine (the kernel decides)",
             snapshot: snapshot(links: [lo, eth0], addresses: [eth0v4], defaults: [eth0Default], v4: noRoute, v6: noRoute),
             status: .unsatisfied, reason: .noRoute),
        Case(name: "lookup noRoute: tracked defaults through ignored interfaces explain nothing",
             snapshot: snapshot(links: [lo, eth0, link(7, "docker0", carrier: false, oper: .down)], addresses: [eth0v4],
                                defaults: [defaultRoute(.ipv4, dev: 7, linkdown: true)], v4: noRoute, v6: noRoute),
             status: .unsatisfied, reason: .noRoute),
    ]

    // MARK: - Check 4: a usable source address

    static let addressCases: [Case] = [
        Case(name: "only a link-local 169.254 address",
             snapshot: wired(addresses: [addr(2, "169.254.10.20", 16)], lookup: routeVia(2)),
             status: .unsatisfied, reason: .noAddress, checks: [.connectivity(.local), .available([])]),
        Case(name: "169.254 address the kernel reports with global scope is still link-local",
             snapshot: wired(addresses: [addr(2, "169.254.10.20", 16, scope: .global)], lookup: routeVia(2)),
             status: .unsatisfied, reason: .noAddress),
        Case(name: "no address at all",
             snapshot: wired(addresses: []), status: .unsatisfied, reason: .noAddress, checks: [.connectivity(.none)]),
        Case(name: "only an IPv4 address with host scope",
             snapshot: wired(addresses: [addr(2, "10.0.0.2", scope: .host)]), status: .unsatisfied, reason: .noAddress),
        Case(name: "an IPv6 address does not serve the IPv4 route",
             snapshot: wired(addresses: [eth0v6]), status: .unsatisfied, reason: .noAddress),
        Case(name: "only fe80:: on IPv6",
             snapshot: wired(addresses: [eth0ll], lookup: noRoute, v6: routeVia(2, gateway: "fe80::1")),
             status: .unsatisfied, reason: .noAddress, checks: [.connectivity(.local)]),
        Case(name: "tentative IPv6 address (DAD running, not optimistic)",
             snapshot: wired(addresses: [eth0ll, addr(2, "2001:db8:1::2", flags: .tentative)], lookup: noRoute,
                             v6: routeVia(2, gateway: "fe80::1")),
             status: .unsatisfied, reason: .noAddress),
        Case(name: "optimistic tentative IPv6 address is usable",
             snapshot: wired(addresses: [eth0ll, addr(2, "2001:db8:1::2", flags: [.tentative, .optimistic])], lookup: noRoute,
                             v6: routeVia(2, gateway: "fe80::1")),
             status: .satisfied, reason: nil, checks: [.ipv6(true), .ipv4(false)]),
        Case(name: "DAD-failed IPv6 address",
             snapshot: wired(addresses: [addr(2, "2001:db8:1::2", flags: [.dadFailed, .tentative])], lookup: noRoute,
                             v6: routeVia(2, gateway: "fe80::1")),
             status: .unsatisfied, reason: .noAddress, checks: [.connectivity(.none)]),
        Case(name: "deprecated IPv6 address is still usable",
             snapshot: wired(addresses: [eth0ll, addr(2, "2001:db8:1::2", flags: .deprecated)], lookup: noRoute,
                             v6: routeVia(2, gateway: "fe80::1")),
             status: .satisfied, reason: nil, checks: [.ipv6(true)]),
        Case(name: "preferred source on another interface (weak host)",
             snapshot: snapshot(links: [lo, eth0, link(9, "wg0", oper: .unknown, hw: ARPHardwareType.none, kind: "wireguard")],
                                addresses: [eth0v4], defaults: [eth0Default], v4: routeVia(9, source: "10.0.0.2"), v6: noRoute),
             status: .satisfied, reason: nil,
             checks: [.primary("wg0"), .primaryType(.other), .reachability(.reachableViaOther), .flags([.reachable])]),
        Case(name: "preferred source on another interface that is not usable",
             snapshot: snapshot(links: [lo, eth0, link(9, "wg0", oper: .unknown, hw: ARPHardwareType.none, kind: "wireguard")],
                                addresses: [addr(2, "169.254.0.5", 16)], v4: routeVia(9, source: "169.254.0.5"), v6: noRoute),
             status: .unsatisfied, reason: .noAddress),
    ]

    // MARK: - Route types the kernel refuses with

    static let refusedRoutes: [Case] = [
        Case(name: "blackhole default",
             snapshot: wired(lookup: lookupFailure(.blackholeRoute)), status: .unsatisfied, reason: .blackholeRoute,
             checks: [.flags([]), .primary(nil), .connectivity(.local)]),
        Case(name: "unreachable default", snapshot: wired(lookup: lookupFailure(.unreachableRoute)),
             status: .unsatisfied, reason: .unreachableRoute),
        Case(name: "prohibit default", snapshot: wired(lookup: lookupFailure(.prohibitedRoute)),
             status: .unsatisfied, reason: .prohibitedRoute),
        Case(name: "IPv6 lookup result of type unreachable",
             snapshot: wired(lookup: noRoute, v6: routeVia(1, type: .unreachable)), status: .unsatisfied, reason: .unreachableRoute),
        Case(name: "IPv4 lookup result of type blackhole",
             snapshot: wired(lookup: routeVia(0, type: .blackhole)), status: .unsatisfied, reason: .blackholeRoute),
        Case(name: "IPv4 lookup result of type prohibit",
             snapshot: wired(lookup: routeVia(0, type: .prohibit)), status: .unsatisfied, reason: .prohibitedRoute),
        Case(name: "blackhole on IPv4, IPv6 still works",
             snapshot: wired(addresses: [eth0v4, eth0v6], lookup: lookupFailure(.blackholeRoute), v6: routeVia(2, gateway: "fe80::1")),
             status: .satisfied, reason: nil, checks: [.ipv4(false), .ipv6(true)]),
    ]

    // MARK: - Two families

    static let families: [Case] = [
        Case(name: "v4 noRoute + v6 satisfied",
             snapshot: wired(addresses: [eth0v4, eth0v6, eth0ll], lookup: noRoute, v6: routeVia(2, gateway: "fe80::1")),
             status: .satisfied, reason: nil,
             checks: [.ipv4(false), .ipv6(true), .primary("eth0"), .gateways(["fe80::1"]), .reachability(.reachableViaWired)]),
        Case(name: "v4 noCarrier + v6 noRoute: the most specific reason wins",
             snapshot: wired(lookup: routeVia(2, gateway: "10.0.0.1", linkdown: true), v6: noRoute),
             status: .unsatisfied, reason: .noCarrier),
        Case(name: "v4 noRoute + v6 noCarrier: the most specific reason wins whatever the family",
             snapshot: wired(addresses: [eth0v4, eth0v6], lookup: noRoute, v6: routeVia(2, gateway: "fe80::1", linkdown: true)),
             status: .unsatisfied, reason: .noCarrier),
        Case(name: "v4 blackhole + v6 noAddress: noAddress got further",
             snapshot: wired(addresses: [eth0v4, eth0ll], lookup: lookupFailure(.blackholeRoute), v6: routeVia(2, gateway: "fe80::1")),
             status: .unsatisfied, reason: .noAddress),
        Case(name: "equally specific reasons: IPv4's wins",
             snapshot: wired(lookup: lookupFailure(.blackholeRoute), v6: lookupFailure(.unreachableRoute)),
             status: .unsatisfied, reason: .blackholeRoute),
        Case(name: "v4 on wifi, v6 on wired: IPv4 route is primary",
             snapshot: snapshot(links: [lo, eth0, wlan0], addresses: [eth0v6, wlan0v4], defaults: [wlan0Default],
                                v4: routeVia(3, gateway: "192.168.1.1"), v6: routeVia(2, gateway: "fe80::1")),
             status: .satisfied, reason: nil,
             checks: [.primary("wlan0"), .reachability(.reachableViaWiFi), .gateways(["192.168.1.1", "fe80::1"]),
                      .ipv4(true), .ipv6(true)]),
    ]

    // MARK: - Check 5: dormant interfaces

    static let dormantWlan = link(3, "wlan0", oper: .dormant, device: .wireless)

    static let dormant: [Case] = [
        Case(name: "dormant primary (802.1X not authorised yet)",
             snapshot: snapshot(links: [lo, dormantWlan], addresses: [wlan0v4], defaults: [wlan0Default],
                                v4: routeVia(3, gateway: "192.168.1.1"), v6: noRoute, nameserver: true),
             status: .requiresConnection, reason: .connectionRequired,
             checks: [.flags([.reachable, .connectionRequired]), .reachability(.notReachable), .primary("wlan0"),
                      .primaryType(.wifi), .ipv4(false), .ipv6(false), .dns(false), .gateways(["192.168.1.1"])]),
        Case(name: "dormant IPv4 route, ready IPv6 route elsewhere: satisfied over the ready one",
             snapshot: snapshot(links: [lo, eth0, dormantWlan], addresses: [eth0v6, wlan0v4], defaults: [wlan0Default],
                                v4: routeVia(3, gateway: "192.168.1.1"), v6: routeVia(2, gateway: "fe80::1")),
             status: .satisfied, reason: nil,
             checks: [.primary("eth0"), .flags([.reachable]), .ipv4(false), .ipv6(true), .reachability(.reachableViaWired),
                      .gateways(["fe80::1"])]),
        Case(name: "dormant interface without carrier has no carrier",
             snapshot: snapshot(links: [lo, link(3, "wlan0", carrier: false, oper: .dormant, device: .wireless)],
                                addresses: [wlan0v4], defaults: [wlan0Default], v4: routeVia(3, gateway: "192.168.1.1"), v6: noRoute),
             status: .unsatisfied, reason: .noCarrier),
        Case(name: "dormant interface whose route is flagged linkdown still requires a connection",
             snapshot: snapshot(links: [lo, dormantWlan], addresses: [wlan0v6], v4: noRoute,
                                v6: routeVia(3, gateway: "fe80::1", linkdown: true)),
             status: .requiresConnection, reason: .connectionRequired, checks: [.flags([.reachable, .connectionRequired])]),
        Case(name: "dormant interface without a usable address has no address",
             snapshot: snapshot(links: [lo, dormantWlan], addresses: [addr(3, "169.254.3.3", 16)], defaults: [wlan0Default],
                                v4: routeVia(3, gateway: "192.168.1.1"), v6: noRoute),
             status: .unsatisfied, reason: .noAddress),
    ]

    // MARK: - DNS

    static let dns: [Case] = [
        Case(name: "nameserver and satisfied", snapshot: wired(nameserver: true), status: .satisfied, reason: nil, checks: [.dns(true)]),
        Case(name: "satisfied without nameserver", snapshot: wired(nameserver: false), status: .satisfied, reason: nil, checks: [.dns(false)]),
        Case(name: "nameserver but unsatisfied", snapshot: wired(lookup: noRoute, nameserver: true),
             status: .unsatisfied, reason: .noRoute, checks: [.dns(false)]),
    ]

    // MARK: - Several interfaces: primary, availableInterfaces, gateways

    static let several: [Case] = [
        Case(name: "availableInterfaces: primary, then usable defaults by metric, then the rest by index",
             snapshot: snapshot(
                links: [lo, eth0, wwan0, link(9, "wlan0", device: .wireless), link(10, "usb1"), link(11, "eth2"),
                        link(12, "eth3", carrier: false, oper: .down), link(13, "eth4", up: false),
                        link(14, "docker0", kind: "bridge"), link(15, "eth5")],
                addresses: loAddresses + [eth0v4, wwan0v4, addr(9, "192.168.1.10"), addr(10, "192.168.100.2"),
                                          addr(11, "10.0.2.2"), addr(12, "10.0.3.2"), addr(13, "10.0.4.2"),
                                          addr(14, "172.17.0.1", 16), addr(15, "fe80::5")],
                defaults: [defaultRoute(.ipv4, dev: 4, metric: 700), defaultRoute(.ipv4, dev: 14, via: "172.17.0.254", metric: 1),
                           eth0Default, defaultRoute(.ipv4, dev: 9, via: "192.168.1.1", metric: 600),
                           defaultRoute(.ipv4, dev: 12, via: "10.0.3.1", metric: 50)],
                v4: routeVia(2, gateway: "10.0.0.1"), v6: noRoute),
             status: .satisfied, reason: nil,
             checks: [.primary("eth0"), .available(["eth0", "wlan0", "wwan0", "usb1", "eth2"]), .gateways(["10.0.0.1"])]),
        Case(name: "two defaults, lookup picks the lower metric",
             snapshot: snapshot(links: [lo, eth0, wlan0], addresses: [eth0v4, wlan0v4], defaults: [wlan0Default, eth0Default],
                                v4: routeVia(2, gateway: "10.0.0.1"), v6: noRoute),
             status: .satisfied, reason: nil,
             checks: [.primary("eth0"), .available(["eth0", "wlan0"]), .gateways(["10.0.0.1"]), .reachability(.reachableViaWired)]),
        Case(name: "primary first even when its default has the higher metric (policy routing chose it)",
             snapshot: snapshot(links: [lo, eth0, wlan0], addresses: [eth0v4, wlan0v4],
                                defaults: [defaultRoute(.ipv4, dev: 3, via: "192.168.1.1", metric: 50), eth0Default],
                                v4: routeVia(2, gateway: "10.0.0.1"), v6: noRoute),
             status: .satisfied, reason: nil, checks: [.primary("eth0"), .available(["eth0", "wlan0"])]),
        Case(name: "multipath default lists every next hop's gateway",
             snapshot: snapshot(links: [lo, eth0, eth1], addresses: [eth0v4, eth1v4],
                                defaults: [DefaultRoute(family: .ipv4, metric: 0, nextHops: [
                                    NextHop(interfaceIndex: 2, gateway: ip("10.0.0.1")),
                                    NextHop(interfaceIndex: 8, gateway: ip("10.0.1.1")),
                                ])],
                                v4: routeVia(8, gateway: "10.0.1.1"), v6: noRoute),
             status: .satisfied, reason: nil,
             checks: [.primary("eth1"), .gateways(["10.0.0.1", "10.0.1.1"]), .available(["eth1", "eth0"])]),
        Case(name: "lookup via ignored docker0, default via eth0 tracked: primary eth0",
             snapshot: snapshot(links: [lo, eth0, docker0], addresses: [eth0v4, docker0v4],
                                defaults: [defaultRoute(.ipv4, dev: 7, via: "172.17.0.254"), eth0Default],
                                v4: routeVia(7, gateway: "172.17.0.254"), v6: noRoute),
             status: .satisfied, reason: nil,
             checks: [.primary("eth0"), .gateways(["10.0.0.1"]), .available(["eth0"]), .reachability(.reachableViaWired)]),
        Case(name: "lookup via the only interface with a route, which is ignored",
             snapshot: snapshot(links: [lo, eth0, docker0], addresses: [eth0v4, docker0v4],
                                defaults: [defaultRoute(.ipv4, dev: 7, via: "172.17.0.254")],
                                v4: routeVia(7, gateway: "172.17.0.254"), v6: noRoute),
             status: .unsatisfied, reason: .interfaceIgnored, checks: [.primary(nil), .available(["eth0"])]),
        Case(name: "only ignored interfaces exist: no interface",
             snapshot: snapshot(links: [lo, docker0], addresses: [docker0v4],
                                defaults: [defaultRoute(.ipv4, dev: 7, via: "172.17.0.254")],
                                v4: routeVia(7, gateway: "172.17.0.254"), v6: noRoute),
             status: .unsatisfied, reason: .noInterface, checks: [.available([]), .connectivity(.none)]),
        Case(name: "ignored interface is used when the policy ignores nothing",
             snapshot: snapshot(links: [lo, docker0], addresses: [docker0v4],
                                defaults: [defaultRoute(.ipv4, dev: 7, via: "172.17.0.254")],
                                v4: routeVia(7, gateway: "172.17.0.254"), v6: noRoute),
             policy: InterfacePolicy(ignoredPatterns: []), status: .satisfied, reason: nil,
             checks: [.primary("docker0"), .reachability(.reachableViaWired), .available(["docker0"])]),
        Case(name: "lookup via ignored interface, tracked fallback has no carrier",
             snapshot: snapshot(links: [lo, link(2, "eth0", carrier: false, oper: .down), docker0], addresses: [eth0v4, docker0v4],
                                defaults: [defaultRoute(.ipv4, dev: 7, via: "172.17.0.254"), eth0Default],
                                v4: routeVia(7, gateway: "172.17.0.254"), v6: noRoute),
             status: .unsatisfied, reason: .noCarrier),
        Case(name: "ignored interface's fallback: lowest usable metric first",
             snapshot: snapshot(links: [lo, eth0, wlan0, docker0], addresses: [eth0v4, wlan0v4, docker0v4],
                                defaults: [wlan0Default, defaultRoute(.ipv4, dev: 7, via: "172.17.0.254"),
                                           defaultRoute(.ipv4, dev: 2, via: "10.0.0.1", metric: 900)],
                                v4: routeVia(7, gateway: "172.17.0.254"), v6: noRoute),
             status: .satisfied, reason: nil, checks: [.primary("wlan0"), .available(["wlan0", "eth0"])]),
        Case(name: "fallback skips unusable defaults and non-unicast ones",
             snapshot: snapshot(links: [lo, link(2, "eth0", carrier: false, oper: .down), wlan0, docker0],
                                addresses: [eth0v4, wlan0v4, docker0v4],
                                defaults: [eth0Default, wlan0Default, defaultRoute(.ipv4, dev: 0, metric: 10, type: .blackhole),
                                           defaultRoute(.ipv4, dev: 7, via: "172.17.0.254")],
                                v4: routeVia(7, gateway: "172.17.0.254"), v6: noRoute),
             status: .satisfied, reason: nil, checks: [.primary("wlan0")]),
    ]

    // MARK: - Policy overrides on the answer

    static let overrides: [Case] = [
        Case(name: "override: wired tethered phone is expensive and constrained",
             snapshot: wired(),
             policy: InterfacePolicy(overrides: [.init(pattern: "eth*", isExpensive: true, isConstrained: true)]),
             status: .satisfied, reason: nil,
             checks: [.expensive(true), .constrained(true), .reachability(.reachableViaWired), .flags([.reachable])]),
        Case(name: "override: type cellular makes the path WWAN",
             snapshot: wired(), policy: InterfacePolicy(overrides: [.init(pattern: "eth0", type: .cellular)]),
             status: .satisfied, reason: nil,
             checks: [.reachability(.reachableViaWWAN), .flags([.reachable, .isWWAN]), .primaryType(.cellular), .expensive(true)]),
        Case(name: "override: cellular declared not expensive",
             snapshot: snapshot(links: [lo, wwan0], addresses: [wwan0v4], defaults: [wwan0Default], v4: routeVia(4), v6: noRoute),
             policy: InterfacePolicy(overrides: [.init(pattern: "wwan*", isExpensive: false)]),
             status: .satisfied, reason: nil, checks: [.expensive(false), .flags([.reachable, .isWWAN])]),
    ]

    // MARK: - Subscriber filters

    static let phone = snapshot(
        links: [lo, wlan0, wwan0], addresses: [wlan0v4, wwan0v4], defaults: [wlan0Default, wwan0Default],
        v4: routeVia(3, gateway: "192.168.1.1"), v6: noRoute, nameserver: true
    )
    static let laptop = snapshot(
        links: [lo, eth0, wlan0], addresses: [eth0v4, wlan0v4],
        defaults: [defaultRoute(.ipv4, dev: 3, via: "192.168.1.1", metric: 100), defaultRoute(.ipv4, dev: 2, via: "10.0.0.1", metric: 600)],
        v4: routeVia(3, gateway: "192.168.1.1"), v6: noRoute
    )

    static let filters: [Case] = [
        Case(name: "phone without filter uses wifi", snapshot: phone, status: .satisfied, reason: nil,
             checks: [.primary("wlan0"), .available(["wlan0", "wwan0"]), .expensive(false)]),
        Case(name: "required cellular while wifi is primary and cellular has its own default",
             snapshot: phone, filter: PathFilter(requiredInterfaceType: .cellular), status: .satisfied, reason: nil,
             checks: [.primary("wwan0"), .primaryType(.cellular), .reachability(.reachableViaWWAN),
                      .flags([.reachable, .isWWAN]), .available(["wwan0"]), .gateways([]), .expensive(true), .dns(true)]),
        Case(name: "required cellular, cellular interface without a route",
             snapshot: snapshot(links: [lo, wlan0, wwan0], addresses: [wlan0v4, wwan0v4], defaults: [wlan0Default],
                                v4: routeVia(3, gateway: "192.168.1.1"), v6: noRoute),
             filter: PathFilter(requiredInterfaceType: .cellular), status: .unsatisfied, reason: .interfaceTypeProhibited,
             checks: [.primary(nil), .available(["wwan0"]), .flags([]), .connectivity(.local)]),
        Case(name: "required cellular, no cellular interface at all",
             snapshot: snapshot(links: [lo, wlan0], addresses: [wlan0v4], defaults: [wlan0Default],
                                v4: routeVia(3, gateway: "192.168.1.1"), v6: noRoute),
             filter: PathFilter(requiredInterfaceType: .cellular), status: .unsatisfied, reason: .noInterface,
             checks: [.available([]), .connectivity(.none)]),
        Case(name: "required cellular, cellular default without carrier",
             snapshot: snapshot(links: [lo, wlan0, link(4, "wwan0", carrier: false, oper: .down, hw: ARPHardwareType.rawIP)],
                                addresses: [wlan0v4, wwan0v4], defaults: [wlan0Default, wwan0Default],
                                v4: routeVia(3, gateway: "192.168.1.1"), v6: noRoute),
             filter: PathFilter(requiredInterfaceType: .cellular), status: .unsatisfied, reason: .noCarrier),
        Case(name: "prohibited wifi with wifi primary and a wired fallback default",
             snapshot: laptop, filter: PathFilter(prohibitedInterfaceTypes: [.wifi]), status: .satisfied, reason: nil,
             checks: [.primary("eth0"), .reachability(.reachableViaWired), .gateways(["10.0.0.1"]), .available(["eth0"])]),
        Case(name: "prohibited wifi and wired on a laptop",
             snapshot: laptop, filter: PathFilter(prohibitedInterfaceTypes: [.wifi, .wiredEthernet]),
             status: .unsatisfied, reason: .noInterface),
        Case(name: "prohibited cellular does not touch a wifi primary",
             snapshot: phone, filter: PathFilter(prohibitedInterfaceTypes: [.cellular]), status: .satisfied, reason: nil,
             checks: [.primary("wlan0"), .available(["wlan0"])]),
        Case(name: "required wifi, wifi lookup: same as unfiltered",
             snapshot: phone, filter: PathFilter(requiredInterfaceType: .wifi), status: .satisfied, reason: nil,
             checks: [.primary("wlan0"), .available(["wlan0"])]),
    ]

    // MARK: - Connectivity: the probes' facts about the primary interface

    static let portal = CaptivePortal(captive: true, userPortalURL: "http://portal.test/login")

    static let connectivityCases: [Case] = [
        Case(name: "probes found full on the primary", snapshot: wired(), connectivity: [2: InterfaceConnectivity(ipv4: .full)],
             status: .satisfied, reason: nil, checks: [.connectivity(.full), .flags([.reachable]), .captivePortal(nil)]),
        Case(name: "a portal on the primary sets interventionRequired and says where to log in", snapshot: wired(),
             connectivity: [2: InterfaceConnectivity(ipv4: .portal, captivePortal: portal)], status: .satisfied, reason: nil,
             checks: [.connectivity(.portal), .flags([.reachable, .interventionRequired]), .captivePortal(portal)]),
        Case(name: "another interface's portal does not touch the path", snapshot: laptop,
             connectivity: [2: InterfaceConnectivity(ipv4: .portal, captivePortal: portal), 3: InterfaceConnectivity(ipv4: .partial)],
             status: .satisfied, reason: nil, checks: [.primary("wlan0"), .connectivity(.partial), .flags([.reachable]), .captivePortal(nil)]),
        Case(name: "facts about an interface that lost its path are not the path's", snapshot: wired(lookup: noRoute),
             connectivity: [2: InterfaceConnectivity(ipv4: .full)], status: .unsatisfied, reason: .noRoute,
             checks: [.connectivity(.local), .flags([])]),
        Case(name: "limited over a satisfied path", snapshot: wired(), connectivity: [2: InterfaceConnectivity(ipv4: .limited)],
             status: .satisfied, reason: nil, checks: [.connectivity(.limited), .flags([.reachable])]),
    ]

    // MARK: - Tunnels, overlays and bridges for guests

    // vx0 (vxlan over eth1, IFLA_VXLAN_LINK), podman0 (a bridge for containers) and its ports.
    static let vx0 = Link(index: 20, name: "vx0", flags: [.up, .lowerUp, .running], operState: .unknown, carrier: true,
                          kind: "vxlan", lowerIndex: 8)
    static let vx0v4 = addr(20, "10.9.0.2")
    static let vx0Default = defaultRoute(.ipv4, dev: 20, via: "10.9.0.1")
    static let podman0 = link(21, "podman0", kind: "bridge", device: .devtype("bridge"))
    static let podman0v4 = addr(21, "10.88.0.1", 16)
    static func port(_ index: Int32, _ name: String, kind: String?, of master: Int32) -> Link {
        var port = link(index, name, kind: kind)
        port.masterIndex = master
        return port
    }

    static let tunnels: [Case] = [
        Case(name: "vxlan is other, not wired, and its underlay carries it",
             snapshot: snapshot(links: [lo, eth1, vx0], addresses: [vx0v4], defaults: [vx0Default],
                                v4: routeVia(20, gateway: "10.9.0.1"), v6: noRoute),
             status: .satisfied, reason: nil, checks: [.primaryType(.other), .reachability(.reachableViaOther)]),
        Case(name: "vxlan whose underlay lost carrier is not usable, though its own carrier is on",
             snapshot: snapshot(links: [lo, link(8, "eth1", carrier: false, oper: .down), vx0], addresses: [vx0v4],
                                defaults: [vx0Default], v4: routeVia(20, gateway: "10.9.0.1"), v6: noRoute),
             status: .unsatisfied, reason: .noCarrier, checks: [.available([]), .primary(nil)]),
        Case(name: "vxlan whose underlay is down is not usable",
             snapshot: snapshot(links: [lo, link(8, "eth1", up: false, carrier: false), vx0], addresses: [vx0v4],
                                defaults: [vx0Default], v4: routeVia(20, gateway: "10.9.0.1"), v6: noRoute),
             status: .unsatisfied, reason: .noCarrier),
        Case(name: "a lower device that is not known (another namespace's) does not count against it",
             snapshot: snapshot(links: [lo, vx0], addresses: [vx0v4], defaults: [vx0Default],
                                v4: routeVia(20, gateway: "10.9.0.1"), v6: noRoute),
             status: .satisfied, reason: nil, checks: [.primary("vx0")]),
        Case(name: "on-link default over a vxlan segment is direct; over tun it is not",
             snapshot: snapshot(links: [lo, eth1, vx0], addresses: [vx0v4], defaults: [defaultRoute(.ipv4, dev: 20)],
                                v4: routeVia(20), v6: noRoute),
             status: .satisfied, reason: nil, checks: [.flags([.reachable, .isDirect])]),
        Case(name: "wireguard-style default with no gateway is not direct",
             snapshot: snapshot(links: [lo, eth0, link(9, "wg0", oper: .unknown, hw: ARPHardwareType.none, kind: "wireguard",
                                                       extraFlags: [.pointToPoint, .noARP])],
                                addresses: [eth0v4, addr(9, "10.66.0.2", 32)],
                                defaults: [eth0Default, defaultRoute(.ipv4, dev: 9, table: 51820)], v4: routeVia(9), v6: noRoute),
             status: .satisfied, reason: nil, checks: [.flags([.reachable]), .primary("wg0"), .primaryType(.other)]),
        Case(name: "a bridge whose ports are veths is left out of the interfaces whatever its name",
             snapshot: snapshot(links: [lo, eth0, podman0, port(22, "veth7f3a", kind: "veth", of: 21),
                                        port(23, "vnet0", kind: "tun", of: 21)],
                                addresses: [eth0v4, podman0v4], defaults: [eth0Default],
                                v4: routeVia(2, gateway: "10.0.0.1"), v6: noRoute),
             status: .satisfied, reason: nil, checks: [.available(["eth0"])]),
        Case(name: "a bridge for guests with no port yet is left out too",
             snapshot: snapshot(links: [lo, eth0, podman0], addresses: [eth0v4, podman0v4], defaults: [eth0Default],
                                v4: routeVia(2, gateway: "10.0.0.1"), v6: noRoute),
             status: .satisfied, reason: nil, checks: [.available(["eth0"])]),
        Case(name: "a bridge with a physical port is a LAN bridge and stays",
             snapshot: snapshot(links: [lo, eth0, podman0, port(8, "eth1", kind: nil, of: 21),
                                        port(22, "veth7f3a", kind: "veth", of: 21)],
                                addresses: [eth0v4, podman0v4], defaults: [eth0Default],
                                v4: routeVia(2, gateway: "10.0.0.1"), v6: noRoute),
             status: .satisfied, reason: nil, checks: [.available(["eth0", "podman0"])]),
        Case(name: "a bridge a default route leaves through stays, whatever its ports",
             snapshot: snapshot(links: [lo, podman0, port(22, "veth7f3a", kind: "veth", of: 21)], addresses: [podman0v4],
                                defaults: [defaultRoute(.ipv4, dev: 21, via: "10.88.0.254")],
                                v4: routeVia(21, gateway: "10.88.0.254"), v6: noRoute),
             status: .satisfied, reason: nil, checks: [.primary("podman0"), .reachability(.reachableViaWired)]),
        Case(name: "an override keeps a bridge for guests",
             snapshot: snapshot(links: [lo, eth0, podman0], addresses: [eth0v4, podman0v4], defaults: [eth0Default],
                                v4: routeVia(2, gateway: "10.0.0.1"), v6: noRoute),
             policy: InterfacePolicy(overrides: [.init(pattern: "podman*", isIgnored: false)]),
             status: .satisfied, reason: nil, checks: [.available(["eth0", "podman0"])]),
    ]

    // MARK: - The loop

    static let allCases: [Case] = emptyAndNoRoute + satisfiedByType + linkState + addressCases + refusedRoutes
        + families + dormant + dns + several + overrides + filters + connectivityCases + tunnels

    func testDerivation() {
        var names = Set<String>()
        for c in Self.allCases {
            XCTAssertTrue(names.insert(c.name).inserted, "duplicate case name: \(c.name)")
            let path = PathDerivation.derive(c.snapshot, policy: c.policy, filter: c.filter, connectivity: c.connectivity)
            XCTAssertEqual(path.status, c.status, "\(c.name): status")
            XCTAssertEqual(path.unsatisfiedReason, c.reason, "\(c.name): unsatisfiedReason")
            if c.filter == .none {
                XCTAssertEqual(PathDerivation.isSatisfied(c.snapshot, policy: c.policy), path.status == .satisfied, "\(c.name): isSatisfied")
            }
            for check in c.checks { Self.assert(check, on: path, c.name) }
            Self.assertInvariants(path, c.name)
        }
    }

    private static func assert(_ check: Check, on path: Path, _ name: String) {
        switch check {
        case let .reachability(value): XCTAssertEqual(path.reachability, value, "\(name): reachability")
        case let .flags(value): XCTAssertEqual(path.flags.names, value.names, "\(name): flags")
        case let .primary(value): XCTAssertEqual(path.primaryInterface, value, "\(name): primaryInterface")
        case let .primaryType(value): XCTAssertEqual(path.primaryInterfaceType, value, "\(name): primaryInterfaceType")
        case let .available(value): XCTAssertEqual(path.availableInterfaces, value, "\(name): availableInterfaces")
        case let .gateways(value): XCTAssertEqual(path.gateways, value, "\(name): gateways")
        case let .ipv4(value): XCTAssertEqual(path.supportsIPv4, value, "\(name): supportsIPv4")
        case let .ipv6(value): XCTAssertEqual(path.supportsIPv6, value, "\(name): supportsIPv6")
        case let .dns(value): XCTAssertEqual(path.supportsDNS, value, "\(name): supportsDNS")
        case let .expensive(value): XCTAssertEqual(path.isExpensive, value, "\(name): isExpensive")
        case let .constrained(value): XCTAssertEqual(path.isConstrained, value, "\(name): isConstrained")
        case let .connectivity(value): XCTAssertEqual(path.connectivity, value, "\(name): connectivity")
        case let .captivePortal(value): XCTAssertEqual(path.captivePortal, value, "\(name): captivePortal")
        }
    }

    /// What holds for every answer, whatever the snapshot.
    private static func assertInvariants(_ path: Path, _ name: String) {
        XCTAssertEqual(path.unsatisfiedReason == nil, path.status == .satisfied, "\(name): a reason exactly when not satisfied")
        if path.status != .satisfied {
            XCTAssertEqual(path.reachability, .notReachable, "\(name): not satisfied reads as notReachable")
            XCTAssertFalse(path.supportsDNS, "\(name): no DNS without a path")
            XCTAssertNotEqual(path.connectivity, .unknown, "\(name): offline connectivity is known")
            XCTAssertNil(path.captivePortal, "\(name): no portal facts without a path")
        } else {
            XCTAssertNotEqual(path.reachability, .notReachable, "\(name): satisfied is reachable")
            XCTAssertTrue(path.supportsIPv4 || path.supportsIPv6, "\(name): satisfied over some family")
            XCTAssertTrue(path.flags.contains(.reachable), "\(name): satisfied sets reachable")
        }
        XCTAssertEqual(path.flags.contains(.reachable), path.primaryInterface != nil, "\(name): reachable exactly with a primary")
        XCTAssertEqual(path.primaryInterface == nil, path.primaryInterfaceType == nil, "\(name): primary and its type go together")
        if let primary = path.primaryInterface {
            XCTAssertEqual(path.availableInterfaces.first, primary, "\(name): primary is listed first")
        }
        XCTAssertEqual(Set(path.availableInterfaces).count, path.availableInterfaces.count, "\(name): no interface twice")
        XCTAssertFalse(path.availableInterfaces.contains("lo"), "\(name): loopback is never available")
        XCTAssertFalse(path.flags.contains(.connectionOnTraffic) || path.flags.contains(.connectionOnDemand),
                       "\(name): no Linux meaning, never set")
        XCTAssertEqual(path.usesInterfaceType(.loopback), false, "\(name): never over loopback")
    }
}
