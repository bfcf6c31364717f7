import Foundation
import ReachabilityCore
import ReachProtocol
import TestSupport
import XCTest

/// What `reachctl` prints when reachd's answer carries hostile text (a captive portal's
/// URL, an interface name anyone may set in their own namespace): every command, text and
/// JSON, against a stand-in for reachd that serves such an answer (Tests/Fixtures/
/// canned_reachd.py). Nothing a terminal acts on (ESC, BEL, CR, NUL, C1, bidi and other
/// format characters, U+2028) may reach stdout or stderr raw, and nothing may start a line
/// of its own; text shows the escaped form, JSON decodes to the very same values.
final class HostileTextOutputTests: XCTestCase {
    /// A hostile portal URL: a window title (OSC 0, ended by BEL), then forged sd_notify lines.
    static let portalURL = "https://portal.test/\u{1b}]0;pwned\u{7}\n WATCHDOG=trigger\nSTATUS=forged"
    static let shownPortalURL = #"https://portal.test/\x1b]0;pwned\x07\n WATCHDOG=trigger\nSTATUS=forged"#
    static let interface = "eth\u{1b}[31m0\u{202E}"
    static let shownInterface = #"eth\x1b[31m0\u{202E}"#
    static let apiURI = "https://api.test/\u{9b}2J\u{2028}x"
    static let shownAPIURI = #"https://api.test/\u{9B}2J\u{2028}x"#

    private var directory = ""
    private var socket = ""
    private var stub: Process?

    override func setUpWithError() throws {
        directory = try Paths.makeTemporaryDirectory("reachctl-hostile")
        socket = directory + "/reachd.sock"
        let replies = directory + "/replies.json"
        try JSONSerialization.data(withJSONObject: try Self.replies()).write(to: URL(fileURLWithPath: replies))
        let ready = Pipe()
        let stub = try Command.launch(["python3", Paths.repository.appendingPathComponent("Tests/Fixtures/canned_reachd.py").path, socket, replies],
                                      stdout: ready)
        self.stub = stub
        XCTAssertTrue(String(decoding: ready.fileHandleForReading.availableData, as: UTF8.self).hasPrefix("ready"))
    }

