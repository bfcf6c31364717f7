@testable import ReachabilityCore
@testable import ReachConnectivity
import XCTest

/// Which schedules run, and what a stall's publication says, as tables.
final class ProbeRosterTests: XCTestCase {
    private static let eth4 = ProbeKey(interfaceIndex: 2, family: .ipv4)
    private static let eth6 = ProbeKey(interfaceIndex: 2, family: .ipv6)
    private static let wlan4 = ProbeKey(interfaceIndex: 3, family: .ipv4)
    private static func context(_ address: String, api: String? = nil) -> ProbeContext {
        ProbeContext(interfaceName: "eth0", addresses: [IPAddress(address)!], gateways: [], hasNameserver: true, announcedAPI: api)
    }

    func testTheChangesMakeTheRunningSchedulesWhatIsEligible() {
        let (a, b) = (Self.context("192.0.2.2"), Self.context("192.0.2.3"))
        let rows: [(String, running: [ProbeKey: ProbeContext], eligible: [ProbeKey: ProbeContext], [ProbeRoster.Change])] = [
            ("nothing either way", [:], [:], []),
            ("new keys start, in key order", [:], [Self.wlan4: a, Self.eth4: a], [.start(Self.eth4, a), .start(Self.wlan4, a)]),
            ("unchanged: nothing", [Self.eth4: a], [Self.eth4: a], []),
            ("another address: retargeted", [Self.eth4: a], [Self.eth4: b], [.retarget(Self.eth4, b)]),
            ("an announced API moves the context too", [Self.eth4: a], [Self.eth4: Self.context("192.0.2.2", api: "https://p.test/api")],
             [.retarget(Self.eth4, Self.context("192.0.2.2", api: "https://p.test/api"))]),
            ("gone keys stop first", [Self.eth6: a, Self.eth4: a], [Self.wlan4: b], [.stop(Self.eth4), .stop(Self.eth6), .start(Self.wlan4, b)]),
        ]
        for (name, running, eligible, expected) in rows {
            XCTAssertEqual(ProbeRoster.changes(running: running, eligible: eligible), expected, name)
        }
    }

    func testWhatAStallsPublicationSays() {
        let stall = DataStall(since: 1, sockets: 4, destinations: 3, users: 1)
        var stalled = InterfaceConnectivity()
        stalled.dataStall = stall
        var portal = InterfaceConnectivity()
        portal[.ipv4] = .portal
        portal.dataStall = stall
        var reached = InterfaceConnectivity()
        reached[.ipv4] = .full
        reached.lastChecked = 2  // after the stall began
        reached.dataStall = stall
        XCTAssertEqual(stalled.cause, .dataStall, "the fixture")
        let rows: [(String, DataStall?, InterfaceConnectivity, Bool, StallNews)] = [
            ("published, nothing else known: it limits", stall, stalled, false, .stalled),
            ("published behind a portal", stall, portal, false, .behindPortal),
            ("published, but a round since reached its server", stall, reached, false, .contradictedByProbe),
            ("cleared after limiting", nil, InterfaceConnectivity(), true, .flowsAgain),
            ("cleared, it never limited", nil, InterfaceConnectivity(), false, .none),
        ]
        for (name, stall, facts, wasLimiting, expected) in rows {
            XCTAssertEqual(StallNews.of(stall, facts: facts, wasLimiting: wasLimiting), expected, name)
        }
    }
}
