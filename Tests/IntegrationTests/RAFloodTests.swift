import Foundation
import ReachClient
import ReachProtocol
import ReachabilityCore
import Synchronization
import TestSupport
import XCTest

/// The router floods the link with RAs, each with a new RFC 8910
/// captive-portal URI (`Tests/Fixtures/ra_flood.py`, 1,000 a second for 5 s, from the router
/// namespace). reachd must treat it as a flood, not as news: a bounded number of
/// publications, subscriber replies, log lines, `STATUS=` messages and probe rounds, a
/// GetStatus that stays fast, descriptors that stay few, and afterwards the last URI
/// announced is the one reported. Nothing leaves the test's two namespaces.
final class RAFloodTests: DaemonTestCase {
    private static let rate = 1000
    private static let seconds = 5
    private static let lastURI = "https://portal.test/\(rate * seconds - 1)"

    private var server: Process?
    private var work: String!

    override func setUpWithError() throws {
        try super.setUpWithError()
        work = try temporaryDirectory("reachd-ra-flood")
        try topology.hostFiles(hosts: "127.0.0.1 localhost\n10.77.0.1 probe.test portal.test\n", nsswitch: "hosts: files\n")
        try topology.configureIPv4()
    }

    override func tearDown() {
        if let daemon, daemon.process.isRunning {
            kill(daemon.process.processIdentifier, SIGTERM)
            let deadline = ContinuousClock.now + .seconds(10)
            while daemon.process.isRunning && ContinuousClock.now < deadline { usleep(10_000) }
            if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) }
        }
        if let server {
            kill(server.processIdentifier, SIGKILL)  // children of the test runner have SIGTERM blocked
            server.waitUntilExit()
        }
        super.tearDown()
    }

    // MARK: Helpers

    /// Waits for the recorder's latest path to satisfy `predicate`; fails the test if it
    /// never does.
    private func waitForPath(_ recorder: PathRecorder, _ daemon: DaemonProcess, _ what: String, timeout: Duration = .seconds(5),
                             file: StaticString = #filePath, line: UInt = #line, _ predicate: (Path) -> Bool) -> Path? {
        let deadline = ContinuousClock.now + timeout
        repeat {
            if let path = recorder.latest, predicate(path) { return path }
            usleep(5_000)
        } while ContinuousClock.now < deadline
        XCTFail("\(what): latest path \(String(describing: recorder.latest)) \(recorder.error ?? "")", file: file, line: line)
        return nil
    }

    /// Lets `duration` pass.
    private func pause(_ daemon: DaemonProcess, _ duration: Duration) {
        Thread.sleep(forTimeInterval: Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }

    /// One GetStatus on a fresh connection, every step bounded by `timeout` (a blocking
    /// connect waits as long as reachd's listen backlog stays full); whether it answered.
    private static func getStatus(_ socketPath: String, timeout: Int = 10) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))  // connect(2) too
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in socketPath.utf8.prefix(bytes.count - 1).enumerated() { bytes[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { return false }
        let call = Array(#"{"method": "io.reachd.Reachability.GetStatus"}"#.utf8) + [0]
        guard call.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == call.count else { return false }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while reply.last != 0 {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { return false }
            reply += buffer[..<count]
        }
        return String(decoding: reply, as: UTF8.self).contains(#""parameters""#)
    }

    /// The most descriptors reachd had open, as a sampling thread saw.
    private final class DescriptorSampler: Sendable {
        let maximum = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let done = Atomic<Bool>(false)
    }

    /// What was seen while the flood lasted.
    private struct Observation {
        var getStatus: [Duration] = []
        var getStatusFailures = 0
        var descriptors = 0
        var sent = ""
    }

    /// Runs the flood from the router namespace and, while it lasts, times GetStatus on a
    /// fresh connection each time, and counts reachd's open descriptors.
    private func flood(_ daemon: DaemonProcess) throws -> Observation {
        let output = Pipe()
        let sender = try Command.launch(
            ["ip", "netns", "exec", topology.router.name, "python3", Paths.repository.appendingPathComponent("Tests/Fixtures/ra_flood.py").path,
             "eth0", "\(Self.rate)", "\(Self.seconds)"], stdout: output
        )
        // Descriptors are counted on a thread of their own: a GetStatus may take seconds.
        let pid = daemon.process.processIdentifier
        let sampler = DescriptorSampler()
        let thread = Thread {
            while !sampler.stop.load(ordering: .relaxed) {
                let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
                sampler.maximum.max(open, ordering: .relaxed)
                usleep(2_000)
            }
            sampler.done.store(true, ordering: .relaxed)
        }
        thread.start()
        var seen = Observation()
        let clock = ContinuousClock()
        while sender.isRunning {
            let started = clock.now
            if Self.getStatus(daemon.socketPath) { seen.getStatus.append(clock.now - started) } else { seen.getStatusFailures += 1 }
            usleep(10_000)
        }
        sender.waitUntilExit()
        sampler.stop.store(true, ordering: .relaxed)
        while !sampler.done.load(ordering: .relaxed) { usleep(1_000) }
        seen.descriptors = sampler.maximum.load(ordering: .relaxed)
        seen.sent = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return seen
    }

    private static func percentile(_ values: [Duration], _ fraction: Double) -> Duration {
        let sorted = values.sorted()
        return sorted.isEmpty ? .zero : sorted[min(sorted.count - 1, Int(fraction * Double(sorted.count)))]
    }

    // MARK: Tests

    /// Default configuration (RAs read, nothing fetched): a flood of new URIs costs a few
    /// publications, not one per RA; GetStatus stays fast; the last URI is reported.
    func testVaryingURIFloodIsBoundedAndEndsOnTheLastURI() async throws {
        let (daemon, client) = try startDaemon(extraArguments: ["--log-level", "info"])
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "first answer") { _ in true }
        try await topology.waitForLinkLocal()
        let (repliesBefore, statusesBefore, logBefore) = (recorder.replies.count, daemon.notify.statuses.count, daemon.log.split(separator: "\n").count)

        let seen = try flood(daemon)
        XCTAssertEqual(seen.sent, "sent \(Self.rate * Self.seconds) \(Self.lastURI)\n")
        let replies = recorder.replies.count - repliesBefore
        let statuses = daemon.notify.statuses.count - statusesBefore
        let logLines = daemon.log.split(separator: "\n").count - logBefore
        let p99 = Self.percentile(seen.getStatus, 0.99)
        print("RA flood \(Self.rate)/s for \(Self.seconds) s: \(replies) replies, \(statuses) STATUS=, \(logLines) log lines, " +
              "GetStatus p50 \(Self.percentile(seen.getStatus, 0.5)) p99 \(p99) (\(seen.getStatus.count) calls, \(seen.getStatusFailures) failed), " +
              "\(seen.descriptors) descriptors")
        // 3 at once, then one every 2 s: about 6 over 5 s. Before: about one per RA.
        XCTAssertLessThanOrEqual(replies, 12, "subscriber replies during the flood")
        XCTAssertLessThanOrEqual(statuses, 12, "STATUS= messages during the flood")
        XCTAssertLessThanOrEqual(logLines, 12, "log lines during the flood")
        XCTAssertEqual(seen.getStatusFailures, 0)
        XCTAssertGreaterThan(seen.getStatus.count, 20, "GetStatus was asked throughout")
        XCTAssertLessThan(p99, .milliseconds(200), "GetStatus p99 during the flood")

        // The last URI was held over budget: it is applied when the link's budget refills.
        let settled = waitForPath(recorder, daemon, "the last URI announced is reported") {
            $0.captivePortal?.apiURI == Self.lastURI
        }
        XCTAssertNotNil(settled)
        // The same URI again and again is no news at all.
        let quietBefore = recorder.replies.count
        let repeated = try runCommand(["ip", "netns", "exec", topology.router.name, "python3",
                                       Paths.repository.appendingPathComponent("Tests/Fixtures/ra_flood.py").path,
                                       "eth0", "500", "1", Self.lastURI + "?"])
        XCTAssertTrue(repeated.hasPrefix("sent 500"))
        pause(daemon, .milliseconds(300))
        XCTAssertLessThanOrEqual(recorder.replies.count - quietBefore, 4, "500 new URIs: a burst at most")
        _ = waitForPath(recorder, daemon, "then the last of them") { $0.captivePortal?.apiURI == Self.lastURI + "?499" }
        // The reply can reach the test before that publication's log line does: let it land.
        pause(daemon, .milliseconds(300))
        let steady = recorder.replies.count
        let steadyLog = daemon.log.split(separator: "\n").count
        for _ in 0..<3 {
            _ = try runCommand(["ip", "netns", "exec", topology.router.name, "python3",
                                Paths.repository.appendingPathComponent("Tests/Fixtures/send_ra.py").path, "eth0", Self.lastURI + "?499"])
        }
        pause(daemon, .milliseconds(300))
        XCTAssertEqual(recorder.replies.count, steady, "a repeated URI is no publication")
        XCTAssertEqual(daemon.log.split(separator: "\n").count, steadyLog, "nor a log line")
    }

    /// Probes and the RFC 8908 API on, the probe server in the router namespace: each new
    /// URI would start a round. Rounds stay few, superseded ones are cancelled and their
    /// sockets closed, so reachd's descriptors stay bounded and the probe server sees a
    /// bounded number of requests; GetStatus stays fast.
    func testProbeRoundsAndDescriptorsStayBoundedUnderFlood() async throws {
        guard Command.exists("openssl") else { return XCTFail("openssl is needed (scripts/bootstrap --test installs it)") }
        let madeCertificate = try TestCertificate(in: work, commonName: "portal.test")
        let certificate = madeCertificate.certificate
        let state = work + "/state.json"
        try #"{"http": "204", "https": "204", "api": {"captive": true, "user-portal-url": "https://portal.test/login"}}"#
            .write(toFile: state, atomically: true, encoding: .utf8)
        server = try topology.launchRouterServer("probe_server.py", [state] + madeCertificate.serverArguments)
        let configuration = work + "/reachd.toml"
        try """
            [probe]
            url = "http://probe.test/generate_204"
            timeout = 2
            families = ["ipv4"]
            [captive-portal]
            fetch-api = true
            [captive-portal.trust]
            pinning = "certificate"
            pinned-certificates = ["\(certificate)"]
            """.write(toFile: configuration, atomically: true, encoding: .utf8)
        let (daemon, client) = try startDaemon(extraArguments: ["--config", configuration, "--log-level", "info"])
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "probed: full") { $0.connectivity == .full }
        try await topology.waitForLinkLocal()
        let requestLog = state + ".log"
        try? FileManager.default.removeItem(atPath: requestLog)

        let seen = try flood(daemon)
        XCTAssertTrue(seen.sent.hasPrefix("sent \(Self.rate * Self.seconds) "), seen.sent)
        let settled = waitForPath(recorder, daemon, "the last URI announced is reported", timeout: .seconds(8)) {
            $0.captivePortal?.apiURI == Self.lastURI
        }
        XCTAssertNotNil(settled)
        pause(daemon, .seconds(1))  // the last round's requests arrive
        let requests = ((try? String(contentsOfFile: requestLog, encoding: .utf8)) ?? "").split(separator: "\n").count
        let p99 = Self.percentile(seen.getStatus, 0.99)
        print("RA flood with probes: \(requests) probe-server requests, \(seen.descriptors) descriptors at most, " +
              "GetStatus p50 \(Self.percentile(seen.getStatus, 0.5)) p99 \(p99) (\(seen.getStatus.count) calls, \(seen.getStatusFailures) failed)")
        // About 7 rounds (3, then one per 2 s, plus the last), two requests each.
        XCTAssertLessThanOrEqual(requests, 30, "requests the probe server saw")
        // About 15 at rest; probe requests add at most 16 sockets.
        XCTAssertLessThanOrEqual(seen.descriptors, 48, "reachd's open descriptors")
        XCTAssertEqual(seen.getStatusFailures, 0)
        XCTAssertLessThan(p99, .milliseconds(200), "GetStatus p99 during the flood")
    }
}
