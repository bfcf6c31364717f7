import ReachabilityCore
import XCTest

final class PathChangeTests: XCTestCase {
    private let wired = Path(
        status: .satisfied, reachability: .reachableViaWired, flags: [.reachable], primaryInterface: "eth0",
        primaryInterfaceType: .wiredEthernet, availableInterfaces: ["eth0", "wlan0"], gateways: ["10.0.0.1"],
        supportsIPv4: true, supportsIPv6: false, supportsDNS: true
    )
    private let address = IPAddress("10.0.0.2")!

    func testChangesBetweenAnswers() {
        var wifi = wired
        wifi.reachability = .reachableViaWiFi
        wifi.primaryInterface = "wlan0"
        wifi.primaryInterfaceType = .wifi
        wifi.availableInterfaces = ["wlan0"]
        wifi.gateways = ["192.168.1.1"]
        var offline = Path(status: .unsatisfied, unsatisfiedReason: .noRoute, reachability: .notReachable, connectivity: .none)
        offline.supportsDNS = false
        var dualStack = wired
        dualStack.supportsIPv6 = true
        var expensive = wired
        expensive.isExpensive = true
        var noDNS = wired
        noDNS.supportsDNS = false
        var otherReason = offline
        otherReason.unsatisfiedReason = .noCarrier

        let cases: [(name: String, old: Path, oldAddresses: Set<IPAddress>, new: Path, newAddresses: Set<IPAddress>, expected: [PathChange])] = [
            ("identical", wired, [address], wired, [address], []),
            ("only an address of the primary", wired, [address], wired, [address, IPAddress("10.0.0.3")!], [.addresses]),
            ("IPv6 appears", wired, [address], dualStack, [address], [.ipv6]),
            ("primary moves to wifi", wired, [address], wifi, [IPAddress("192.168.1.5")!],
             [.reachability, .primaryInterface, .gateways, .addresses, .availableInterfaces]),
            ("goes offline", wired, [address], offline, [],
             [.status, .reachability, .primaryInterface, .gateways, .ipv4, .addresses, .dns, .flags, .availableInterfaces, .connectivity]),
            ("reason changes while offline", offline, [], otherReason, [], [.status]),
            ("becomes expensive", wired, [address], expensive, [address], [.cost]),
            ("DNS goes away", wired, [address], noDNS, [address], [.dns]),
        ]
        for test in cases {
            XCTAssertEqual(PathChange.between(test.old, addresses: test.oldAddresses, and: test.new, addresses: test.newAddresses),
                           test.expected, test.name)
        }
    }

    func testUsableAddressesOfThePrimaryInterface() {
        let snapshot = NetworkSnapshot(
            links: [2: Link(index: 2, name: "eth0", flags: [.up, .lowerUp], operState: .up, carrier: true)],
            addresses: [
                InterfaceAddress(interfaceIndex: 2, address: address, prefixLength: 24),
                InterfaceAddress(interfaceIndex: 2, address: IPAddress("fe80::1")!, prefixLength: 64, scope: .link),
                InterfaceAddress(interfaceIndex: 2, address: IPAddress("fd00::2")!, prefixLength: 64, flags: .tentative),
            ]
        )
        XCTAssertEqual(snapshot.usableAddresses(ofInterfaceNamed: "eth0"), [address])
        XCTAssertEqual(snapshot.usableAddresses(ofInterfaceNamed: "wlan0"), [])
        XCTAssertEqual(snapshot.usableAddresses(ofInterfaceNamed: nil), [])
    }
}
