import ReachNetworkManager
import ReachabilityCore
import XCTest

/// reachd's path as NetworkManager's State, Connectivity, Metered and primary connection
/// (the tables of docs/networkmanager.md).
final class NetworkManagerAnswerTests: XCTestCase {
    private func path(
        _ status: PathStatus, _ connectivity: Connectivity, type: InterfaceType? = .wiredEthernet,
        expensive: ExpensiveReason?? = .none
    ) -> Path {
        Path(status: status, unsatisfiedReason: status == .unsatisfied ? .noCarrier : nil,
             reachability: status == .satisfied ? .reachableViaWired : .notReachable,
             flags: status == .satisfied ? [.reachable] : [],
             primaryInterface: type == nil ? nil : "eth0", primaryInterfaceType: type,
             isExpensive: expensive != nil, expensiveReason: expensive ?? nil, connectivity: connectivity)
    }

    func testStateAndConnectivity() {
        let cases: [(PathStatus, Connectivity, NetworkManagerState, NetworkManagerConnectivity)] = [
            (.unsatisfied, .none, .disconnected, .none),
            (.unsatisfied, .unknown, .disconnected, .none),
            (.requiresConnection, .unknown, .connecting, .none),
            // Unprobed: global, as NetworkManager with its check off, but Connectivity not invented.
            (.satisfied, .unknown, .connectedGlobal, .unknown),
            (.satisfied, .full, .connectedGlobal, .full),
            (.satisfied, .portal, .connectedSite, .portal),
            (.satisfied, .limited, .connectedSite, .limited),
            (.satisfied, .partial, .connectedSite, .limited),
            (.satisfied, .local, .connectedLocal, .none),
            (.satisfied, .none, .connectedLocal, .none),
        ]
        for (status, connectivity, state, nmConnectivity) in cases {
            let answer = NetworkManagerAnswer(path: path(status, connectivity), probes: true)
            XCTAssertEqual(answer.state, state, "\(status) \(connectivity)")
            XCTAssertEqual(answer.connectivity, nmConnectivity, "\(status) \(connectivity)")
        }
    }

    func testMetered() {
        let cases: [(PathStatus, ExpensiveReason??, NetworkManagerMetered)] = [
            (.satisfied, .none, .no),
            (.satisfied, .some(.configured), .yes),
            (.satisfied, .some(.cellular), .yes),
            (.satisfied, .some(nil), .yes),
            (.satisfied, .some(.dhcp), .guessYes),
            (.satisfied, .some(.tethering), .guessYes),
            (.satisfied, .some(.hotspotAddressPlan), .guessYes),
            (.requiresConnection, .some(.dhcp), .guessYes),
            // No path, no connection to be metered.
            (.unsatisfied, .some(.cellular), .unknown),
            (.unsatisfied, .none, .unknown),
        ]
        for (status, reason, metered) in cases {
            XCTAssertEqual(NetworkManagerAnswer(path: path(status, .unknown, expensive: reason), probes: false).metered, metered,
                           "\(status) \(String(describing: reason))")
        }
    }

    func testPrimaryConnection() {
        let cases: [(InterfaceType?, NetworkManagerDeviceType?, String?)] = [
            (.wiredEthernet, .ethernet, "802-3-ethernet"),
            (.wifi, .wifi, "802-11-wireless"),
            (.cellular, .modem, "gsm"),
            (.loopback, .loopback, "loopback"),
            (.other, .generic, "generic"),
            (nil, nil, nil),
        ]
        for (type, deviceType, connectionType) in cases {
            let primary = NetworkManagerAnswer(path: path(.satisfied, .full, type: type), probes: true).primary
            XCTAssertEqual(primary?.deviceType, deviceType, "\(String(describing: type))")
            XCTAssertEqual(primary?.connectionType, connectionType, "\(String(describing: type))")
            XCTAssertEqual(primary?.activated, type == nil ? nil : true)
        }
        XCTAssertNil(NetworkManagerAnswer(path: path(.unsatisfied, .none), probes: true).primary)
        XCTAssertEqual(NetworkManagerAnswer(path: path(.requiresConnection, .unknown), probes: true).primary?.activated, false)
    }

    func testTheNumbersAreNetworkManagers() {
        XCTAssertEqual(NetworkManagerState.allCases.map(\.rawValue), [0, 10, 20, 30, 40, 50, 60, 70])
        XCTAssertEqual(NetworkManagerConnectivity.allCases.map(\.rawValue), [0, 1, 2, 3, 4])
        XCTAssertEqual(NetworkManagerMetered.allCases.map(\.rawValue), [0, 1, 2, 3, 4])
        XCTAssertEqual(NetworkManagerDeviceType.allCases.map(\.rawValue), [1, 2, 8, 14, 32])
    }
}
