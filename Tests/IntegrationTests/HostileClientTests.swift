import Foundation
import Glibc
import LinuxSystem
import ReachClient
import ReachProtocol
import ReachabilityCore
import TestSupport
import XCTest

/// The real daemon against clients that misbehave on purpose: too many connections,
/// half-sent and oversized messages, deep JSON, floods. Each test is bounded in count and
/// time and stays on the daemon's Unix socket.
final class HostileClientTests: DaemonTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        // The test itself opens over a thousand connections.
        try ProcessResources.raiseDescriptorLimit(to: 8192)
    }

    /// CPU seconds (user + system) the process has used so far.
    private func cpuSeconds(_ pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat[stat.index(after: stat.lastIndex(of: ")")!)...].split(separator: " ")
        return (Double(fields[11])! + Double(fields[12])!) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Resident memory in MiB: all of it (`VmRSS`), or `RssAnon`, the heap and stacks alone.
    private func residentMiB(_ pid: Int32, _ field: String = "VmRSS") throws -> Double {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") }!
        return Double(line.split(separator: " ").dropFirst().first!)! / 1024
    }

    private func lines(_ log: String, containing text: String) -> Int {
        log.split(separator: "\n").filter { $0.contains(text) }.count
    }

    /// One uid may hold 1,024 connections; the next gets ConnectionLimitReached, the
    /// daemon stays idle, logs it once, and another uid is still served.
    func testPerUserConnectionCap() async throws {
        try topology.configureIPv4()
        let (daemon, client) = try startDaemon()
        var held: [VarlinkConnection] = []
        for _ in 0..<1024 { held.append(try VarlinkConnection(path: daemon.socketPath)) }
        // Each is admitted: the last one answers.
        try held.last!.call(ReachabilityInterface.Method.getStatus)
        XCTAssertNil(try held.last!.reply().error)

        let before = try cpuSeconds(daemon.process.processIdentifier)
        var refusals: [String?] = []
        for _ in 0..<20 {
            let extra = try VarlinkConnection(path: daemon.socketPath)
            try? extra.call(ReachabilityInterface.Method.getStatus)
            refusals.append(try? extra.reply().error)
            XCTAssertEqual(extra.next(timeout: 2), .closed)
        }
        XCTAssertEqual(Set(refusals), [ReachabilityInterface.Error.connectionLimitReached])
        usleep(500_000)
        let spent = try cpuSeconds(daemon.process.processIdentifier) - before
        XCTAssertLessThan(spent, 0.5, "refusing 20 clients and idling cost \(spent) s of CPU")
        XCTAssertEqual(lines(daemon.log, containing: "limit on connections per user reached"), 1, daemon.log)

        // Another uid is not affected.
        let nobody = try Command.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                      Paths.product("reachctl"), "status", "--json", "--socket", daemon.socketPath])
        XCTAssertEqual(nobody.status, 0, nobody.stderr)

        // Closing them gives the slots back.
        held.removeAll()
        var status: StatusReply?
        for _ in 0..<50 where status == nil {
            status = try? await client.status()
            if status == nil { usleep(100_000) }
        }
        XCTAssertNotNil(status)
    }

    /// At the descriptor limit reachd pauses accepting (no spin), logs it, and serves
    /// again once descriptors are free.
    func testAcceptBacksOffAtTheDescriptorLimit() async throws {
        try requirePrerequisite(Command.exists("prlimit"), "prlimit (util-linux) is not installed")
        try topology.configureIPv4()
        let daemon = try DaemonProcess(namespace: topology.host, launcher: ["prlimit", "--nofile=64:64"])
        self.daemon = daemon
        XCTAssertTrue(daemon.notify.waitFor("READY=1", timeout: 30), daemon.log)
        var held: [VarlinkConnection] = []
        for _ in 0..<100 { if let connection = try? VarlinkConnection(path: daemon.socketPath) { held.append(connection) } }
        usleep(300_000)
        let before = try cpuSeconds(daemon.process.processIdentifier)
        usleep(2_000_000)
        let spent = try cpuSeconds(daemon.process.processIdentifier) - before
        XCTAssertLessThan(spent, 0.2, "\(spent) s of CPU in 2 s at the descriptor limit: accept is spinning")
        XCTAssertTrue(daemon.log.contains("cannot accept connections: Too many open files"), daemon.log)
        XCTAssertLessThanOrEqual(lines(daemon.log, containing: "cannot accept connections"), 1)
        held.removeAll()
        let client = ReachabilityClient(socketPath: daemon.socketPath)
        var served = false
        for _ in 0..<40 where !served {
            served = (try? await client.status()) != nil
            if !served { usleep(100_000) }
        }
        XCTAssertTrue(served, "served again after the descriptors were freed")
    }

    /// A reachd whose listen backlog is full is busy, not stale: a second reachd must not
    /// take its socket path.
    func testBusySocketIsNotTakenOver() throws {
        try topology.configureIPv4()
        let (first, _) = try startDaemon()
        let identity = try XCTUnwrap(try FileIdentity(of: first.socketPath))
        try first.suspend()
        defer { first.resume() }
        // Fill the backlog (128) with connections nobody accepts.
        var queued: [Int32] = []
        defer { queued.forEach { close($0) } }
        var full = false
        for _ in 0..<1000 {
            guard let fd = try? unixSocket(SOCK_STREAM, path: first.socketPath, .connect, nonBlocking: true) else {
                full = true
                break
            }
            queued.append(fd)
        }
        XCTAssertTrue(full, "the stopped daemon's backlog filled up (\(queued.count) connections queued)")
        let second = try DaemonProcess(namespace: topology.host, extraArguments: ["--socket", first.socketPath])
        second.process.waitUntilExit()
        XCTAssertEqual(second.process.terminationStatus, 1, second.log)
        XCTAssertTrue(second.log.contains("may be served by another reachd"), second.log)
        XCTAssertEqual(try FileIdentity(of: first.socketPath), identity, "the first daemon's socket file is untouched")
    }

    /// Deeply nested JSON is refused in one linear pass; other clients are not slowed.
    func testDeepJSONDoesNotStallOthers() async throws {
        try topology.configureIPv4()
        let (daemon, client) = try startDaemon()
        let deep = #"{"method":"io.reachd.Reachability.GetStatus","parameters":{"x":"#
            + String(repeating: "[", count: 500) + String(repeating: "]", count: 500) + "}}"
        var burst: [UInt8] = []
        for _ in 0..<10 { burst += Array(deep.utf8) + [0] }
        let hostile = try VarlinkConnection(path: daemon.socketPath)
        try hostile.send(rawBytes: burst)
        let started = ContinuousClock.now
        _ = try await client.status()
        let took = ContinuousClock.now - started
        XCTAssertLessThan(took, .milliseconds(200), "GetStatus behind ten 500-deep messages took \(took)")
        XCTAssertEqual(hostile.next(timeout: 2), .closed)
        XCTAssertTrue(daemon.log.contains("nested deeper than 32 levels"), daemon.log)
    }

    /// A call that names `method` twice is ambiguous: refused, not guessed at.
    func testDuplicateKeysAreRefused() throws {
        try topology.configureIPv4()
        let (daemon, _) = try startDaemon()
        let connection = try VarlinkConnection(path: daemon.socketPath)
        try connection.sendAndExpectClose(Array(#"{"method":"io.reachd.Reachability.GetStatus","method":"io.reachd.Reachability.Nope"}"#.utf8) + [0])
        XCTAssertTrue(daemon.log.contains(#"the key "method" appears twice"#), daemon.log)
    }

    /// An exiting reachd removes its own socket file only, never one another reachd
    /// has put at the path since.
    func testExitRemovesOnlyItsOwnSocket() async throws {
        try topology.configureIPv4()
        let (first, _) = try startDaemon()
        // Stopped, the first cannot re-create its deleted socket before the second binds;
        // resumed, it finds a live socket there and leaves it.
        try first.suspend()
        try FileManager.default.removeItem(atPath: first.socketPath)
        let second = try DaemonProcess(namespace: topology.host, extraArguments: ["--socket", first.socketPath])
        defer { second.terminate() }
        XCTAssertTrue(second.notify.waitFor("READY=1", timeout: 30), second.log)
        first.resume()
        try await Task.sleep(for: .milliseconds(300))
        XCTAssertFalse(first.log.contains("listening there again"), first.log)
        XCTAssertEqual(first.terminate(), 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: first.socketPath), "the second daemon's socket survived the first's exit")
        let status = try await ReachabilityClient(socketPath: first.socketPath).status()
        XCTAssertEqual(status.path.status, .satisfied)
    }

    /// A container host's interface list (hundreds of KiB) reaches reachctl.
    func testInterfaceListOfAContainerHost() throws {
        try topology.configureIPv4()
        try topology.host.ipBatch((0..<210).map { "link add ct\($0) type veth peer name cp\($0)" })
        let (daemon, _) = try startDaemon()
        let result = try reachctl(["interfaces", "--json", "--socket", daemon.socketPath])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertGreaterThan(result.stdout.utf8.count, 65536)
        let list = try JSONDecoder().decode(ListInterfacesReply.self, from: Data(result.stdout.utf8))
        XCTAssertEqual(list.interfaces.count, 2 + 420)
    }

    /// Half-sent messages cost bounded memory, are cut off at the deadline, and the
    /// memory goes back once the clients leave.
    func testHalfSentMessagesAreBoundedAndCutOff() async throws {
        try topology.configureIPv4()
        let (daemon, client) = try startDaemon(extraArguments: ["--partial-message-deadline", "3"])
        let pid = daemon.process.processIdentifier
        let baseline = try residentMiB(pid)
        let baselineAnonymous = try residentMiB(pid, "RssAnon")
        let partial = [UInt8](repeating: UInt8(ascii: " "), count: 65_000)
        var held: [VarlinkConnection] = []
        for _ in 0..<1000 {
            guard let connection = try? VarlinkConnection(path: daemon.socketPath) else { continue }
            try? connection.send(rawBytes: partial)
            held.append(connection)
        }
        usleep(500_000)
        let (loaded, loadedAnonymous) = (try residentMiB(pid), try residentMiB(pid, "RssAnon"))
        XCTAssertLessThan(loaded - baseline, 64, "RSS \(baseline) → \(loaded) MiB holding half-sent messages")
        XCTAssertTrue(daemon.log.contains("buffered request bytes per user"), daemon.log)
        _ = try await client.status()  // still served

        // The deadline (3 s) closes the ones still holding a partial message; a loaded
        // machine may run the last timers late, so each close is waited for until 5 s later.
        usleep(3_000_000)
        let giveUp = Date(timeIntervalSinceNow: 5)
        let closed = held.filter { $0.next(timeout: max(0.01, giveUp.timeIntervalSinceNow)) == .closed }.count
        XCTAssertEqual(closed, held.count, "every half-sent connection was closed")
        held.removeAll()
        usleep(3_000_000)
        // The heap is what goes back (malloc_trim); the code the burst ran stays mapped from
        // the page cache, the kernel's to drop, so VmRSS is not the measure here.
        let (after, afterAll) = (try residentMiB(pid, "RssAnon"), try residentMiB(pid))
        print("half-sent messages: RSS \(baseline) → \(loaded) → \(afterAll) MiB, RssAnon \(baselineAnonymous) → \(loadedAnonymous) → \(after) MiB")
        XCTAssertGreaterThan(loadedAnonymous - baselineAnonymous, 2, "the burst took heap (\(baselineAnonymous) → \(loadedAnonymous) MiB): the check below measures something")
        XCTAssertLessThan(after - baselineAnonymous, 2,
                          "RssAnon \(baselineAnonymous) → \(after) MiB (RSS \(baseline) → \(loaded) → \(afterAll)): memory not given back")
    }

    /// Clients that send calls and never read the replies cost bounded memory: a reply
    /// that cannot be written holds the calls behind it, unread. Another client is still
    /// served at once, and a flooder that starts reading gets every reply, in order
    /// (docs/performance.md, "Clients that never read their replies").
    func testClientsThatNeverReadTheirRepliesCostBoundedMemory() async throws {
        try topology.configureIPv4()
        let (daemon, client) = try startDaemon()
        let pid = daemon.process.processIdentifier
        let baseline = try residentMiB(pid)
        let calls = 1400  // 63,000 bytes: what one 64 KiB read can bring
        let call = Array(#"{"method":"io.reachd.Reachability.GetStatus"}"#.utf8) + [VarlinkFraming.terminator]
        let flood = Array(repeatElement(call, count: calls).joined())
        var flooders: [VarlinkConnection] = []
        for _ in 0..<1000 {
            guard let connection = try? VarlinkConnection(path: daemon.socketPath) else { continue }
            try? connection.send(rawBytes: flood)
            flooders.append(connection)
        }
        XCTAssertGreaterThanOrEqual(flooders.count, 990, "the flooders connected")
        // Until reachd has answered what fits and stopped: its CPU still for half a second.
        var cpu = try cpuSeconds(pid)
        for _ in 0..<60 {
            usleep(500_000)
            let now = try cpuSeconds(pid)
            if now == cpu { break }
            cpu = now
        }
        let loaded = try residentMiB(pid)
        print("clients not reading their replies: \(flooders.count) × \(calls) calls, RSS \(baseline) → \(loaded) MiB")
        XCTAssertLessThan(loaded - baseline, 100, "RSS \(baseline) → \(loaded) MiB with \(flooders.count) clients not reading")

        let started = ContinuousClock.now
        _ = try await client.status()
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(1), "another client is served at once")

        var answered = 0
        while answered < calls, case let .message(text) = flooders[0].next(timeout: 5) {
            XCTAssertTrue(text.contains("\"sequence\""), text)
            answered += 1
        }
        XCTAssertEqual(answered, calls, "a flooder that reads gets every reply")
        withExtendedLifetime(flooders) {}
    }

    /// A subscriber that floods calls is closed with one log line, not thousands.
    func testFloodingSubscriberLogsOnce() throws {
        try topology.configureIPv4()
        let (daemon, _) = try startDaemon()
        let connection = try VarlinkConnection(path: daemon.socketPath)
        try connection.call(ReachabilityInterface.Method.subscribe, more: true)
        _ = try connection.status()
        var flood: [UInt8] = []
        for _ in 0..<200_000 { flood += [UInt8(ascii: "x"), 0] }
        try? connection.send(rawBytes: flood)
        XCTAssertEqual(connection.next(timeout: 5), .closed)
        usleep(200_000)
        XCTAssertEqual(lines(daemon.log, containing: "closing connection"), 1, daemon.log)
    }

    /// A stopped daemon still accepts connections: reachctl gives up after its timeout.
    func testReachctlTimesOutOnAStoppedDaemon() throws {
        try topology.configureIPv4()
        let (daemon, _) = try startDaemon()
        try daemon.suspend()
        defer { daemon.resume() }
        let started = ContinuousClock.now
        let result = try reachctl(["status", "--timeout", "1", "--socket", daemon.socketPath])
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("did not answer within 1 s"), result.stderr)
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5))
    }

    /// A deleted socket file is noticed and re-created (a reload checks too); clients
    /// already connected stay.
    func testDeletedSocketIsRecreated() async throws {
        try topology.configureIPv4()
        let (daemon, client) = try startDaemon()
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "subscribed") { $0.status == .satisfied }
        try FileManager.default.removeItem(atPath: daemon.socketPath)
        var status: StatusReply?
        for _ in 0..<50 where status == nil {
            status = try? await client.status()
            if status == nil { usleep(100_000) }
        }
        XCTAssertNotNil(status, "answering at the path again: \(daemon.log)")
        try topology.host.ip("route", "del", "default")
        _ = await expectPath(recorder, "the old subscription still hears changes") { $0.status == .unsatisfied }
    }

    /// Netlink overflow is logged with the resync count.
    func testNetlinkOverflowIsLogged() throws {
        try topology.configureIPv4()
        let (daemon, _) = try startDaemon(extraArguments: ["--receive-buffer-size", "65536"])
        // Stopped while 2,000 route events arrive: its 64 KiB receive buffer must overflow.
        // Each route is to the looked-up 8.8.8.8 (one per table), so the kernel-side route
        // filter lets every one through.
        try daemon.suspend()
        defer { daemon.resume() }
        try topology.host.ipBatch((0..<2_000).map { "route add 8.8.8.8/32 via 10.77.0.1 table \(1000 + $0)" })
        daemon.resume()
        let deadline = Date().addingTimeInterval(10)
        while !daemon.log.contains("netlink events were lost"), Date() < deadline { usleep(100_000) }
        XCTAssertTrue(daemon.log.contains("netlink events were lost (receive buffer overflow)"), daemon.log)
    }
}
