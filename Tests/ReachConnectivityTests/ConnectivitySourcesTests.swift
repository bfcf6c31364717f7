@testable import ReachConnectivity
import ReachabilityCore
import XCTest

private let eth = Link(index: 2, name: "eth0", flags: [.up, .running], operState: .up, carrier: true)
private let wlan = Link(index: 3, name: "wlan0", flags: [.up, .running], operState: .up, carrier: true)
private let ethDown = Link(index: 2, name: "eth0", flags: [.up], operState: .down, carrier: false)
private let ethV4 = InterfaceAddress(interfaceIndex: 2, address: IPAddress("10.0.0.2")!, prefixLength: 24)
private let ethV4b = InterfaceAddress(interfaceIndex: 2, address: IPAddress("10.0.0.9")!, prefixLength: 24)
private let ethV6 = InterfaceAddress(interfaceIndex: 2, address: IPAddress("2001:db8::2")!, prefixLength: 64)
private let wlanV4 = InterfaceAddress(interfaceIndex: 3, address: IPAddress("192.168.1.5")!, prefixLength: 24)

/// When systemd-networkd is asked again, step by step: only links or addresses that differ
/// from the last question ask again; only a different answer changes the portals.
final class NetworkdPortalQueriesTests: XCTestCase {
    func testAskingAgain() {
        let steps: [(name: String, links: [Int32: Link], addresses: [InterfaceAddress], asks: Bool)] = [
            ("the first snapshot", [2: eth], [], true),
            ("the same again", [2: eth], [], false),
            ("an address came (a DHCP lease)", [2: eth], [ethV4], true),
            ("the same again", [2: eth], [ethV4], false),
            ("an IPv6 address came (an RA)", [2: eth], [ethV4, ethV6], true),
            ("a link came", [2: eth, 3: wlan], [ethV4, ethV6], true),
            ("a link lost its carrier", [2: ethDown, 3: wlan], [ethV4, ethV6], true),
            ("a link went", [2: ethDown], [ethV4, ethV6], true),
            ("the address went", [2: ethDown], [ethV6], true),
            ("the same again", [2: ethDown], [ethV6], false),
        ]
        var queries = NetworkdPortalQueries()
        for step in steps {
            XCTAssertEqual(queries.shouldAsk(links: step.links, addresses: step.addresses), step.asks, step.name)
        }
    }

    func testAnswers() {
        let steps: [(name: String, answer: [Int32: String]?, changed: Bool, portals: [Int32: String])] = [
            ("not asked (no socket, an error)", nil, false, [:]),
            ("no portal: as before", [:], false, [:]),
            ("eth0 learned one", [2: "https://a.test/api"], true, [2: "https://a.test/api"]),
            ("the same", [2: "https://a.test/api"], false, [2: "https://a.test/api"]),
            ("not asked: the last answer stands", nil, false, [2: "https://a.test/api"]),
            ("another URI", [2: "https://b.test/api"], true, [2: "https://b.test/api"]),
            ("wlan0 too", [2: "https://b.test/api", 3: "https://c.test/api"], true, [2: "https://b.test/api", 3: "https://c.test/api"]),
            ("none any more", [:], true, [:]),
        ]
        var queries = NetworkdPortalQueries()
        for step in steps {
            XCTAssertEqual(queries.answered(step.answer), step.changed, step.name)
            XCTAssertEqual(queries.portals, step.portals, step.name)
        }
    }
}

/// When the DHCP leases are read again and which read's answer counts, step by step.
final class DHCPLeaseReadsTests: XCTestCase {
    func testReadingAgain() {
        let steps: [(name: String, addresses: [InterfaceAddress], reads: Bool)] = [
            ("the first snapshot, no address", [], true),
            ("the same again", [], false),
            ("an IPv6 address", [ethV6], false),
            ("an IPv4 address (a lease)", [ethV6, ethV4], true),
            ("the same again", [ethV6, ethV4], false),
            ("the IPv6 address went", [ethV4], false),
            ("another IPv4 address", [ethV4, wlanV4], true),
            ("one changed", [ethV4b, wlanV4], true),
            ("all went", [], true),
        ]
        var reads = DHCPLeaseReads()
        for step in steps {
            XCTAssertEqual(reads.addressesChanged(step.addresses), step.reads, step.name)
        }
        reads.stop()
        XCTAssertFalse(reads.addressesChanged([ethV4]), "stopped: nothing is read")
        XCTAssertNil(reads.readStarting(), "stopped: nothing is read")
    }

