import Foundation
import Glibc
import ReachClient
import ReachabilityCore
import TestSupport
import XCTest

/// Link quality from the host's own TCP traffic on a real kernel: reachd in `host`, a
/// `router` forwarding to a `server` behind it, the sockets read every second with a
/// subscriber. The router shapes both directions with `tc tbf` (this kernel has no netem)
/// and drops packets at random with nftables' `numgen`, or delays them through a tun delay
/// line; the host uploads to the server.
/// The ground truth is what `ss -ti` in the host says of the same socket.
final class LinkQualityIntegrationTests: DaemonTestCase {
    private static let serverAddress = "10.78.0.2"
    private var server: NetworkNamespace!
    private var work = ""

    override func setUpWithError() throws {
        try super.setUpWithError()
        try requirePrerequisite(Command.exists("tc"), "tc is needed (iproute2)")
        try requirePrerequisite(Command.exists("nft"), "nft is needed (scripts/bootstrap --test installs nftables)")
        work = try temporaryDirectory("reachd-quality")
        server = try NetworkNamespace(prefix: "reachd-server")
        try sh("ip", "link", "add", "eth0", "netns", server.name, "type", "veth", "peer", "name", "srv0", "netns", topology.router.name)
        try server.ip("link", "set", "eth0", "up")
        try server.ip("addr", "add", Self.serverAddress + "/24", "dev", "eth0")
        try server.ip("route", "add", "default", "via", "10.78.0.1")
        try topology.router.ip("link", "set", "srv0", "up")
        try topology.router.ip("addr", "add", "10.78.0.1/24", "dev", "srv0")
        _ = try topology.router.exec(["sysctl", "-qw", "net.ipv4.ip_forward=1"])
        try topology.configureIPv4()
    }

    override func tearDown() {
        super.tearDown()
        server = nil
    }

    // MARK: Helpers

