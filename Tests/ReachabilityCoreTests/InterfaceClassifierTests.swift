import ReachabilityCore
import XCTest

final class InterfaceClassifierTests: XCTestCase {
    func testClassifiesFromKernelAndSysfsFacts() {
        let cases: [(name: String, link: Link, expected: InterfaceType)] = [
            ("loopback by IFF_LOOPBACK", link(1, "lo", hw: ARPHardwareType.ether, extraFlags: .loopback), .loopback),
            ("loopback by ARPHRD_LOOPBACK", link(1, "lo", hw: ARPHardwareType.loopback), .loopback),
            ("wifi by sysfs wireless", link(3, "wlp2s0", device: .wireless), .wifi),
            ("wifi by DEVTYPE=wlan", link(3, "wlan0", device: .devtype("wlan")), .wifi),
            ("cellular by DEVTYPE=wwan", link(4, "wwan0", device: .devtype("wwan")), .cellular),
            ("cellular by ARPHRD_RAWIP", link(4, "rmnet_data0", hw: ARPHardwareType.rawIP), .cellular),
            ("cellular by qmi_wwan driver", link(4, "usb0", device: .driver("qmi_wwan")), .cellular),
            ("cellular by cdc_mbim driver", link(4, "usb0", device: .driver("cdc_mbim")), .cellular),
            ("cellular by mhi_net driver", link(4, "mhi0", hw: ARPHardwareType.none, device: .driver("mhi_net")), .cellular),
            ("ethernet NIC", link(2, "enp3s0", device: .driver("e1000e")), .wiredEthernet),
            ("ethernet without facts", link(2, "eth0"), .wiredEthernet),
            ("bridge", link(7, "br0", kind: "bridge", device: .devtype("bridge")), .wiredEthernet),
            ("bond", link(7, "bond0", kind: "bond", device: .devtype("bond")), .wiredEthernet),
            ("veth", link(7, "veth1234", kind: "veth"), .wiredEthernet),
            ("usb ethernet driver that is not WWAN", link(2, "usb0", device: .driver("cdc_ether")), .wiredEthernet),
            ("tun (ARPHRD_NONE)", link(5, "tun0", hw: ARPHardwareType.none, kind: "tun"), .other),
            ("wireguard", link(5, "wg0", hw: ARPHardwareType.none, kind: "wireguard"), .other),
            ("ppp (ARPHRD_PPP)", link(6, "ppp0", hw: ARPHardwareType.ppp), .other),
            ("tap (ether + kind tun)", link(5, "tap0", hw: ARPHardwareType.ether, kind: "tun"), .other),
            ("ip tunnel (ARPHRD_TUNNEL 768)", link(9, "tunl0", hw: 768, kind: "ipip"), .other),
            ("sit (ARPHRD_SIT 776)", link(9, "sit0", hw: 776, kind: "sit"), .other),
            ("vxlan carries ethernet frames but is an overlay", link(9, "vx0", kind: "vxlan"), .other),
            ("geneve overlay", link(9, "gnv0", kind: "geneve"), .other),
            ("gretap overlay", link(9, "gretap1", kind: "gretap"), .other),
            ("ip6gre tunnel", link(9, "ip6gre1", hw: 823, kind: "ip6gre"), .other),
            ("gre tunnel", link(9, "gre1", hw: 778, kind: "gre"), .other),
            ("macvlan sits on the LAN", link(9, "mv0", kind: "macvlan"), .wiredEthernet),
            ("vlan sits on the LAN", link(9, "eth0.10", kind: "vlan"), .wiredEthernet),
            ("wifi facts win over a tunnel kind", link(9, "wlan1", kind: "vxlan", device: .wireless), .wifi),
        ]
        for c in cases {
            XCTAssertEqual(InterfaceClassifier.classify(c.link), c.expected, c.name)
        }
    }
}