    override func tearDown() {
        if let stub {
            kill(stub.processIdentifier, SIGKILL)
            stub.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Every reply reachctl may ask for, each carrying hostile text wherever a string goes.
    private static func replies() throws -> [String: Any] {
        let portal = CaptivePortal(apiURI: apiURI, captive: true, userPortalURL: portalURL, venueInfoURL: "https://venue.test/\u{0}\r\u{7}")
        let path = Path(status: .satisfied, reachability: .reachableViaWired, flags: [.reachable], primaryInterface: interface,
                        primaryInterfaceType: .wiredEthernet, availableInterfaces: [interface], gateways: ["10.0.0.1\u{1b}[2J"],
                        supportsIPv4: true, supportsDNS: true, connectivity: .portal, captivePortal: portal)
        let status = StatusReply(sequence: 3, instance: "run\u{1b}]52;c;cHduZWQ=\u{7}", path: path, changes: [])
        let described = InterfaceDescription(
            index: 2, name: interface, type: .wiredEthernet, kind: "veth\u{1b}[5m", operState: "up\u{7}", up: true, carrier: true,
            addresses: [.init(address: "10.0.0.2\u{202E}", prefixLength: 24, family: .ipv4, scope: .global, tentative: false, dadFailed: false, usable: true)],
            isExpensive: false, isConstrained: false, ignored: false,
            connectivity: InterfaceConnectivity(ipv4: .portal, lastChecked: 1_800_000_000, captivePortal: portal))
        var address = TargetAddress(address: IPAddress("192.0.2.7")!)
        address.address = "192.0.2.7\u{1b}[8m"
        address.reachable = true
        address.interface = interface
        address.interfaceType = .wiredEthernet
        address.gateway = "10.0.0.1\u{9b}"
        address.source = "10.0.0.2\r"
        let target = TargetReply(target: "host.test\u{1b}[2J", path: TargetPath(
            status: .satisfied, reachability: .reachableViaWired, flags: [.reachable], primaryInterface: interface,
            primaryInterfaceType: .wiredEthernet, addresses: [address]))
        func parameters(_ value: some Encodable) throws -> Any {
            try JSONSerialization.jsonObject(with: try JSONEncoder().encode(value))
        }
        let interfaces = try parameters(ListInterfacesReply(interfaces: [described]))
        return [
            ReachabilityInterface.Method.getStatus: try parameters(status),
            ReachabilityInterface.Method.subscribe: try parameters(status),
            ReachabilityInterface.Method.listInterfaces: interfaces,
            ReachabilityInterface.Method.checkConnectivity: interfaces,
            ReachabilityInterface.Method.checkTarget: try parameters(target),
            ReachabilityInterface.Method.subscribeTarget: try parameters(target),
            ReachabilityInterface.Method.getMetrics: ["text": "reachd_interface_up{device=\"\(interface)\"} 1\n# \u{1b}]0;pwned\u{7}\n"],
            SystemdServiceInterface.Method.reload: [
                "error": ReachabilityInterface.Error.reloadRefused,
                "parameters": ["reason": "reachd.toml:3: url: \u{1b}[31mbad\u{202E}\nreachd.toml:4: \u{9b}worse"],
            ],
        ]
    }

    /// The raw scalars in `text` a terminal or a line-based reader would act on, described.
    static func raw(in text: String) -> [String] {
        text.unicodeScalars.compactMap { scalar in
            let value = scalar.value
            let category = scalar.properties.generalCategory
            let acted = (value < 0x20 && value != 0x0A) || (0x7F...0x9F).contains(value) || category == .format
                || category == .lineSeparator || category == .paragraphSeparator || scalar.properties.isBidiControl
            return acted ? "U+" + String(value, radix: 16, uppercase: true) : nil
        }
    }

    func testEveryCommandPrintsHostileTextEscaped() throws {
        let cases: [(arguments: [String], shows: [String])] = [
            (["status"], ["Portal:       captive, log in at \(Self.shownPortalURL); API \(Self.shownAPIURI); venue https://venue.test/\\x00\\r\\x07",
                          "Primary:      \(Self.shownInterface) (wiredEthernet)", #"Gateways:     10.0.0.1\x1b[2J"#,
                          "Available:    \(Self.shownInterface)", #"(instance run\x1b]52;c;cHduZWQ=\x07)"#]),
            (["interfaces"], [Self.shownInterface, #"veth\x1b[5m"#, #"up\x07"#, #"10.0.0.2\u{202E}/24"#,
                              "\(Self.shownInterface): portal: captive, log in at \(Self.shownPortalURL)"]),
            (["probe"], ["\(Self.shownInterface): IPv4 portal, IPv6 unknown; portal: captive, log in at \(Self.shownPortalURL)"]),
            (["check", "host.test"], [#"host.test\x1b[2J: reachable via "# + Self.shownInterface, #"192.0.2.7\x1b[8m"#, #"10.0.0.1\u{9B}"#, #"10.0.0.2\r"#]),
            (["check", "--watch", "host.test"], [#"host.test\x1b[2J: reachable via "# + Self.shownInterface]),
            (["watch"], [" via \(Self.shownInterface) (wiredEthernet) gw " + #"10.0.0.1\x1b[2J"#]),
            (["metrics"], [#"reachd_interface_up{device="eth\x1b[31m0\u{202E}"} 1"#, #"# \x1b]0;pwned\x07"#]),
            (["reload"], [#"reachd.toml:3: url: \x1b[31mbad\u{202E}"#, #"reachd.toml:4: \u{9B}worse"#]),
            (["wait", "--timeout", "5"], []),
            (["status", "--json"], []), (["interfaces", "--json"], []), (["probe", "--json"], []),
            (["check", "--json", "host.test"], []), (["watch", "--json"], []),
        ]
        for test in cases {
            let streaming = test.arguments.contains("watch") || test.arguments.contains("--watch")
            let command = (streaming ? ["timeout", "2"] : []) + [Paths.product("reachctl")] + test.arguments + ["--socket", socket]
            let result = try Command.run(command, unset: ["REACHD_SOCKET"])
            let name = test.arguments.joined(separator: " ")
            XCTAssertFalse(result.stdout.isEmpty && result.stderr.isEmpty && !test.arguments.contains("wait"), "\(name): printed nothing")
            XCTAssertEqual(Self.raw(in: result.stdout), [], "\(name) stdout: \(result.stdout.debugDescription)")
            XCTAssertEqual(Self.raw(in: result.stderr), [], "\(name) stderr: \(result.stderr.debugDescription)")
            XCTAssertFalse(result.stdout.split(separator: "\n").contains { $0.hasPrefix("WATCHDOG=") || $0.hasPrefix(" WATCHDOG=") || $0.hasPrefix("STATUS=") },
                           "\(name): a forged line")
            let output = result.stdout + result.stderr
            for shown in test.shows { XCTAssertTrue(output.contains(shown), "\(name): missing \(shown)\nin\n\(output)") }
        }
    }

    /// `--json` stays JSON that decodes to exactly what reachd sent; only the way the
    /// dangerous scalars are written differs (`\u001b`, `\u202e`).
    func testJSONKeepsTheValues() throws {
        let status = try reachctl(["status", "--json", "--socket", socket])
        XCTAssertEqual(status.status, 0, status.stderr)
        let reply = try JSONDecoder().decode(StatusReply.self, from: Data(status.stdout.utf8))
        XCTAssertEqual(reply.path.captivePortal?.userPortalURL, Self.portalURL)
        XCTAssertEqual(reply.path.captivePortal?.apiURI, Self.apiURI)
        XCTAssertEqual(reply.path.primaryInterface, Self.interface)
        XCTAssertTrue(status.stdout.contains(#""apiURI" : "https://api.test/\u009b2J\u2028x""#), status.stdout)
        XCTAssertTrue(status.stdout.contains(#""primaryInterface" : "eth\u001b[31m0\u202e""#), status.stdout)

        let interfaces = try reachctl(["interfaces", "--json", "--socket", socket])
        let listed = try JSONDecoder().decode(ListInterfacesReply.self, from: Data(interfaces.stdout.utf8))
        XCTAssertEqual(listed.interfaces.first?.name, Self.interface)
        XCTAssertEqual(listed.interfaces.first?.addresses.first?.address, "10.0.0.2\u{202E}")
    }
}

/// The real reachd with an interface whose name is hostile text (the kernel refuses only
/// `/`, `:` and whitespace; anyone may name links in a namespace of their own): `STATUS=`,
/// the log, `reachctl status` and `interfaces` and the metrics show it escaped.
final class HostileInterfaceNameTests: DaemonTestCase {
    func testInterfaceNameIsEscapedWhereverReachdWritesIt() throws {
        let name = "e\u{1b}]0;x\u{7}\u{202E}"  // 10 bytes of the 15 a name may have
        let shown = #"e\x1b]0;x\x07\u{202E}"#
        try topology.addPair(hostName: name, routerName: "hostile0", prefix: "10.78.0")
        try topology.host.ip("route", "add", "default", "via", "10.78.0.1", "dev", name)
        let (daemon, _) = try startDaemon()

        let statuses = daemon.notify.statuses
        XCTAssertTrue(statuses.contains { $0.hasPrefix("reachable via \(shown) (") }, "\(statuses)")
        for message in daemon.notify.messages { XCTAssertEqual(HostileTextOutputTests.raw(in: message), [], message.debugDescription) }

        let status = try reachctl(["status", "--socket", daemon.socketPath])
        XCTAssertEqual(status.status, 0, status.stderr)
        XCTAssertTrue(status.stdout.contains("Primary:      \(shown) ("), status.stdout)
        let interfaces = try reachctl(["interfaces", "--socket", daemon.socketPath])
        XCTAssertTrue(interfaces.stdout.contains(shown), interfaces.stdout)
        let metrics = try reachctl(["metrics", "--socket", daemon.socketPath])
        // Escaped by reachd, its backslashes doubled by the exposition format.
        XCTAssertTrue(metrics.stdout.contains(#"reachd_path_info{primary_interface="e\\x1b]0;x\\x07\\u{202E}""#), metrics.stdout)
        for output in [status.stdout, interfaces.stdout, metrics.stdout] {
            XCTAssertEqual(HostileTextOutputTests.raw(in: output), [], output.debugDescription)
        }

        let log = daemon.log
        XCTAssertTrue(log.contains("initial state: reachable via \(shown) ("), log)
        XCTAssertEqual(HostileTextOutputTests.raw(in: log), [], log.debugDescription)
    }
}
