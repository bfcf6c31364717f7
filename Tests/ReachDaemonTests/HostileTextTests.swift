import Foundation
import Logging
import ReachabilityCore
@testable import ReachConnectivity
@testable import ReachMetrics
@testable import ReachSystemd
import TestSupport
import X509
import XCTest

/// Text from the network (a portal URL, an interface name, a certificate's names), hostile,
/// through every path reachd writes it: the log (plain and journal), journal fields,
/// `STATUS=`, metric labels and trust reasons. Nothing a terminal or a line-based reader acts
/// on may come out raw, and nothing may start a line (a record, an assignment) of its own.
/// (reachctl's rendering: `HostileTextOutputTests`.)
final class HostileTextTests: XCTestCase {
    /// What a café's network may serve.
    static let hostile: [(name: String, text: String)] = [
        ("OSC title + BEL", "https://portal.test/\u{1b}]0;pwned\u{7}"),
        ("a hostile portal URL", "https://portal.test/\u{1b}]0;pwned\u{7}\n WATCHDOG=trigger\nSTATUS=forged"),
        ("CSI clear screen", "https://portal.test/\u{1b}[2J\u{1b}[H"),
        ("CR overwrite", "https://portal.test/\rreachable via eth0"),
        ("forged lines", "x\nWATCHDOG=trigger\nSTATUS=forged"),
        ("C1 CSI", "https://portal.test/\u{9b}31m"),
        ("right-to-left override", "https://portal.test/\u{202E}lmth.nigol"),
        ("line separator", "https://portal.test/\u{2028}STATUS=forged"),
        ("NUL", "https://portal.test/\u{0}hidden"),
        ("zero-width and BOM", "https://po\u{200B}rtal.test/\u{FEFF}"),
    ]

    /// The raw scalars in `text` a reader would act on (controls, format and bidi characters,
    /// separators), described; empty when the text is inert. `allowing` lists exceptions
    /// (a log record's final newline is split off before).
    static func raw(in text: some StringProtocol) -> [String] {
        text.unicodeScalars.compactMap { scalar in
            let value = scalar.value
            let category = scalar.properties.generalCategory
            let acted = value < 0x20 || (0x7F...0x9F).contains(value) || category == .format || category == .lineSeparator
                || category == .paragraphSeparator || scalar.properties.isBidiControl
            return acted ? "U+" + String(value, radix: 16, uppercase: true) : nil
        }
    }

    /// Asserts that `output` is one line ending in a newline, inert otherwise.
    private func assertOneRecord(_ output: String, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(output.hasSuffix("\n"), "\(what): \(output.debugDescription)", file: file, line: line)
        XCTAssertEqual(Self.raw(in: output.dropLast()), [], "\(what): \(output.debugDescription)", file: file, line: line)
    }

    // MARK: The log

