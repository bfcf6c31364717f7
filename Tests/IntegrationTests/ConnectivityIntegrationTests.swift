import Foundation
import ReachClient
import ReachProtocol
import ReachabilityCore
import TestSupport
import XCTest

/// Connectivity checks on a real kernel against real servers, all inside the test's own
/// namespaces: `probe_server.py` answers HTTP and HTTPS in the router namespace (with a
/// certificate made here with openssl), `probe.test` and `portal.test` come from the host
/// namespace's `/etc/netns/NAME/hosts`. Nothing leaves the two namespaces.
final class ConnectivityIntegrationTests: DaemonTestCase {
    private var server: Process?
    private var work: String!
    private var state: String { work + "/state.json" }
    private var certificate: String { work + "/cert.pem" }
    /// `sha256/BASE64` of the certificate's SubjectPublicKeyInfo.
    private var publicKeyPin = ""

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard Command.exists("openssl") else { return XCTFail("openssl is needed (scripts/bootstrap --test installs it)") }
        work = try temporaryDirectory("reachd-probe")
        try topology.hostFiles(hosts: "127.0.0.1 localhost\n10.77.0.1 probe.test portal.test\n", nsswitch: "hosts: files\n")
        let madeCertificate = try TestCertificate(in: work)
        publicKeyPin = "sha256/" + (try runCommand(["sh", "-c",
            "openssl x509 -pubkey -noout -in \(certificate) | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64"]))
            .trimmingCharacters(in: .whitespacesAndNewlines)
        try setState(#"{"http": "204", "https": "204"}"#)
        server = try topology.launchRouterServer("probe_server.py", [state] + madeCertificate.serverArguments)
    }

    override func tearDown() {
        if let server {
            kill(server.processIdentifier, SIGKILL)  // children of the test runner have SIGTERM blocked
            server.waitUntilExit()
        }
        super.tearDown()
    }

    // MARK: Helpers

    private func setState(_ json: String) throws {
        try json.write(toFile: state, atomically: true, encoding: .utf8)
    }

