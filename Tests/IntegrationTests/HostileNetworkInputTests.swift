import Foundation
import ReachClient
import ReachProtocol
import ReachabilityCore
import TestSupport
import XCTest

/// What a hostile network (the café's router) sends reachd, from inside the test's
/// router namespace: RA option 37 with a port out of range, RFC 8908 answers with numbers
/// that trapped, a probe server sending `100 Continue` forever, and `Location` headers with
/// controls, bidi overrides and foreign schemes. `hostile_http.py` writes the raw bytes;
/// `probe.test` and `portal.test` name the router (`/etc/netns/NAME/hosts`). Nothing
/// leaves the two namespaces.
final class HostileNetworkInputTests: DaemonTestCase {
    private var server: Process?
    private var work: String!
    private var state: String { work + "/state.json" }
    private var certificate: String { work + "/cert.pem" }

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard Command.exists("openssl") else { return XCTFail("openssl is needed (scripts/bootstrap --test installs it)") }
        work = try temporaryDirectory("reachd-hostile")
        try topology.hostFiles(hosts: "127.0.0.1 localhost\n10.77.0.1 probe.test portal.test\n", nsswitch: "hosts: files\n")
        let madeCertificate = try TestCertificate(in: work, commonName: "portal.test")
        try setState(["http": "204"])
        server = try topology.launchRouterServer("hostile_http.py", [state] + madeCertificate.serverArguments)
    }

    override func tearDown() {
        if let server {
            kill(server.processIdentifier, SIGKILL)  // children of the test runner have SIGTERM blocked
            server.waitUntilExit()
        }
        super.tearDown()
    }

    // MARK: Helpers

    private func setState(_ values: [String: String]) throws {
        let data = try JSONSerialization.data(withJSONObject: values)
        try data.write(to: URL(fileURLWithPath: state), options: .atomic)
    }

    /// Lines the server logged.
    private func serverLog() -> [String] {
        ((try? String(contentsOfFile: state + ".log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    private func startDaemon(_ toml: String) throws -> (DaemonProcess, ReachabilityClient, PathRecorder) {
        let path = work + "/reachd-\(UUID().uuidString.prefix(6)).toml"
        try toml.write(toFile: path, atomically: true, encoding: .utf8)
        let (daemon, client) = try startDaemon(extraArguments: ["--config", path])
        return (daemon, client, PathRecorder(client: client))
    }

    private var fetchAPI: String {
        """
        [captive-portal]
        fetch-api = true
        [captive-portal.trust]
        pinning = "certificate"
        pinned-certificates = ["\(certificate)"]
        """
    }

    private static let probing = """
        [probe]
        url = "http://probe.test/generate_204"
        timeout = 10
        initial-delay = 1
        maximum-delay = 2
        families = ["ipv4"]
        """


    private func sendRA(_ uri: String) throws {
        let sent = try runCommand(["ip", "netns", "exec", topology.router.name, "python3",
                                   Paths.repository.appendingPathComponent("Tests/Fixtures/send_ra.py").path, "eth0", uri])
        XCTAssertTrue(sent.hasPrefix("sent"), uri)
    }

    /// reachd's CPU time so far (user and system), in seconds.
    private func cpuSeconds(_ daemon: DaemonProcess) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(daemon.process.processIdentifier)/stat", encoding: .utf8)
        let fields = stat[stat.index(after: try XCTUnwrap(stat.lastIndex(of: ")")))...].split(separator: " ")
        // After the command: state is field 3, utime 14 and stime 15 (proc(5)), in ticks.
        let ticks = try XCTUnwrap(Double(fields[11])) + XCTUnwrap(Double(fields[12]))
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    // MARK: Router advertisements

    /// Option 37 with port 99999 used to kill reachd (SocketAddress trapped in the API
    /// fetch). Refused URIs are not reported at all; a usable one after them still is.
    func testUnusableAnnouncedAPIIsRefusedAndReachdSurvives() async throws {
        try topology.configureIPv4()
        try setState(["api": #"{"captive": true, "user-portal-url": "https://portal.test/login"}"#])
        let (daemon, client, recorder) = try startDaemon(fetchAPI)
        try await topology.waitForLinkLocal()
        for uri in ["https://10.77.0.1:99999/captive", "javascript:alert(1)", "http://portal.test/captive"] {
            try sendRA(uri)
            try await Task.sleep(for: .milliseconds(1500))
            XCTAssertTrue(daemon.process.isRunning, "reachd survives an RA announcing \(uri)")
            guard daemon.process.isRunning else { return }
            let eth0 = try await interface("eth0", from: client)
            XCTAssertNil(eth0?.captivePortal, "\(uri) is not reported")
        }
        XCTAssertFalse(serverLog().contains { $0.hasSuffix("https /captive") }, "nothing was fetched: \(serverLog())")

        // The same path with a usable URI: announced, fetched, captive.
        try sendRA("https://portal.test/captive")
        let captive = await expectPath(recorder, "a usable API is fetched", timeout: 8) { $0.connectivity == .portal }
        XCTAssertEqual(captive?.captivePortal?.apiURI, "https://portal.test/captive")
        XCTAssertEqual(captive?.captivePortal?.userPortalURL, "https://portal.test/login")
    }

    // MARK: RFC 8908 answers

    /// `seconds-remaining` of 1e10 used to overflow a timer, and 1e300 trapped converting to
    /// Int. Clamped: a year at most, never below 0. A portal URL with ESC, BEL
    /// and a newline (a forged sd_notify line) is refused with the whole answer.
    func testHostileAPIAnswers() async throws {
        try topology.configureIPv4()
        try setState(["api": #"{"captive": false, "seconds-remaining": 1e10}"#])
        let (daemon, client, recorder) = try startDaemon(fetchAPI)
        try await topology.waitForLinkLocal()
        try sendRA("https://portal.test/captive")
        let open = await expectPath(recorder, "an open session, its time clamped", timeout: 8) { $0.captivePortal?.captive == false }
        XCTAssertEqual(open?.captivePortal?.secondsRemaining, 31_536_000)
        XCTAssertTrue(daemon.process.isRunning)

        try setState(["api": #"{"captive": true, "user-portal-url": "https://portal.test/login", "seconds-remaining": 1e300, "bytes-remaining": -1e300}"#])
        let probed = try reachctl(["probe", "--socket", daemon.socketPath])
        XCTAssertTrue(daemon.process.isRunning, "reachd survives 1e300: \(probed.stderr)")
        let captive = await expectPath(recorder, "captive, numbers clamped") { $0.captivePortal?.captive == true }
        XCTAssertEqual(captive?.captivePortal?.secondsRemaining, 31_536_000)
        XCTAssertEqual(captive?.captivePortal?.bytesRemaining, 0)

        try setState(["api": #"{"captive": true, "user-portal-url": "https://portal.test/\u001b]0;owned\u0007\n WATCHDOG=trigger\nSTATUS=forged"}"#])
        _ = try reachctl(["probe", "--socket", daemon.socketPath])
        XCTAssertTrue(daemon.process.isRunning)
        XCTAssertTrue(daemon.log.contains("captive-portal API not used"), daemon.log)
        let path = try await client.status().path
        XCTAssertEqual(path.captivePortal?.userPortalURL, "https://portal.test/login", "the refused answer changed nothing")
        let status = try reachctl(["status", "--socket", daemon.socketPath])
        XCTAssertFalse(status.stdout.contains("\u{1B}") || status.stdout.contains("WATCHDOG"), status.stdout)
    }

    // MARK: Probe servers

    /// `100 Continue` forever used to keep reachd parsing, busy, until the probe's timeout.
    /// Now a few heads end the exchange: limited at once, and little CPU.
    func testEndlessContinueEndsTheExchange() async throws {
        try topology.configureIPv4()
        try setState(["http": "continue"])
        let started = Date()
        let (daemon, _, recorder) = try startDaemon(Self.probing)
        _ = await expectPath(recorder, "limited long before the 10 s timeout", timeout: 4) { $0.connectivity == .limited }
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        let before = try cpuSeconds(daemon)
        try await Task.sleep(for: .seconds(5))  // rounds every 1-2 s meanwhile, each meeting the same server
        let used = try cpuSeconds(daemon) - before
        XCTAssertLessThan(used, 1.0, "CPU seconds used in 5 s of rounds against an endless 100 Continue")
        XCTAssertTrue(serverLog().contains { $0.contains("continued") }, "reachd hung up on the server: \(serverLog())")
    }

    /// A probe's `Location` with C1 controls, U+202E, `javascript:` or `file:` used to be
    /// published as the login page. Each is still a portal, with no login page; a plain one
    /// before each shows the rounds (every 1-2 s while in a portal) read the server's answer.
    /// ESC and BEL never get that far: NIO's parser refuses the answer (limited).
    func testHostileLocationIsNotPublished() async throws {
        try topology.configureIPv4()
        let plain = "http://portal.test/login?ok"
        try setState(["http": "location", "location": plain])
        let (daemon, _, recorder) = try startDaemon(Self.probing)
        let hostile: [(String, Connectivity)] = [
            ("http://portal.test/\u{9B}31m", .portal), ("http://portal.test/\u{202E}gpj.exe", .portal),
            ("javascript:alert(document.cookie)", .portal), ("file:///etc/shadow", .portal), ("http://portal.test:99999/", .portal),
            ("http://portal.test/\u{1B}]0;owned\u{07}", .limited),
        ]
        for (location, connectivity) in hostile {
            try setState(["http": "location", "location": plain])
            _ = await expectPath(recorder, "a plain redirect is a login page") { $0.captivePortal?.userPortalURL == plain }
            try setState(["http": "location", "location": location])
            let path = await expectPath(recorder, "\(location.debugDescription) is no login page") {
                $0.connectivity == connectivity && $0.captivePortal?.userPortalURL == nil
            }
            XCTAssertNotNil(path)
            let status = try reachctl(["status", "--socket", daemon.socketPath])
            XCTAssertFalse(["javascript", "shadow", "gpj", "99999", "owned"].contains { status.stdout.contains($0) }, status.stdout)
        }
        XCTAssertTrue(daemon.process.isRunning)
    }

    // MARK: Targets

    /// `reachctl check ::` used to say "reachable via eth0", `0.0.0.0` "via lo". The
    /// unspecified addresses name no host: a usage error in reachctl, InvalidParameter in reachd.
    func testUnspecifiedAddressIsNoTarget() async throws {
        try topology.configureIPv4()
        let (daemon, client) = try startDaemon()
        for text in ["::", "0.0.0.0"] {
            let usage = try reachctl(["check", text, "--socket", daemon.socketPath])
            XCTAssertEqual(usage.status, 64, usage.stdout)
            XCTAssertTrue(usage.stderr.hasPrefix("Error: '\(text)' is an unspecified address: it names no host\n"), usage.stderr)
            do {
                let reply = try await client.checkTarget(.address(IPAddress(text)!))
                XCTFail("\(text) answered: \(reply)")
            } catch {
                guard case let .remoteError(_, name, parameters) = error else { return XCTFail("\(text): \(error)") }
                XCTAssertEqual(name, "org.varlink.service.InvalidParameter", text)
                XCTAssertEqual(parameters["parameter"], .string("address"), text)
            }
        }
        let loopback = try reachctl(["check", "127.0.0.1", "--socket", daemon.socketPath])
        XCTAssertEqual(loopback.status, 0, loopback.stderr)
    }
}
