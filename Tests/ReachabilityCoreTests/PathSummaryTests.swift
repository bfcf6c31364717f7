import ReachabilityCore
import XCTest

/// The one-line summary (systemd `STATUS=`, the change log), case by case.
final class PathSummaryTests: XCTestCase {
    func testSummaries() {
        let wired = Path(status: .satisfied, reachability: .reachableViaWired, flags: [.reachable], primaryInterface: "eth0",
                         primaryInterfaceType: .wiredEthernet, gateways: ["10.0.0.1"], supportsIPv4: true, supportsDNS: true)
        var full = wired
        full.connectivity = .full
        var portal = wired
        portal.connectivity = .portal
        portal.captivePortal = CaptivePortal(captive: true, userPortalURL: "http://portal.test/login")
        var stalled = wired
        stalled.connectivity = .limited
        stalled.connectivityCause = .dataStall
        var anonymousPortal = wired
        anonymousPortal.connectivity = .portal
        let cases: [(String, Path, String)] = [
            ("not probed", wired, "reachable via eth0 (wiredEthernet) gw 10.0.0.1, IPv4, DNS"),
            ("probed full", full, "reachable via eth0 (wiredEthernet) gw 10.0.0.1, IPv4, DNS, internet full"),
            ("stalled traffic", stalled, "reachable via eth0 (wiredEthernet) gw 10.0.0.1, IPv4, DNS, internet limited (dataStall)"),
            ("portal with its login page", portal, "reachable via eth0 (wiredEthernet) gw 10.0.0.1, IPv4, DNS, behind a captive portal (http://portal.test/login)"),
            ("portal without a login page", anonymousPortal, "reachable via eth0 (wiredEthernet) gw 10.0.0.1, IPv4, DNS, behind a captive portal"),
            ("unsatisfied", Path(status: .unsatisfied, unsatisfiedReason: .noCarrier, reachability: .notReachable, connectivity: .local),
             "not reachable: noCarrier"),
        ]
        for (name, path, expected) in cases { XCTAssertEqual(path.summary, expected, name) }
    }
}