    /// Starts `Tests/Fixtures/SCRIPT` (`tcp_traffic.py`) with `arguments` in `namespace`;
    /// waits for "ready" when it serves.
    private func traffic(in namespace: NetworkNamespace, _ arguments: [String], serves: Bool = false, script: String = "tcp_traffic.py") throws {
        let ready = Pipe()
        let process = try Command.launch(
            ["ip", "netns", "exec", namespace.name, "python3", Paths.repository.appendingPathComponent("Tests/Fixtures/" + script).path] + arguments,
            stdout: serves ? ready : nil
        )
        // SIGKILL: the test runner's children start with SIGTERM blocked.
        addTeardownBlock {
            guard process.isRunning else { return }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        if serves {
            XCTAssertTrue(String(decoding: ready.fileHandleForReading.availableData, as: UTF8.self).hasPrefix("ready"), "\(arguments) started")
        }
    }

    /// reachd reading the sockets every second, with a subscriber (the reads run only while someone listens).
    private func startWatched() throws -> (DaemonProcess, PathRecorder) {
        let configuration = work + "/reachd.toml"
        try "[stall]\npoll-interval = 1\n".write(toFile: configuration, atomically: true, encoding: .utf8)
        let (daemon, client) = try startDaemon(extraArguments: ["--config", configuration])
        return (daemon, PathRecorder(client: client))
    }

    /// The router shapes what it forwards both ways (to the host on eth0, to the server on
    /// srv0) with a token bucket: `rate`, a two-second queue. nil removes the shapers.
    private func shape(_ rate: String?) throws {
        for device in ["eth0", "srv0"] {
            _ = try? topology.router.exec(["tc", "qdisc", "del", "dev", device, "root"])
            if let rate {
                _ = try topology.router.exec(["tc", "qdisc", "add", "dev", device, "root", "tbf", "rate", rate, "burst", "4kb", "latency", "2000ms"])
            }
        }
    }

    /// The lines `reachctl status` prints about the link, and the eth0 lines of `reachctl interfaces`.
    private func views(_ daemon: DaemonProcess) -> String {
        let status = (try? reachctl(["status", "--socket", daemon.socketPath]).stdout) ?? ""
        let interfaces = (try? reachctl(["interfaces", "--socket", daemon.socketPath]).stdout) ?? ""
        return (status.split(separator: "\n").filter { $0.hasPrefix("Link quality:") || $0.hasPrefix("Primary:") }
            + interfaces.split(separator: "\n").filter { $0.hasPrefix("eth0: link quality") }).joined(separator: "\n")
    }

    /// Every class the subscriber saw on the path during `duration`.
    private func classes(_ recorder: PathRecorder, for duration: Duration) async throws -> Set<LinkQuality> {
        let start = ContinuousClock.now
        var seen: Set<LinkQuality> = []
        while ContinuousClock.now - start < duration {
            if let quality = recorder.latest?.linkQuality { seen.insert(quality) }
            try await Task.sleep(for: .milliseconds(200))
        }
        return seen
    }

    /// eth0's estimate as `reachctl interfaces --json` gives it.
    private func quality(_ daemon: DaemonProcess) -> LinkQualityEstimate? {
        guard let json = try? reachctl(["interfaces", "--socket", daemon.socketPath, "--json"]).stdout,
              let reply = try? JSONDecoder().decode(ListInterfacesReply.self, from: Data(json.utf8)) else { return nil }
        return reply.interfaces.first { $0.name == "eth0" }?.quality
    }

    /// eth0's typical RTT once it reaches the minimal class's 1,280 ms, or the last one seen at `deadline`.
    private func queued(_ daemon: DaemonProcess, until deadline: ContinuousClock.Instant) async throws -> Int {
        var rtt = 0
        repeat {
            rtt = quality(daemon)?.rtt ?? 0
            if rtt >= 1280 { break }
            try await Task.sleep(for: .milliseconds(500))
        } while ContinuousClock.now < deadline
        return rtt
    }

    /// What `ss -ti` in the host says of its connections to the server: the ground truth.
    private func ss() -> String {
        let out = (try? topology.host.exec(["ss", "-tin", "dst", Self.serverAddress])) ?? ""
        return out.split(separator: "\n").filter { $0.contains("rtt:") }.map { line in
            let words = line.split(separator: " ")
            return words.indices.filter { index in
                let word = words[index]
                return word.hasPrefix("rtt:") || word.hasPrefix("minrtt:") || word == "delivery_rate" || word.hasPrefix("retrans:")
                    || word == "app_limited" || word.hasPrefix("bytes_acked:") || (index > 0 && words[index - 1] == "delivery_rate")
            }.map { String(words[$0]) }.joined(separator: " ")
        }.joined(separator: " | ")
    }

    // MARK: Shaped and unshaped

    /// An upload through the router: unshaped it is good; shaped to 64 kbit/s the class falls
    /// to minimal within a minute (RTT and rate show the queue and the bucket); at 1 Mbit/s it
    /// is never good; with the shapers removed it is good again within the half-life and the
    /// margin (30 s, plus the readings it takes the median to cross).
    func testShapingTheLinkLowersTheClassAndRemovingItRestoresIt() async throws {
        _ = try traffic(in: server, ["receive", "9000", work + "/received"], serves: true)
        let (daemon, recorder) = try startWatched()
        _ = await expectPath(recorder, "satisfied") { $0.status == .satisfied }
        _ = try traffic(in: topology.host, ["send", Self.serverAddress, "9000"])
        let good = await expectPath(recorder, "unshaped: good", timeout: 30) { $0.linkQuality == .good }
        XCTAssertNotNil(good)
        let unshaped = views(daemon)
        print("unshaped:\n\(unshaped)\nss -ti: \(ss())")
        XCTAssertTrue(unshaped.contains("Link quality: good (RTT "), unshaped)

        try shape("64kbit")
        let shapedAt = ContinuousClock.now
        let minimal = await expectPath(recorder, "64 kbit/s: minimal within a minute", timeout: 60) { $0.linkQuality == .minimal }
        XCTAssertNotNil(minimal)
        let fell = ContinuousClock.now - shapedAt
        let shaped = views(daemon)
        print("64 kbit/s, minimal after \(fell):\n\(shaped)\nss -ti: \(ss())")
        XCTAssertTrue(shaped.contains("Link quality: minimal (RTT "), shaped)
        // The rate may cross first (it only lowers); the RTT median follows within the minute.
        let rtt = try await queued(daemon, until: shapedAt + .seconds(60))
        print("64 kbit/s, RTT \(rtt) ms after \(ContinuousClock.now - shapedAt):\n\(views(daemon))\nss -ti: \(ss())")
        XCTAssertGreaterThanOrEqual(rtt, 1280, "the RTT shows the queue within a minute: \(views(daemon))\nss -ti: \(ss())")
        if let rate = quality(daemon)?.deliveryRate { XCTAssertLessThan(rate, 150_000, "the rate shows the bucket: \(shaped)") }
        XCTAssertTrue(daemon.log.contains("link quality minimal"), "the class change is logged")

        try shape("1mbit")
        let seen = try await classes(recorder, for: .seconds(30))
        print("1 Mbit/s for 30 s: \(seen.map(\.rawValue).sorted())\n\(views(daemon))\nss -ti: \(ss())")
        XCTAssertFalse(seen.contains(.good), "1 Mbit/s is never good")

        try shape(nil)
        let removed = ContinuousClock.now
        let back = await expectPath(recorder, "shapers removed: good again", timeout: 50) { $0.linkQuality == .good }
        XCTAssertNotNil(back)
        print("shapers removed, good after \(ContinuousClock.now - removed):\n\(views(daemon))\nss -ti: \(ss())")
    }

    /// Random loss at the router (nftables `numgen random`, 10 % of what it forwards) raises
    /// the loss rate and lowers the class from good.
    func testRandomLossLowersTheClass() async throws {
        _ = try traffic(in: server, ["receive", "9000", work + "/received"], serves: true)
        let (daemon, recorder) = try startWatched()
        _ = await expectPath(recorder, "satisfied") { $0.status == .satisfied }
        _ = try traffic(in: topology.host, ["send", Self.serverAddress, "9000"])
        _ = await expectPath(recorder, "no loss: good", timeout: 30) { $0.linkQuality == .good }
        _ = try topology.router.exec(["nft", "add table inet loss; add chain inet loss forward { type filter hook forward priority 0; }; "
            + "add rule inet loss forward numgen random mod 100 < 10 drop"])
        let lowered = await expectPath(recorder, "10 % loss: no longer good", timeout: 60) { $0.linkQuality == .moderate || $0.linkQuality == .minimal }
        XCTAssertNotNil(lowered)
        let view = views(daemon)
        print("10 % loss:\n\(view)\nss -ti: \(ss())")
        XCTAssertTrue(view.contains("% loss"), view)
    }

    /// Added delay without netem: the router sends what it forwards through a user-space delay
    /// line on a tun device (`delay_line.py`, 300 ms each way, policy routing: what comes in on
    /// eth0 or srv0 goes to the tun, what comes back out of it is forwarded as usual). A chat
    /// over that 600 ms path is moderate or worse.
    func testASixHundredMillisecondPathIsModerateOrWorse() async throws {
        _ = try traffic(in: server, ["receive", "9000", work + "/received"], serves: true)
        try traffic(in: topology.router, ["dly0", "300"], serves: true, script: "delay_line.py")
        for command in [
            ["sysctl", "-qw", "net.ipv4.conf.all.rp_filter=0"], ["sysctl", "-qw", "net.ipv4.conf.default.rp_filter=0"],
            ["ip", "link", "set", "dly0", "up"], ["sysctl", "-qw", "net.ipv4.conf.dly0.rp_filter=0"],
            ["ip", "route", "add", "default", "dev", "dly0", "table", "100"],
            ["ip", "rule", "add", "iif", "eth0", "lookup", "100"], ["ip", "rule", "add", "iif", "srv0", "lookup", "100"],
        ] {
            _ = try topology.router.exec(command)
        }
        let (daemon, recorder) = try startWatched()
        _ = await expectPath(recorder, "satisfied") { $0.status == .satisfied }
        _ = try traffic(in: topology.host, ["chat", Self.serverAddress, "9000"])
        let slow = await expectPath(recorder, "600 ms: moderate or worse", timeout: 30) { $0.linkQuality == .moderate || $0.linkQuality == .minimal }
        XCTAssertNotNil(slow)
        let rtt = quality(daemon)?.rtt ?? 0
        XCTAssertGreaterThanOrEqual(rtt, 550, "the RTT shows the delay line")
        let seen = try await classes(recorder, for: .seconds(5))
        XCTAssertFalse(seen.contains(.good), "never good over 600 ms")
        print("600 ms delay line:\n\(views(daemon))\nss -ti: \(ss())")
    }

    /// Nobody listening any more: the reads stop, the estimates are forgotten (the path says
    /// `unknown`, no interface has a `quality`), and reachd makes no system call in 10 s.
    func testWithNobodyListeningTheClassIsUnknownAndReachdIdle() async throws {
        guard Command.exists("strace") else { return XCTFail("strace is needed (scripts/bootstrap --test installs it)") }
        _ = try traffic(in: server, ["receive", "9000", work + "/received"], serves: true)
        let configuration = work + "/reachd.toml"
        try "[stall]\npoll-interval = 1\n".write(toFile: configuration, atomically: true, encoding: .utf8)
        let (daemon, client) = try startDaemon(extraArguments: ["--config", configuration])
        var recorder: PathRecorder? = PathRecorder(client: client)
        _ = try traffic(in: topology.host, ["chat", Self.serverAddress, "9000"])
        _ = await expectPath(recorder!, "a chat: good", timeout: 30) { $0.linkQuality == .good }
        recorder = nil
        // The subscriber's connection closes, the engine hears nobody listens and forgets.
        var status: StatusReply?
        for _ in 0..<50 {
            status = try await client.status()
            if status?.path.linkQuality == .unknown { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTAssertEqual(status?.path.linkQuality, .unknown, "nobody listens: unknown")
        XCTAssertNil(quality(daemon), "no estimate without the reads")
        try await Task.sleep(for: .seconds(3))
        let calls = try systemCalls(of: daemon)
        XCTAssertEqual(calls.count, 0, "system calls with nobody listening:\n\(calls.prefix(20).joined(separator: "\n"))")
    }

    /// A chat sending a byte a second is app-limited: its RTT is measured, its rate never
    /// counted, and the link never reads as slow.
    func testAppLimitedTrafficNeverReadsAsASlowLink() async throws {
        _ = try traffic(in: server, ["receive", "9000", work + "/received"], serves: true)
        let (daemon, recorder) = try startWatched()
        _ = await expectPath(recorder, "satisfied") { $0.status == .satisfied }
        _ = try traffic(in: topology.host, ["chat", Self.serverAddress, "9000"])
        let good = await expectPath(recorder, "a chat: good", timeout: 30) { $0.linkQuality == .good }
        XCTAssertNotNil(good)
        let seen = try await classes(recorder, for: .seconds(10))
        XCTAssertEqual(seen, [.good], "never minimal or moderate")
        let quality = quality(daemon)
        XCTAssertNotNil(quality?.rtt)
        XCTAssertNil(quality?.deliveryRate, "an app-limited rate is no estimate")
        XCTAssertEqual(quality?.rateSamples, 0)
        print("chat:\n\(views(daemon))\nss -ti: \(ss())")
    }
}
