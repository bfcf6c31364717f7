import ReachabilityCore
import XCTest

final class InterfacePolicyTests: XCTestCase {
    func testDefaultIgnoredPatterns() {
        let cases: [(name: String, interface: String, ignored: Bool)] = [
            ("docker bridge", "docker0", true),
            ("veth pair end", "veth1234", true),
            ("docker user bridge", "br-abc", true),
            ("libvirt bridge", "virbr0", true),
            ("calico", "cali1", true),
            ("CNI bridge", "cni0", true),
            ("flannel vxlan", "flannel.1", true),
            ("ethernet", "eth0", false),
            ("wifi", "wlan0", false),
            ("plain bridge", "bridge0", false),
            ("br without dash", "br0", false),
            ("predictable name", "enp3s0", false),
            ("loopback", "lo", false),
        ]
        let policy = InterfacePolicy()
        for c in cases {
            XCTAssertEqual(policy.isIgnored(link(10, c.interface), hostInternalBridges: []), c.ignored, c.name)
        }
        XCTAssertFalse(InterfacePolicy(ignoredPatterns: []).isIgnored(link(7, "docker0"), hostInternalBridges: []), "empty ignore list ignores nothing")
        XCTAssertTrue(InterfacePolicy(ignoredPatterns: ["eth?"]).isIgnored(link(2, "eth0"), hostInternalBridges: []), "custom ignore list")
    }

    func testOverridesDecideIgnoringOverGlobsAndTheBridgeRule() {
        typealias Override = InterfacePolicy.Override
        let cases: [(name: String, overrides: [Override], interface: String, internalBridge: Bool, ignored: Bool)] = [
            ("a host-internal bridge is ignored whatever its name", [], "podman0", true, true),
            ("the same bridge with a LAN port is kept", [], "podman0", false, false),
            ("an override keeps a host-internal bridge", [Override(pattern: "lxdbr*", isIgnored: false)], "lxdbr0", true, false),
            ("an override keeps an interface an ignore glob matches", [Override(pattern: "docker0", isIgnored: false)], "docker0", false, false),
            ("an override ignores what nothing else would", [Override(pattern: "eth1", isIgnored: true)], "eth1", false, true),
            ("an override without ignore leaves the glob to decide", [Override(pattern: "docker*", type: .other)], "docker0", false, true),
            ("the first override that says wins", [Override(pattern: "br*", isIgnored: true), Override(pattern: "br0", isIgnored: false)],
             "br0", false, true),
        ]
        for c in cases {
            let policy = InterfacePolicy(overrides: c.overrides)
            XCTAssertEqual(policy.isIgnored(link(10, c.interface), hostInternalBridges: c.internalBridge ? [10] : []), c.ignored, c.name)
        }
    }

    func testTypeAndCostWithOverrides() {
        typealias Override = InterfacePolicy.Override
        let cases: [(name: String, overrides: [Override], link: Link, type: InterfaceType, expensive: Bool, constrained: Bool)] = [
            ("ethernet defaults", [], eth0, .wiredEthernet, false, false),
            ("wifi defaults", [], wlan0, .wifi, false, false),
            ("cellular is expensive by default", [], wwan0, .cellular, true, false),
            ("tun defaults", [], tun0, .other, false, false),
            ("override type", [Override(pattern: "eth0", type: .wifi)], eth0, .wifi, false, false),
            ("override type to cellular makes it expensive",
             [Override(pattern: "usb*", type: .cellular)], link(9, "usb0"), .cellular, true, false),
            ("override expensive on a phone hotspot", [Override(pattern: "wlan0", isExpensive: true)], wlan0, .wifi, true, false),
            ("override cellular as not expensive", [Override(pattern: "wwan*", isExpensive: false)], wwan0, .cellular, false, false),
            ("override constrained", [Override(pattern: "wlan*", isConstrained: true)], wlan0, .wifi, false, true),
            ("non-matching override is ignored", [Override(pattern: "wlan*", type: .other, isExpensive: true, isConstrained: true)],
             eth0, .wiredEthernet, false, false),
            ("first match wins",
             [Override(pattern: "eth*", type: .other), Override(pattern: "eth0", type: .wifi)], eth0, .other, false, false),
            ("first match wins per field: a later override fills fields the first leaves unset",
             [Override(pattern: "eth*", isExpensive: true), Override(pattern: "eth0", type: .cellular, isExpensive: false, isConstrained: true)],
             eth0, .cellular, true, true),
            ("an override without a value for a field does not reset it",
             [Override(pattern: "*"), Override(pattern: "wwan0", isConstrained: true)], wwan0, .cellular, true, true),
        ]
        for c in cases {
            let policy = InterfacePolicy(overrides: c.overrides)
            XCTAssertEqual(policy.type(of: c.link), c.type, "\(c.name): type")
            XCTAssertEqual(policy.expense(of: c.link) != nil, c.expensive, "\(c.name): expensive")
            XCTAssertEqual(policy.isConstrained(c.link), c.constrained, "\(c.name): constrained")
        }
    }