    /// Requests the server saw: (monotonic seconds, scheme, path).
    private func requests() -> [(time: Double, scheme: String, path: String)] {
        let text = (try? String(contentsOfFile: state + ".log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 3, let time = Double(parts[0]) else { return nil }
            return (time, String(parts[1]), String(parts[2]))
        }
    }

    private func configuration(_ text: String) throws -> String {
        let path = work + "/reachd-\(UUID().uuidString.prefix(6)).toml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private func startProbing(_ toml: String) throws -> (DaemonProcess, ReachabilityClient, PathRecorder) {
        let (daemon, client) = try startDaemon(extraArguments: ["--config", try configuration(toml)])
        return (daemon, client, PathRecorder(client: client))
    }

    private func probe(_ daemon: DaemonProcess, _ extra: [String] = []) throws -> ProcessResult {
        try reachctl(["probe", "--socket", daemon.socketPath] + extra)
    }


    private static let httpOnly = """
        [probe]
        url = "http://probe.test/generate_204"
        timeout = 2
        initial-delay = 1
        maximum-delay = 2
        families = ["ipv4"]
        """

    // MARK: Verdicts

    /// 204 is full; a redirect is a portal with its login page and interventionRequired; a
    /// login page is a portal; back to 204, the portal and the flag are gone. Each change
    /// is seen on the next check `reachctl probe` asks for.
    func testHTTPVerdicts() async throws {
        try topology.configureIPv4()
        let (daemon, _, recorder) = try startProbing(Self.httpOnly)
        _ = await expectPath(recorder, "204 gives full") { $0.connectivity == .full && !$0.flags.contains(.interventionRequired) }
        let status = try reachctl(["status", "--socket", daemon.socketPath])
        XCTAssertTrue(status.stdout.contains("Connectivity: full\n"), status.stdout)

        try setState(#"{"http": "redirect"}"#)
        let checked = try probe(daemon)
        XCTAssertEqual(checked.status, 0, checked.stderr)
        XCTAssertTrue(checked.stdout.contains("eth0: IPv4 portal"), checked.stdout)
        let portal = await expectPath(recorder, "a redirect is a portal") { $0.connectivity == .portal }
        XCTAssertEqual(portal?.flags.contains(.interventionRequired), true)
        XCTAssertEqual(portal?.captivePortal?.captive, true)
        XCTAssertEqual(portal?.captivePortal?.userPortalURL, "http://portal.test/login?from=probe")
        let shown = try reachctl(["status", "--socket", daemon.socketPath])
        XCTAssertTrue(shown.stdout.contains("Portal:       captive, log in at http://portal.test/login?from=probe"), shown.stdout)
        let listed = try reachctl(["interfaces", "--socket", daemon.socketPath])
        XCTAssertTrue(listed.stdout.contains("portal/-"), listed.stdout)

        try setState(#"{"http": "login"}"#)
        _ = try probe(daemon)
        let login = await expectPath(recorder, "a login page is a portal") { $0.connectivity == .portal && $0.captivePortal?.userPortalURL == nil }
        XCTAssertEqual(login?.flags.contains(.interventionRequired), true)

        try setState(#"{"http": "204"}"#)
        _ = try probe(daemon)
        let back = await expectPath(recorder, "logged in: full again") { $0.connectivity == .full }
        XCTAssertNil(back?.captivePortal)
        XCTAssertEqual(back?.flags.contains(.interventionRequired), false)
        XCTAssertTrue(recorder.replies.contains { $0.changes?.contains(.connectivity) == true }, "published as a connectivity change")
    }

    /// Refused connections and dropped packets are `limited`, the latter within the timeout.
    func testLimitedWhenNothingAnswers() async throws {
        try topology.configureIPv4()
        let (_, _, refusedRecorder) = try startProbing(Self.httpOnly.replacingOccurrences(of: "probe.test/", with: "probe.test:81/"))
        _ = await expectPath(refusedRecorder, "a refused connection is limited") { $0.connectivity == .limited }
        daemon?.terminate()

        try topology.router.ip("route", "add", "blackhole", "10.77.0.2/32")  // answers never come back
        let started = Date()
        let (_, _, droppedRecorder) = try startProbing(Self.httpOnly)
        _ = await expectPath(droppedRecorder, "dropped packets are limited", timeout: 8) { $0.connectivity == .limited }
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "the 2 s timeout bounds the check")
    }

    /// HTTP passes and HTTPS is cut: partial.
    func testPartialWhenHTTPSFails() async throws {
        try topology.configureIPv4()
        let (_, _, recorder) = try startProbing(Self.httpOnly + """

            https-url = "https://probe.test/generate_204"
            [probe.trust]
            pinning = "certificate"
            pinned-certificates = ["\(certificate)"]
            """)
        _ = await expectPath(recorder, "both pass: full") { $0.connectivity == .full }
        try setState(#"{"http": "204", "https": "close"}"#)
        try topology.host.ip("addr", "add", "10.77.0.3/24", "dev", "eth0")  // a path change probes again at once
        _ = await expectPath(recorder, "HTTPS cut: partial") { $0.connectivity == .partial }
    }

    /// A self-signed server under each trust policy (HTTPS check alone): the system store
    /// refuses it; its certificate or its SPKI pinned accepts it; a wrong pin refuses it.
    func testTrustPolicies() async throws {
        try topology.configureIPv4()
        let wrongPin = "sha256/" + Data(repeating: 7, count: 32).base64EncodedString()
        let cases: [(String, String, Connectivity)] = [
            ("system trust store", "pinning = \"none\"", .limited),
            ("certificate pinned", "pinning = \"certificate\"\npinned-certificates = [\"\(certificate)\"]", .full),
            ("public key pinned", "pinning = \"publicKey\"\npublic-key-pins = [\"\(publicKeyPin)\"]", .full),
            ("wrong public key", "pinning = \"publicKey\"\npublic-key-pins = [\"\(wrongPin)\"]", .limited),
        ]
        for (name, trust, expected) in cases {
            let (daemon, _, recorder) = try startProbing("""
                [probe]
                https-url = "https://probe.test/generate_204"
                timeout = 2
                families = ["ipv4"]
                [probe.trust]
                \(trust)
                """)
            _ = await expectPath(recorder, name) { $0.connectivity == expected }
            if expected == .limited {
                XCTAssertTrue(daemon.log.contains("untrusted"), "\(name): the refusal is logged with its reason\n\(daemon.log)")
            }
            daemon.terminate()
        }
        // AFSecurityPolicy's rule, refused at load with the reason.
        let refused = try Command.run([Paths.product("reachd"), "--check-config", "--config",
                                       try configuration("[probe.trust]\nallow-invalid-certificates = true\n")])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("you must pin"), refused.stderr)
    }

    /// Two uplinks, two verdicts: eth1's answers are dropped by the router.
    func testTwoInterfacesWithDifferentResults() async throws {
        try topology.configureIPv4()
        try topology.addPair(hostName: "eth1", routerName: "eth1", prefix: "10.78.0")
        try topology.host.ip("route", "add", "default", "via", "10.78.0.1", "dev", "eth1", "metric", "200")
        try topology.router.ip("route", "add", "blackhole", "10.78.0.2/32")
        let (daemon, client, _) = try startProbing(Self.httpOnly)
        let deadline = Date().addingTimeInterval(8)
        var verdicts: [String: Connectivity] = [:]
        while Date() < deadline {
            let interfaces = try await client.interfaces()
            verdicts = Dictionary(uniqueKeysWithValues: interfaces.map { ($0.name, $0.ipv4Connectivity) })
            if verdicts["eth0"] == .full && verdicts["eth1"] == .limited { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTAssertEqual(verdicts["eth0"], .full)
        XCTAssertEqual(verdicts["eth1"], .limited)
        let path = try await client.status().path
        XCTAssertEqual(path.connectivity, .full, "the path reports its primary's")
        let one = try probe(daemon, ["--interface", "eth1"])
        XCTAssertEqual(one.stdout, "eth1: IPv4 limited, IPv6 unknown\n")
    }

    /// While not full, rounds back off: 1 s, 2 s, 4 s (the configured cap), in real time.
    func testBackoffInRealTime() async throws {
        try topology.configureIPv4()
        try setState(#"{"http": "redirect"}"#)
        _ = try startProbing(Self.httpOnly.replacingOccurrences(of: "maximum-delay = 2", with: "maximum-delay = 4"))
        // The fourth round comes about 7 s after the first, the fifth 4 s later: wait for
        // the fourth (on a slow machine the first may start late) but not for the fifth.
        let deadline = ContinuousClock.now + .seconds(10)
        while requests().count < 4 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        let times = requests().map(\.time)
        XCTAssertEqual(times.count, 4, "first round, then after 1, 2 and 4 s: \(times)")
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        for (gap, expected) in zip(gaps, [1.0, 2.0, 4.0]) {
            XCTAssertEqual(gap, expected, accuracy: 0.4, "gaps \(gaps)")
        }
    }

    // MARK: Captive portals the network announces

    /// RA option 37 from the router: the API URI is reported; with fetch-api on, the RFC
    /// 8908 API (HTTPS, pinned) says captive → portal and where to log in; when it says the
    /// session is open with 32 s left, it is asked again 30 s before the end (2 s later).
    func testRouterAdvertisedPortalAndItsAPI() async throws {
        try topology.configureIPv4()
        try setState(#"{"api": {"captive": true, "user-portal-url": "https://portal.test/login", "venue-info-url": "https://portal.test/venue"}}"#)
        let (daemon, client, recorder) = try startProbing("""
            [captive-portal]
            fetch-api = true
            [captive-portal.trust]
            pinning = "certificate"
            pinned-certificates = ["\(certificate)"]
            """)
        try await topology.waitForLinkLocal()  // an RA needs a link-local source, and a host to take it
        let ra = try runCommand(["ip", "netns", "exec", topology.router.name, "python3",
                                 Paths.repository.appendingPathComponent("Tests/Fixtures/send_ra.py").path, "eth0", "https://portal.test/captive"])
        XCTAssertTrue(ra.hasPrefix("sent"))
        let captive = await expectPath(recorder, "the API says captive") { $0.connectivity == .portal }
        XCTAssertEqual(captive?.captivePortal, CaptivePortal(
            apiURI: "https://portal.test/captive", captive: true, userPortalURL: "https://portal.test/login",
            venueInfoURL: "https://portal.test/venue"
        ))
        XCTAssertEqual(captive?.flags.contains(.interventionRequired), true)
        let eth0 = try await interface("eth0", from: client)
        XCTAssertEqual(eth0?.captivePortal?.apiURI, "https://portal.test/captive")

        try setState(#"{"api": {"captive": false, "seconds-remaining": 32, "can-extend-session": true}}"#)
        let open = await expectPath(recorder, "the API says the session is open", timeout: 8) { $0.captivePortal?.captive == false }
        XCTAssertEqual(open?.flags.contains(.interventionRequired), false)
        XCTAssertEqual(open?.captivePortal?.secondsRemaining, 32)
        let openedAt = try XCTUnwrap(requests().last?.time)
        try await Task.sleep(for: .milliseconds(3000))
        let after = requests().filter { $0.path == "/captive" && $0.time > openedAt + 0.5 }
        XCTAssertEqual(after.count, 1, "one re-check before the session ends: \(requests())")
        if let recheck = after.first { XCTAssertEqual(recheck.time - openedAt, 2, accuracy: 0.5) }
        _ = daemon
    }

    /// systemd-networkd (a stub speaking its Varlink API) says which portal eth0's network
    /// announced (as it learns from DHCP option 114): reported per interface without any
    /// probe; with no fetch-api, nothing is sent anywhere.
    func testPortalAnnouncedThroughNetworkd() async throws {
        try topology.configureIPv4()
        let index = try topology.host.exec(["cat", "/sys/class/net/eth0/ifindex"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let socket = work + "/io.systemd.Network"
        let ready = Pipe()
        let stub = try Command.launch(["python3", Paths.repository.appendingPathComponent("Tests/Fixtures/networkd_stub.py").path,
                                       socket, index, "https://portal.test/api"], stdout: ready)
        defer { kill(stub.processIdentifier, SIGKILL); stub.waitUntilExit() }
        XCTAssertTrue(String(decoding: ready.fileHandleForReading.availableData, as: UTF8.self).hasPrefix("ready"))
        let (_, client) = try startDaemon(extraArguments: ["--networkd-socket", socket])
        var portal: CaptivePortal?
        for _ in 0..<50 {
            portal = try await interface("eth0", from: client)?.captivePortal
            if portal != nil { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTAssertEqual(portal, CaptivePortal(apiURI: "https://portal.test/api"))
        let path = try await client.status().path
        XCTAssertEqual(path.captivePortal?.apiURI, "https://portal.test/api", "the primary's portal is the path's")
        XCTAssertEqual(path.connectivity, .unknown, "announced, not asked: no verdict")
        XCTAssertTrue(requests().isEmpty, "nothing was fetched")
    }

    // MARK: Silence once validated

    // MARK: Asleep and awake

    /// A portal before an hour-long sleep (no recheck in between), logged in while asleep:
    /// nothing is probed during the sleep, and on the wake (logind's PrepareForSleep(false)
    /// from a stand-in on a private system bus) the first round starts at once and `full` is
    /// published within 5 s, straight from portal, from a probe made after the wake.
    /// `reachctl status` then shows the wake, and the counter counts it.
    func testAWakeReValidatesAtOnceWithoutAnIntermediateAnswer() async throws {
        try topology.configureIPv4()
        let bus = try PrivateSystemBus(directory: try temporaryDirectory("reachd-wake-bus"))
        addTeardownBlock { bus.stop() }
        let logind = try LogindStub(address: bus.address)
        addTeardownBlock { logind.stop() }
        try setState(#"{"http": "redirect"}"#)
        let (daemon, client) = try startDaemon(
            extraArguments: ["--config", try configuration(Self.httpOnly + "\nrecheck-interval = 3600\n")],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "a portal before the sleep") { $0.connectivity == .portal }
        XCTAssertNotNil(logind.wait { $0.event == "inhibited" }, "reachd holds a delay inhibitor")
        let noWake = try reachctl(["status", "--socket", daemon.socketPath]).stdout
        XCTAssertFalse(noWake.contains("Last wake:"), "no wake yet: \(noWake)")

        try logind.send("sleep")
        XCTAssertNotNil(logind.wait(timeout: .seconds(1)) { $0.event == "released" }, "released within 1 s")
        let repliesAtSleep = recorder.replies.count
        let requestsAtSleep = requests().count
        try setState(#"{"http": "204"}"#)  // logged in on another device meanwhile
        try await Task.sleep(for: .seconds(3))
        XCTAssertEqual(requests().count, requestsAtSleep, "nothing probed while asleep")
        XCTAssertEqual(recorder.latest?.connectivity, .portal, "the verdict stands while asleep")

        let woke = ContinuousClock.now
        try logind.send("wake")
        let full = await expectPath(recorder, "full within 5 s of the wake", timeout: 5) { $0.connectivity == .full }
        let took = ContinuousClock.now - woke
        XCTAssertNotNil(full)
        let published = recorder.replies.dropFirst(repliesAtSleep).map(\.path.connectivity)
        XCTAssertEqual(published.filter { $0 != .portal }, [.full], "straight from portal to full: \(published)")
        // Nothing was probed from the sleep until just before the wake: these came after it.
        XCTAssertFalse(requests().dropFirst(requestsAtSleep).isEmpty, "the verdict comes from a probe made after the wake")
        XCTAssertTrue(daemon.log.contains(": re-validating"), daemon.log)

        let status = try reachctl(["status", "--socket", daemon.socketPath]).stdout
        let line = status.split(separator: "\n").first { $0.hasPrefix("Last wake:") }.map(String.init) ?? ""
        XCTAssertTrue(line.hasSuffix(" asleep") && line.contains(" after "), status)
        let json = try reachctl(["status", "--json", "--socket", daemon.socketPath]).stdout
        let wake = try JSONDecoder().decode(StatusWithTargets.self, from: Data(json.utf8)).lastWake
        XCTAssertNotNil(wake, json)
        XCTAssertLessThan(abs(Double(wake?.at ?? 0) - Date().timeIntervalSince1970), 30, "woke just now")
        let metrics = try reachctl(["metrics", "--socket", daemon.socketPath]).stdout
        XCTAssertTrue(metrics.contains("\nreachd_wakes_total 1\n"), metrics)
        print("full \(took) after the wake; published after the sleep: \(published); \(line)")
    }

    /// Validated and idle, reachd makes no system call at all for 10 s: no timer, no poll.
    /// (The first seconds after a round may carry a stale wakeup of a cancelled deadline.)
    /// The round includes HTTPS: judging its certificates leaves no thread or timer behind.
    /// The stall check is off: with a subscriber it reads the sockets every 10 s
    /// (DataStallIntegrationTests counts those reads).
    func testValidatedIdleDaemonMakesNoSystemCalls() async throws {
        guard Command.exists("strace") else { return XCTFail("strace is needed (scripts/bootstrap --test installs it)") }
        try topology.configureIPv4()
        let (daemon, _, recorder) = try startProbing(Self.httpOnly + """

            https-url = "https://probe.test/generate_204"
            [probe.trust]
            pinning = "certificate"
            pinned-certificates = ["\(certificate)"]
            [stall]
            enabled = false
            """)
        _ = await expectPath(recorder, "validated") { $0.connectivity == .full }
        // Let the kernel settle first: IPv6 link-local DAD ends with netlink events (a
        // new address, its multicast route) that rightly wake reachd.
        try await topology.waitForLinkLocal()
        // And the last round's deadlines (name 5 s, check 2 s): NIO cancels a timer without
        // disarming its timerfd, so each may still wake the loop once, then never again.
        try await Task.sleep(for: .milliseconds(5500))
        let calls = try systemCalls(of: daemon)
        XCTAssertEqual(calls.count, 0, "system calls of an idle, validated reachd:\n\(calls.prefix(20).joined(separator: "\n"))")
    }
}
