import Logging
import NIOHTTP1
import ReachabilityCore
@testable import ReachConfiguration
@testable import ReachMetrics
@testable import ReachSystemd
import TestSupport
import XCTest

/// The metrics as Prometheus' own parser reads them, for a satisfied and an unsatisfied
/// host, with and without probes; and `promtool check metrics` on the text.
final class MetricsExpositionTests: XCTestCase {
    private func facts(_ snapshot: NetworkSnapshot, connectivity: ConnectivityTable = [:], probing: Bool = false) -> MetricsFacts {
        MetricsFacts(
            state: ReachabilityState(snapshot: snapshot, policy: InterfacePolicy(), connectivity: connectivity), sequence: 4,
            lastChange: 1_700_000_000.5, subscribers: 3, refusals: [.connectionsPerUser: 2],
            netlinkEvents: 120, resyncs: ["lost-events": 1], probing: probing
        )
    }

    private static var unsatisfied: NetworkSnapshot {
        var snapshot = makeSnapshot()
        snapshot.defaultRoutes = []
        snapshot.lookups = [:]
        return snapshot
    }

    /// An interface whose TCP traffic made `estimate`.
    private static func measured(_ estimate: LinkQualityEstimate) -> InterfaceConnectivity {
        var connectivity = InterfaceConnectivity()
        connectivity.linkQuality = estimate
        return connectivity
    }