    /// Why an interface is expensive: configuration first (its "no" wins over every guess),
    /// then cellular, then NetworkManager's Metered.
    func testExpenseReasons() {
        typealias Override = InterfacePolicy.Override
        let iPhone = link(10, "eth1", device: .usb("ipheth", vendor: 0x05AC))
        func ncm(_ vendor: UInt16) -> Link { link(10, "enx0", device: .usb("cdc_ncm", vendor: vendor)) }
        let metered = NetworkManagerDevice(metered: true)
        let unmetered = NetworkManagerDevice(ipv4: .full, metered: false)
        let cases: [(String, [Override], Link, NetworkManagerDevice?, ExpensiveReason?)] = [
            ("plain ethernet", [], eth0, nil, nil),
            ("NetworkManager says metered", [], eth0, metered, .networkManager),
            ("NetworkManager says not metered", [], eth0, unmetered, nil),
            ("cellular, whatever NetworkManager says", [], wwan0, unmetered, .cellular),
            ("cellular and metered: cellular named", [], wwan0, metered, .cellular),
            ("configured expensive", [Override(pattern: "eth0", isExpensive: true)], eth0, nil, .configured),
            ("configured not expensive wins over NetworkManager", [Override(pattern: "eth*", isExpensive: false)], eth0, metered, nil),
            ("configured not expensive wins over cellular", [Override(pattern: "wwan0", isExpensive: false)], wwan0, metered, nil),
            ("an override on another field leaves NetworkManager's say", [Override(pattern: "eth0", isConstrained: true)], eth0, metered, .networkManager),
            ("an iPhone on USB", [], iPhone, nil, .tethering),
            ("Android's RNDIS", [], link(10, "usb0", device: .driver("rndis_host")), nil, .tethering),
            ("Bluetooth PAN", [], link(10, "bnep0", device: .driver("bnep")), nil, .tethering),
            ("NCM from a phone maker", [], ncm(0x18D1), nil, .tethering),
            ("NCM from a dock", [], ncm(0x0BDA), nil, nil),
            ("ECM from a Lenovo dock", [], link(10, "enx0", device: .usb("cdc_ether", vendor: 0x17EF)), nil, nil),
            ("NCM without a USB vendor", [], link(10, "enx0", device: .driver("cdc_ncm")), nil, nil),
            ("a USB Ethernet adapter", [], link(10, "enx0", device: .usb("r8152", vendor: 0x0BDA)), nil, nil),
            ("NetworkManager's metered names itself first", [], iPhone, metered, .networkManager),
            ("the user said unmetered in NetworkManager: it wins over the driver", [], iPhone, unmetered, nil),
            ("configured not expensive wins over tethering", [Override(pattern: "eth*", isExpensive: false)], iPhone, nil, nil),
        ]
        for (name, overrides, link, networkManager, expected) in cases {
            XCTAssertEqual(InterfacePolicy(overrides: overrides).expense(of: link, networkManager: networkManager), expected, name)
        }
    }

    /// An iPhone's Personal Hotspot by its address plan: an address in 172.20.10.0/28 and the
    /// default route via 172.20.10.1 on the same interface; switchable.
    func testHotspotAddressPlan() {
        func plan(_ address: String, _ prefix: UInt8 = 28, via gateway: String = "172.20.10.1", dev: Int32 = 3) -> NetworkSnapshot {
            snapshot(links: [lo, wlan0, eth0], addresses: loAddresses + [addr(3, address, prefix)],
                     defaults: [defaultRoute(.ipv4, dev: dev, via: gateway)])
        }
        let cases: [(String, NetworkSnapshot, ExpensiveReason?)] = [
            ("the plan", plan("172.20.10.2"), .hotspotAddressPlan),
            ("the last client address", plan("172.20.10.14"), .hotspotAddressPlan),
            ("another prefix length", plan("172.20.10.2", 24), nil),
            ("outside the /28", plan("172.20.10.20"), nil),
            ("the gateway's own address", plan("172.20.10.1"), nil),
            ("another gateway", plan("172.20.10.2", via: "172.20.10.3"), nil),
            ("the default route on another interface", plan("172.20.10.2", dev: 2), nil),
            ("no default route", snapshot(links: [lo, wlan0], addresses: [addr(3, "172.20.10.5", 28)]), nil),
            ("an ordinary network", plan("192.168.1.20", 24, via: "192.168.1.1"), nil),
        ]
        for (name, snapshot, expected) in cases {
            XCTAssertEqual(InterfacePolicy().expense(of: wlan0, in: snapshot), expected, name)
            XCTAssertNil(InterfacePolicy(hotspotAddressPlan: false).expense(of: wlan0, in: snapshot), "\(name), switched off")
        }
        XCTAssertNil(InterfacePolicy(overrides: [.init(pattern: "wlan0", isExpensive: false)]).expense(of: wlan0, in: plan("172.20.10.2")),
                     "an override wins over the plan")
        XCTAssertEqual(InterfacePolicy().expense(of: wlan0, in: plan("172.20.10.2"), dhcpMetered: true), .dhcp, "the network's own word names itself first")
    }
}