    func testLogLinesStayOneInertLine() {
        for (name, text) in Self.hostile {
            for style in [LogOutputStyle.plain, .journal] {
                let output = LogFormat.format(style: style, level: .info, label: "reachd", message: "path changed: behind a captive portal (\(text))",
                                              metadata: ["portal": .string(text), "list": [.string(text)], "interface": "eth0"])
                assertOneRecord(output, "\(name), \(style)")
            }
        }
        // The headline case, exactly: one record, the forged assignments visible inside it.
        let text = Self.hostile[1].text
        XCTAssertEqual(
            LogFormat.format(style: .plain, level: .info, label: "reachd", message: "portal \(text)", metadata: ["url": .string(text)]),
            #"1970-01-01T00:00:00Z info reachd: portal https://portal.test/\x1b]0;pwned\x07\n WATCHDOG=trigger\nSTATUS=forged"#
                + #" url="https://portal.test/\x1b]0;pwned\x07\n WATCHDOG=trigger\nSTATUS=forged""# + "\n")
        XCTAssertEqual(
            LogFormat.format(style: .journal, level: .notice, label: "reachd", message: "a\nb", metadata: ["q": "say \"hi\" \\ \n"]),
            #"<5>a\nb q="say \"hi\" \\ \n""# + "\n", "a value's quote and backslash stay unambiguous")
    }

    /// The handler itself (plain style, as reachd writes to a terminal or a file).
    func testHandlerWritesOneLinePerRecord() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        defer { close(fds[0]) }
        let logger = Logger(label: "reachd") { ReachdLogHandler(label: $0, style: .plain, levelSwitch: LogLevelSwitch(.info), fileDescriptor: fds[1]) }
        for (_, text) in Self.hostile { logger.info("captive portal at \(text)", metadata: ["url": .string(text)]) }
        close(fds[1])
        let output = String(decoding: FileHandle(fileDescriptor: fds[0]).readDataToEndOfFile(), as: UTF8.self)
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        XCTAssertEqual(lines.count, Self.hostile.count, output)
        for line in lines {
            XCTAssertTrue(line.contains(" info reachd: captive portal at "), String(line))
            XCTAssertEqual(Self.raw(in: line), [], String(line))
        }
    }

    // MARK: Journal fields, STATUS=

    private static func change(portalURL: String, interface: String = "eth0") -> AnnouncedChange {
        let path = Path(status: .satisfied, reachability: .reachableViaWired, flags: [.reachable], primaryInterface: interface,
                        primaryInterfaceType: .wiredEthernet, gateways: ["10.0.0.1"], supportsIPv4: true, connectivity: .portal,
                        captivePortal: CaptivePortal(apiURI: "https://api.test/\(portalURL)", captive: true, userPortalURL: portalURL))
        return AnnouncedChange(sequence: 7, changes: [.connectivity], path: path)
    }

    func testJournalFieldsAreOneInertValueEach() {
        for (name, text) in Self.hostile {
            let change = Self.change(portalURL: text, interface: "eth\u{1b}[31m0")
            let fields = LogFormat.journalFields(JournalTrail.fields(change))
            XCTAssertTrue(fields.contains { $0.0 == "REACHD_CAPTIVE_PORTAL" }, name)
            for (field, value) in fields {
                XCTAssertTrue(LogFormat.isJournalField(field), "\(name): \(field)")
                XCTAssertEqual(Self.raw(in: value), [], "\(name): \(field)=\(value.debugDescription)")
            }
            // The entry's MESSAGE as the handler builds it.
            XCTAssertEqual(Self.raw(in: LogFormat.body(message: change.line, metadata: JournalTrail.fields(change))), [], name)
        }
        let fields = LogFormat.journalFields(JournalTrail.fields(Self.change(portalURL: Self.hostile[1].text)))
        XCTAssertEqual(fields.first { $0.0 == "REACHD_CAPTIVE_PORTAL" }?.1, #"https://portal.test/\x1b]0;pwned\x07\n WATCHDOG=trigger\nSTATUS=forged"#)
    }

    func testStatusDatagramHasOneAssignmentPerLine() {
        for (name, text) in Self.hostile {
            let change = Self.change(portalURL: text)
            for lines in [["STATUS=\(change.status)"], ["READY=1", "STATUS=\(change.status)"], ["READY=1", "STATUS=config reload failed: \(text)"]] {
                let datagram = SystemdNotifier.datagram(lines)
                let sent = datagram.split(separator: "\n", omittingEmptySubsequences: false)
                XCTAssertEqual(sent.count, lines.count, "\(name): \(datagram.debugDescription)")
                XCTAssertEqual(sent.map { $0.prefix { $0 != "=" } }, lines.map { $0.prefix { $0 != "=" } }, name)
                for line in sent { XCTAssertEqual(Self.raw(in: line), [], "\(name): \(line.debugDescription)") }
            }
        }
        XCTAssertEqual(
            SystemdNotifier.datagram(["STATUS=\(Self.change(portalURL: Self.hostile[1].text).status)"]),
            #"STATUS=reachable via eth0 (wiredEthernet) gw 10.0.0.1, IPv4, behind a captive portal (https://portal.test/\x1b]0;pwned\x07\n WATCHDOG=trigger\nSTATUS=forged)"#)
        let long = SystemdNotifier.datagram(["STATUS=" + String(repeating: "x", count: 5000)])
        XCTAssertEqual(long.unicodeScalars.count, SystemdNotifier.lineLimit, "STATUS= is bounded")
        XCTAssertTrue(long.hasSuffix("…"))
    }

    /// The real `sd_notify` to a listening socket, as systemd receives it.
    func testSdNotifyDatagramCarriesNoInjectedAssignment() throws {
        let directory = try Paths.makeTemporaryDirectory("reachd-notify")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let listener = try NotifyListener(directory: directory)
        setenv("NOTIFY_SOCKET", listener.path, 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        let notifier = SystemdNotifier()
        let status = Self.change(portalURL: Self.hostile[1].text).status
        notifier.status(status)
        notifier.ready(status: status)
        XCTAssertTrue(listener.waitUntil(timeout: 5) { $0.contains("READY=1") }, "\(listener.messages)")
        XCTAssertEqual(listener.messages.count, 2)
        XCTAssertEqual(listener.lines.filter { !$0.hasPrefix("STATUS=") && $0 != "READY=1" }, [], "injected: \(listener.lines)")
        XCTAssertEqual(listener.statuses.count, 2, "\(listener.lines)")
        for message in listener.messages { XCTAssertEqual(Self.raw(in: message.replacingOccurrences(of: "READY=1\n", with: "")), [], message) }
    }

    // MARK: Metrics

    private static func facts(interface: String = "eth0", portal: CaptivePortal?, connectivity: Connectivity = .full) -> MetricsFacts {
        var snapshot = makeSnapshot()
        snapshot.links[2]?.name = interface
        var facts = InterfaceConnectivity(ipv4: connectivity)
        facts.captivePortal = portal
        return MetricsFacts(state: ReachabilityState(snapshot: snapshot, policy: InterfacePolicy(), connectivity: [2: facts]),
                            sequence: 1, lastChange: 0, subscribers: 0, refusals: [:], netlinkEvents: 0, resyncs: [:], probing: true)
    }

    func testMetricLabelsAreInert() {
        for (name, text) in Self.hostile {
            let exposition = MetricsExposition.text(Self.facts(interface: "e\(text)", portal: nil))
            for line in exposition.split(separator: "\n") { XCTAssertEqual(Self.raw(in: line), [], "\(name): \(line.debugDescription)") }
            XCTAssertEqual(exposition.split(separator: "\n").filter { $0.hasPrefix("reachd_interface_up{") }.count, 3, "\(name): no line forged")
        }
        let exposition = MetricsExposition.text(Self.facts(interface: "eth\u{1b}[31m0\u{202E}", portal: nil))
        // Escaped by UntrustedText, then its backslashes by the exposition format.
        XCTAssertTrue(exposition.contains(#"reachd_interface_up{device="eth\\x1b[31m0\\u{202E}"} 1"#), exposition)
    }

    /// The series say what the API said, not that an API was announced.
    func testCaptivePortalSeriesSaysWhatTheAPISaid() throws {
        let cases: [(name: String, portal: CaptivePortal?, connectivity: Connectivity, expected: Double)] = [
            ("no portal", nil, .full, 0),
            ("announced, not asked", CaptivePortal(apiURI: "https://api.test/"), .full, 0),
            ("API: captive false (session open)", CaptivePortal(apiURI: "https://api.test/", captive: false, secondsRemaining: 600), .full, 0),
            ("API: captive true", CaptivePortal(apiURI: "https://api.test/", captive: true, userPortalURL: "https://portal.test/"), .portal, 1),
            ("probe redirected, no API", CaptivePortal(captive: true, userPortalURL: "https://portal.test/"), .portal, 1),
        ]
        for test in cases {
            let exposition = MetricsExposition.text(Self.facts(portal: test.portal, connectivity: test.connectivity))
            let sample = exposition.split(separator: "\n").first { $0.hasPrefix("reachd_path_captive_portal") }
            XCTAssertEqual(sample?.split(separator: " ").last.flatMap { Double($0) }, test.expected, "\(test.name): \(sample ?? "none")")
        }
    }

    // MARK: Trust reasons (finding 10)

    func testTrustReasonsAreBoundedAndLogInert() throws {
        let hostileName = "evil\u{1b}]0;pwned\u{7}\r\nWATCHDOG=trigger\u{202E}"
        // A dNSName is an IA5String: ASCII only, controls included.
        let sans = (0..<6000).map { "name\($0).evil\u{1b}]0;pwned\u{7}\r\n.test" }
        let crowded = try TrustFixtures.make(hostileName, dns: sans).certificate
        let expired = try TrustFixtures.make(hostileName, dns: ["probe.example"], from: TrustFixtures.now - 700 * TrustFixtures.day,
                                             until: TrustFixtures.now - TrustFixtures.day).certificate
        let reasons = [
            TrustEvaluation.verdict(chain: [crowded], host: "probe.example", policy: .systemDefault, anchors: TrustAnchors([crowded]),
                                    now: TrustFixtures.now).description,
            TrustEvaluation.verdict(chain: [expired], host: "probe.example", policy: try .init(validatesDomainName: false),
                                    anchors: TrustAnchors([expired]), now: TrustFixtures.now).description,
            TrustEvaluation.verdict(chain: [expired], host: "probe.example", policy: .systemDefault, anchors: TrustAnchors([expired]),
                                    now: TrustFixtures.now).description,
        ]
        XCTAssertTrue(reasons[0].hasSuffix(" … and 5996 more)"), reasons[0])
        XCTAssertTrue(reasons[1].hasSuffix(#"pwned\#u{7}\#r\#nWATCHDOG=trigger\#u{202E})"#), reasons[1])
        XCTAssertTrue(reasons[2].hasPrefix("certificate expired on "), reasons[2])
        for reason in reasons {
            XCTAssertLessThan(reason.utf8.count, 1200, "bounded: \(reason.prefix(300))")
            // As ConnectivityMonitor logs a probe round at debug level.
            let line = LogFormat.format(style: .plain, level: .debug, label: "reachd", message: "probe round: none",
                                        metadata: ["https": .string("untrusted: \(reason)"), "interface": "eth0"])
            assertOneRecord(line, reason)
            // Escaped once, by the log (a distinguished name's own `\;` shows doubled).
            XCTAssertTrue(line.contains(#"evil\x1b]0"#) && line.contains(#"pwned\x07\r\n"#), line)
        }
    }
}