    func testSamples() throws {
        try requirePrerequisite(try Command.run(["python3", "-c", "import prometheus_client"]).status == 0,
                                "python3 prometheus_client not available (pip install prometheus-client)")
        var full = InterfaceConnectivity()
        full.ipv4 = .full
        let cases: [(name: String, facts: MetricsFacts, present: [String], absent: [String])] = [
            ("satisfied over eth0", facts(makeSnapshot()), [
                #"reachd_path_satisfied{} 1"#, #"reachd_path_status{status="satisfied"} 1"#, #"reachd_path_status{status="unsatisfied"} 0"#,
                #"reachd_path_reachability{reachability="reachableViaWired"} 1"#, #"reachd_path_reachability{reachability="notReachable"} 0"#,
                #"reachd_path_info{primary_interface="eth0",primary_type="wiredEthernet",unsatisfied_reason=""} 1"#,
                #"reachd_path_supports{family="ipv4"} 1"#, #"reachd_path_supports{family="ipv6"} 0"#, #"reachd_path_supports{family="dns"} 1"#,
                #"reachd_interface_usable{device="eth0"} 1"#, #"reachd_interface_usable{device="wlan0"} 1"#, #"reachd_interface_usable{device="lo"} 0"#,
                #"reachd_interface_carrier{device="wlan0"} 1"#, #"reachd_interface_info{device="wlan0",ignored="false",kind="",type="wifi"} 1"#,
                #"reachd_path_changes_total{} 3"#, "# TYPE reachd_path_changes counter", #"reachd_last_change_timestamp_seconds{} 1.7e+09"#,
                #"reachd_subscribers{} 3"#, #"reachd_netlink_events_total{} 120"#,
                #"reachd_netlink_resyncs_total{reason="lost-events"} 1"#, #"reachd_netlink_resyncs_total{reason="receive-failure"} 0"#,
                #"reachd_connections_refused_total{reason="connections per user"} 2"#, "# TYPE reachd_build_info gauge",
            ], [#"reachd_path_connectivity{state="unknown"} 1"#]),
            ("no route", facts(Self.unsatisfied), [
                #"reachd_path_satisfied{} 0"#, #"reachd_path_status{status="unsatisfied"} 1"#,
                #"reachd_path_reachability{reachability="notReachable"} 1"#,
                #"reachd_path_info{primary_interface="",primary_type="",unsatisfied_reason="noRoute"} 1"#,
                #"reachd_path_supports{family="ipv4"} 0"#, #"reachd_interface_usable{device="eth0"} 1"#, #"reachd_interface_up{device="eth0"} 1"#,
            ], [#"reachd_path_satisfied{} 1"#]),
            ("eth0's gateway failed, wlan0's answers", facts({
                var snapshot = makeSnapshot()
                snapshot.gatewayNeighbours = [
                    GatewayKey(interfaceIndex: 2, address: IPAddress("10.0.0.1")!): GatewayNeighbour(state: .failed, since: 1),
                    GatewayKey(interfaceIndex: 3, address: IPAddress("192.168.1.1")!): GatewayNeighbour(state: .stale, since: 1),
                ]
                return snapshot
            }()), [
                #"reachd_gateway_reachable{device="eth0",gateway="10.0.0.1"} 0"#, #"reachd_gateway_reachable{device="wlan0",gateway="192.168.1.1"} 1"#,
            ], [#"reachd_gateway_reachable{device="lo",gateway="10.0.0.1"} 0"#]),
            ("eth0's TCP traffic stalled, without probes", facts(makeSnapshot(), connectivity: [2: InterfaceConnectivity(dataStall: DataStall(since: 5, sockets: 4, destinations: 3, users: 2))]), [
                #"reachd_interface_data_stall{device="eth0"} 1"#, #"reachd_interface_data_stall{device="wlan0"} 0"#,
            ], [#"reachd_interface_data_stall{device="eth0"} 0"#]),
            ("link quality on eth0 (wired) and wlan0 (Wi-Fi, its radio read)", facts(makeSnapshot(), connectivity: [
                2: Self.measured(LinkQualityEstimate(linkQuality: .good, minimumRTT: 1, rtt: 2, rttSamples: 9, deliveryRate: 90_000_000, rateSamples: 5)),
                3: Self.measured(LinkQualityEstimate(linkQuality: .moderate, rtt: 30, rttSamples: 6, lossPercent: 1.5, segments: 400,
                                                     signal: -83, transmitBitRate: 6_000_000)),
            ]), [
                #"reachd_interface_link_quality{device="eth0"} 3"#, #"reachd_interface_rtt_seconds{device="eth0"} 0.002"#,
                #"reachd_interface_delivery_rate_bits_per_second{device="eth0"} 9e+07"#,
                #"reachd_interface_link_quality{device="wlan0"} 2"#, #"reachd_interface_loss_ratio{device="wlan0"} 0.015"#,
                #"reachd_interface_wifi_signal_dbm{device="wlan0"} -83"#, #"reachd_interface_wifi_bitrate_bits_per_second{device="wlan0"} 6e+06"#,
            ], [#"reachd_interface_wifi_signal_dbm{device="eth0"} -83"#, #"reachd_interface_delivery_rate_bits_per_second{device="wlan0"} 0"#]),
            ("probing, eth0 full over IPv4", facts(makeSnapshot(), connectivity: [2: full], probing: true), [
                #"reachd_path_connectivity{state="full"} 1"#, #"reachd_path_connectivity{state="portal"} 0"#,
                #"reachd_path_captive_portal{} 0"#, #"reachd_interface_connectivity{device="eth0",family="ipv4",state="full"} 1"#,
                #"reachd_probe_success{device="eth0",family="ipv4"} 1"#,
            ], [#"reachd_probe_success{device="eth0",family="ipv6"} 0"#, #"reachd_probe_success{device="wlan0",family="ipv4"} 0"#]),
        ]
        for test in cases {
            let text = MetricsExposition.text(test.facts)
            let samples = try PrometheusTools.samples(text)
            for line in test.present { XCTAssertTrue(samples.contains(line), "\(test.name): missing \(line) in\n\(samples.sorted().joined(separator: "\n"))") }
            for line in test.absent { XCTAssertFalse(samples.contains(line), "\(test.name): \(line) should not be there") }
            XCTAssertFalse(text.contains("\n\n"), "\(test.name): no blank lines")
        }
    }

    /// promtool's linter accepts the names, types and help texts.
    func testPromtoolAccepts() throws {
        let promtool = try XCTUnwrap(PrometheusTools.promtool, "promtool not available (scripts/bootstrap --test unpacks it)")
        for facts in [facts(makeSnapshot()), facts(Self.unsatisfied, probing: true)] {
            let checked = try PrometheusTools.check(MetricsExposition.text(facts), promtool: promtool)
            XCTAssertEqual(checked.status, 0, checked.output)
            XCTAssertEqual(checked.output, "", "promtool has no complaint")
        }
    }
}

/// What the endpoint answers, and which listen addresses the configuration takes.
final class MetricsRequestTests: XCTestCase {
    func testRequests() {
        let cases: [(HTTPMethod, String, MetricsRequest)] = [
            (.GET, "/metrics", .metrics(headOnly: false)), (.HEAD, "/metrics", .metrics(headOnly: true)),
            (.GET, "/metrics?name[]=x", .metrics(headOnly: false)), (.GET, "/", .notFound), (.GET, "/metrics/", .notFound),
            (.HEAD, "/other", .notFound), (.POST, "/metrics", .methodNotAllowed), (.PUT, "/", .methodNotAllowed),
            (.DELETE, "/metrics", .methodNotAllowed),
        ]
        for (method, uri, expected) in cases {
            XCTAssertEqual(MetricsRequest(method: method, uri: uri), expected, "\(method) \(uri)")
        }
    }

    func testListenAddresses() {
        let cases: [(String, MetricsListenAddress?)] = [
            ("127.0.0.1:9799", .tcp(address: IPAddress("127.0.0.1")!, port: 9799)),
            ("[::1]:9799", .tcp(address: IPAddress("::1")!, port: 9799)),
            ("0.0.0.0:1", .tcp(address: IPAddress("0.0.0.0")!, port: 1)),
            ("/run/reachd/metrics.sock", .unix(path: "/run/reachd/metrics.sock")),
            ("::1:9799", nil), ("localhost:9799", nil), ("127.0.0.1", nil), ("127.0.0.1:65536", nil), ("127.0.0.1:0", nil),
            ("relative.sock", nil), ("/run/reachd/", nil), ("/" + String(repeating: "a", count: 107), nil), ("", nil),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(MetricsListenAddress(text), expected, text)
            if let expected { XCTAssertEqual(expected.description, text) }
        }
    }
}

/// The journal trail's entries, field by field, and how a record with journal fields is
/// written as text (without them).
final class JournalTrailTests: XCTestCase {
    private func rendered(_ metadata: Logger.Metadata) -> [String] {
        LogFormat.journalFields(metadata).map { "\($0.0)=\($0.1)" }
    }

    func testFields() {
        let satisfied = makeState().path
        var portal = makeState().path
        portal.connectivity = .portal
        portal.captivePortal = CaptivePortal(userPortalURL: "https://portal.test/login")
        let unsatisfied = ReachabilityState(snapshot: {
            var snapshot = makeSnapshot()
            snapshot.defaultRoutes = []
            snapshot.lookups = [:]
            return snapshot
        }(), policy: InterfacePolicy()).path
        let cases: [(name: String, change: AnnouncedChange, expected: [String])] = [
            ("the path changed", AnnouncedChange(sequence: 7, changes: [.gateways], path: satisfied), [
                "MESSAGE_ID=\(JournalTrail.pathChanged)", "REACHD_CHANGES=gateways", "REACHD_CONNECTIVITY=unknown", "REACHD_PRIMARY=eth0",
                "REACHD_PRIMARY_TYPE=wiredEthernet", "REACHD_REACHABILITY=reachableViaWired", "REACHD_SEQUENCE=7", "REACHD_STATUS=satisfied",
            ]),
            ("unsatisfied: a reason, no primary", AnnouncedChange(sequence: 8, changes: [.status, .reachability], path: unsatisfied), [
                "MESSAGE_ID=\(JournalTrail.pathChanged)", "REACHD_CHANGES=status,reachability", "REACHD_CONNECTIVITY=local",
                "REACHD_REACHABILITY=notReachable", "REACHD_REASON=noRoute", "REACHD_SEQUENCE=8", "REACHD_STATUS=unsatisfied",
            ]),
            ("a gateway unreachable: which one", AnnouncedChange(sequence: 10, changes: [.status], path: Path(
                status: .unsatisfied, unsatisfiedReason: .gatewayUnreachable, reachability: .notReachable, gateways: ["10.0.0.1"], connectivity: .local
            )), [
                "MESSAGE_ID=\(JournalTrail.pathChanged)", "REACHD_CHANGES=status", "REACHD_CONNECTIVITY=local", "REACHD_GATEWAY_UNREACHABLE=10.0.0.1",
                "REACHD_REACHABILITY=notReachable", "REACHD_REASON=gatewayUnreachable", "REACHD_SEQUENCE=10", "REACHD_STATUS=unsatisfied",
            ]),
            ("a data stall: connectivity and its cause", AnnouncedChange(sequence: 11, changes: [.connectivity], path: {
                var stalled = satisfied
                stalled.connectivity = .limited
                stalled.connectivityCause = .dataStall
                return stalled
            }()), [
                "MESSAGE_ID=\(JournalTrail.connectivityChanged)", "REACHD_CHANGES=connectivity", "REACHD_CONNECTIVITY=limited",
                "REACHD_CONNECTIVITY_CAUSE=dataStall", "REACHD_PRIMARY=eth0", "REACHD_PRIMARY_TYPE=wiredEthernet",
                "REACHD_REACHABILITY=reachableViaWired", "REACHD_SEQUENCE=11", "REACHD_STATUS=satisfied",
            ]),
            ("only connectivity: its own ID, and the portal", AnnouncedChange(sequence: 9, changes: [.connectivity], path: portal), [
                "MESSAGE_ID=\(JournalTrail.connectivityChanged)", "REACHD_CAPTIVE_PORTAL=https://portal.test/login", "REACHD_CHANGES=connectivity",
                "REACHD_CONNECTIVITY=portal", "REACHD_PRIMARY=eth0", "REACHD_PRIMARY_TYPE=wiredEthernet", "REACHD_REACHABILITY=reachableViaWired",
                "REACHD_SEQUENCE=9", "REACHD_STATUS=satisfied",
            ]),
        ]
        for test in cases {
            XCTAssertEqual(rendered(JournalTrail.fields(test.change)), test.expected, test.name)
        }
        XCTAssertEqual(rendered(JournalTrail.fields(limit: "connections per user", uid: 1000)),
                       ["MESSAGE_ID=\(JournalTrail.limitHit)", "REACHD_LIMIT=connections per user", "REACHD_UID=1000"])
    }

    /// Journal fields never reach the text: the plain line of a change is what it was.
    func testJournalFieldsStayOutOfText() {
        let metadata = JournalTrail.fields(limit: "connections", uid: 7).merging(["peer": "uid 7"]) { $1 }
        XCTAssertEqual(LogFormat.format(style: .plain, level: .notice, label: "reachd", message: "refused", metadata: metadata, secondsSinceEpoch: 0),
                       "1970-01-01T00:00:00Z notice reachd: refused peer=\"uid 7\"\n")
        XCTAssertEqual(LogFormat.format(style: .journal, level: .notice, label: "reachd", message: "refused", metadata: metadata), "<5>refused peer=\"uid 7\"\n")
        let keys: [(String, Bool)] = [("MESSAGE_ID", true), ("REACHD_STATUS", true), ("R2D2", true), ("peer", false), ("Reachd", false),
                                      ("_PRIVATE", false), ("REACHD-STATUS", false), ("", false)]
        for (key, expected) in keys { XCTAssertEqual(LogFormat.isJournalField(key), expected, key) }
    }

    /// The catalog shipped for `journalctl -x` explains exactly the four IDs.
    func testCatalogNamesEveryID() throws {
        let catalog = try String(contentsOfFile: Paths.repository.appendingPathComponent("systemd/reachd.catalog").path, encoding: .utf8)
        let ids = catalog.split(separator: "\n").filter { $0.hasPrefix("-- ") }.map { String($0.dropFirst(3)) }
        XCTAssertEqual(ids, [JournalTrail.pathChanged, JournalTrail.connectivityChanged, JournalTrail.limitHit, JournalTrail.targetChanged])
    }
}
