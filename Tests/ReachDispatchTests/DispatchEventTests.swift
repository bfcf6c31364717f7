import ReachDispatch
import ReachProtocol
import ReachabilityCore
import XCTest

/// Which answers run the hooks, what folding does, and the environment a hook gets.
final class DispatchEventTests: XCTestCase {
    private let online = Path(status: .satisfied, reachability: .reachableViaWired, flags: [.reachable],
                              primaryInterface: "eth0", primaryInterfaceType: .wiredEthernet,
                              availableInterfaces: ["eth0", "wlan0"], gateways: ["10.77.0.1", "fd77::1"],
                              supportsIPv4: true, supportsIPv6: true, supportsDNS: true, connectivity: .full)
    private let offline = Path(status: .unsatisfied, unsatisfiedReason: .noRoute, reachability: .notReachable, connectivity: .none)

    func testWhichAnswersAreEvents() {
        let reply = { (path: Path, changes: [PathChange]?) in StatusReply(sequence: 7, instance: "b", path: path, changes: changes) }
        let cases: [(reply: StatusReply, kind: DispatchEvent.Kind, last: Path?, expected: [PathChange]?)] = [
            (reply(online, []), .initial, nil, []),
            (reply(offline, [.status, .reachability]), .change, online, [.status, .reachability]),
            // After a reconnect or restart: only when the path is not the last one seen.
            (reply(online, []), .restarted, online, nil),
            (reply(online, []), .reconnected, online, nil),
            (reply(offline, []), .restarted, online, [.status, .reachability, .primaryInterface, .gateways, .ipv4, .ipv6, .dns, .flags, .availableInterfaces, .connectivity]),
            (reply(online, []), .reconnected, nil, []),
        ]
        for test in cases {
            let event = DispatchEvent.of(test.reply, kind: test.kind, lastPath: test.last)
            XCTAssertEqual(event?.changes, test.expected, "\(test.kind) \(test.reply.path.status)")
            if let event { XCTAssertEqual(event.kind, test.kind) }
        }
    }

    func testFoldingKeepsTheFirstEventOfARun() {
        let make = { (kind: DispatchEvent.Kind, sequence: Int, changes: [PathChange]) in
            DispatchEvent(kind: kind, sequence: sequence, instance: "a", path: self.online, changes: changes)
        }
        let cases: [(DispatchEvent.Kind, DispatchEvent.Kind, DispatchEvent.Kind)] = [
            (.initial, .change, .initial), (.restarted, .change, .restarted),
            (.change, .change, .change), (.change, .restarted, .restarted), (.reconnected, .change, .change),
        ]
        for (older, newer, expected) in cases {
            let folded = make(older, 1, [.gateways]).coalesced(with: make(newer, 2, [.status]))
            XCTAssertEqual(folded.kind, expected, "\(older) then \(newer)")
            XCTAssertEqual(folded.sequence, 2)
            XCTAssertEqual(folded.changes, [.status, .gateways])
        }
    }

    func testEnvironment() {
        let event = DispatchEvent(kind: .change, sequence: 12, instance: "0f3c", path: online, changes: [.status, .gateways])
        let variables = Dictionary(uniqueKeysWithValues: HookEnvironment.variables(for: event).map { ($0.name, $0.value) })
        let expected = [
            "REACHD_EVENT": "change", "REACHD_SEQUENCE": "12", "REACHD_INSTANCE": "0f3c",
            "REACHD_STATUS": "satisfied", "REACHD_REASON": "", "REACHD_REACHABILITY": "reachableViaWired",
            "REACHD_PRIMARY": "eth0", "REACHD_PRIMARY_TYPE": "wiredEthernet", "REACHD_INTERFACES": "eth0,wlan0",
            "REACHD_GATEWAYS": "10.77.0.1,fd77::1", "REACHD_IPV4": "yes", "REACHD_IPV6": "yes", "REACHD_DNS": "yes",
            "REACHD_EXPENSIVE": "no", "REACHD_CONSTRAINED": "no", "REACHD_FLAGS": "reachable",
            "REACHD_CONNECTIVITY": "full", "REACHD_CONNECTIVITY_CAUSE": "", "REACHD_CAPTIVE_PORTAL": "",
            "REACHD_LINK_QUALITY": "", "REACHD_CHANGES": "status,gateways", "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        ]
        XCTAssertEqual(variables, expected)
        XCTAssertEqual(HookEnvironment.entries(for: event).last, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")

        let unsatisfied = DispatchEvent(kind: .initial, sequence: 1, instance: "0f3c", path: offline, changes: [])
        let offlineVariables = Dictionary(uniqueKeysWithValues: HookEnvironment.variables(for: unsatisfied).map { ($0.name, $0.value) })
        XCTAssertEqual(offlineVariables["REACHD_REASON"], "noRoute")
        XCTAssertEqual(offlineVariables["REACHD_PRIMARY"], "")
        XCTAssertEqual(offlineVariables["REACHD_CHANGES"], "")
    }

    /// Text from the network or an interface name never brings a control character into a
    /// hook's environment (a newline could forge a line of a hook's `env` dump).
    func testNoControlCharacterReachesAHook() {
        var path = online
        path.primaryInterface = "ev\u{1b}[31mil\nREACHD_STATUS=x"
        path.captivePortal = CaptivePortal(userPortalURL: "http://portal.test/\u{202e}gpj.exe\u{7}" + String(repeating: "a", count: 5000))
        let event = DispatchEvent(kind: .change, sequence: 1, instance: "i\r", path: path, changes: [])
        for (name, value) in HookEnvironment.variables(for: event) {
            XCTAssertFalse(value.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || $0.properties.generalCategory == .format },
                           "\(name)=\(value.debugDescription)")
            XCTAssertLessThanOrEqual(value.unicodeScalars.count, HookEnvironment.valueLimit, name)
        }
        let variables = Dictionary(uniqueKeysWithValues: HookEnvironment.variables(for: event).map { ($0.name, $0.value) })
        XCTAssertEqual(variables["REACHD_PRIMARY"], "ev\\x1b[31mil\\nREACHD_STATUS=x")
        XCTAssertEqual(variables["REACHD_INSTANCE"], "i\\r")
        XCTAssertTrue(variables["REACHD_CAPTIVE_PORTAL"]?.hasPrefix("http://portal.test/\\u{202E}gpj.exe\\x07aaa") == true)
        XCTAssertTrue(variables["REACHD_CAPTIVE_PORTAL"]?.hasSuffix("…") == true)
    }
}