    func testWhichAnswerCounts() {
        enum Step {
            case start(Int)
            case finish(Int, Set<Int32>, newly: Set<Int32>?)
        }
        let steps: [(name: String, step: Step, metered: Set<Int32>)] = [
            ("the first read", .start(1), []),
            ("a second read while the first runs", .start(2), []),
            ("the first's answer: superseded", .finish(1, [2], newly: nil), []),
            ("the second's: eth0 metered", .finish(2, [2], newly: [2]), [2]),
            ("a third read", .start(3), [2]),
            ("the same answer: nothing changed", .finish(3, [2], newly: nil), [2]),
            ("a fourth read", .start(4), [2]),
            ("wlan0 too: only it is new", .finish(4, [2, 3], newly: [3]), [2, 3]),
            ("a fifth read", .start(5), [2, 3]),
            ("eth0 no longer: applied, nothing new", .finish(5, [3], newly: []), [3]),
            ("an old read's answer, late", .finish(4, [2, 3], newly: nil), [3]),
        ]
        var reads = DHCPLeaseReads()
        for (name, step, metered) in steps {
            switch step {
            case let .start(number): XCTAssertEqual(reads.readStarting(), number, name)
            case let .finish(number, answer, newly): XCTAssertEqual(reads.readFinished(number, metered: answer), newly, name)
            }
            XCTAssertEqual(reads.metered, metered, name)
        }
    }
}

/// What the sources say, gathered for one snapshot and merged into the connectivity table.
final class SourceFactsTests: XCTestCase {
    private static let links: [Int32: Link] = [2: eth, 3: wlan]

    func testGathering() {
        let device = NetworkManagerDevice(ipv4: .full, metered: true)
        let cases: [(name: String, ra: [Int32: String], networkd: [Int32: String], nm: [String: NetworkManagerDevice], dhcp: Set<Int32>,
                     expected: SourceFacts)] = [
            ("nothing", [:], [:], [:], [], Self.facts()),
            ("an RA's portal", [2: "https://ra.test"], [:], [:], [], Self.facts(announced: [2: "https://ra.test"])),
            ("networkd's portal", [:], [3: "https://nd.test"], [:], [], Self.facts(announced: [3: "https://nd.test"])),
            ("both for one link: the RA's", [2: "https://ra.test"], [2: "https://nd.test", 3: "https://nd.test"], [:], [],
             Self.facts(announced: [2: "https://ra.test", 3: "https://nd.test"])),
            ("networkd's for a link gone", [:], [9: "https://nd.test"], [:], [], Self.facts()),
            ("NetworkManager's devices by index", [:], [:], ["wlan0": device, "usb0": device], [], Self.facts(managed: [3: device])),
            ("metered, on links there are", [:], [:], [:], [2, 9], Self.facts(metered: [2])),
        ]
        for c in cases {
            let facts = SourceFacts(links: Self.links, routerAdvertisements: c.ra, networkd: c.networkd, networkManager: c.nm, dhcpMetered: c.dhcp)
            XCTAssertEqual(facts, c.expected, c.name)
            XCTAssertEqual(facts.isEmpty, c.expected == Self.facts(), c.name)
        }
    }

    func testMerging() {
        let device = NetworkManagerDevice(ipv6: .limited)
        let answered = CaptivePortal(apiURI: "https://a.test", captive: true, userPortalURL: "https://login.test")
        let probed = InterfaceConnectivity(ipv4: .full, lastChecked: 100)
        let cases: [(name: String, table: ConnectivityTable, facts: SourceFacts, expected: ConnectivityTable)] = [
            ("nothing", [:], Self.facts(), [:]),
            ("an announced API", [:], Self.facts(announced: [2: "https://a.test"]),
             [2: InterfaceConnectivity(captivePortal: CaptivePortal(apiURI: "https://a.test"))]),
            ("the same API: what it answered stays", [2: InterfaceConnectivity(captivePortal: answered)],
             Self.facts(announced: [2: "https://a.test"]), [2: InterfaceConnectivity(captivePortal: answered)]),
            ("another API: what the old one said is void", [2: InterfaceConnectivity(captivePortal: answered)],
             Self.facts(announced: [2: "https://b.test"]), [2: InterfaceConnectivity(captivePortal: CaptivePortal(apiURI: "https://b.test"))]),
            ("no API any more: the entry goes", [2: InterfaceConnectivity(captivePortal: answered)], Self.facts(), [:]),
            ("a probe's verdict stays", [2: probed], Self.facts(), [2: probed]),
            ("NetworkManager's word", [2: probed], Self.facts(managed: [2: device]),
             [2: InterfaceConnectivity(ipv4: .full, lastChecked: 100, networkManager: device)]),
            ("NetworkManager's word gone", [2: InterfaceConnectivity(networkManager: device)], Self.facts(), [:]),
            ("metered", [:], Self.facts(metered: [3]), [3: Self.metered()]),
            ("a link gone leaves the table", [9: probed, 2: probed], Self.facts(), [2: probed]),
        ]
        for c in cases {
            XCTAssertEqual(c.facts.merged(into: c.table, links: Self.links), c.expected, c.name)
        }
    }

    private static func facts(announced: [Int32: String] = [:], managed: [Int32: NetworkManagerDevice] = [:], metered: Set<Int32> = []) -> SourceFacts {
        var facts = SourceFacts(links: [:], routerAdvertisements: [:], networkd: [:], networkManager: [:], dhcpMetered: [])
        (facts.announced, facts.managed, facts.metered) = (announced, managed, metered)
        return facts
    }

    private static func metered() -> InterfaceConnectivity {
        var facts = InterfaceConnectivity()
        facts.dhcpMetered = true
        return facts
    }
}
