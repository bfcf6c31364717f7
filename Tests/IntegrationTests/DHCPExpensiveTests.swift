import Foundation
import Glibc
import ReachClient
import ReachabilityCore
import TestSupport
import XCTest

/// Option 43 `ANDROID_METERED` from a real DHCP exchange on a real kernel: dnsmasq in the
/// router namespace, a real DHCP client in the host's, reachd reading what the client recorded.
final class DHCPExpensiveTests: DaemonTestCase {
    private var directory = ""
    /// The leases reachd is pointed at (`--dhclient-leases`); the client writes here.
    private var leases = ""
    /// Killed and reaped in `tearDown`, whatever the test did.
    private var background: [BackgroundProcess] = []

    override func setUpWithError() throws {
        try super.setUpWithError()
        try requirePrerequisite(Command.exists("dnsmasq"), "needs dnsmasq (dnsmasq-base; scripts/bootstrap --test)")
        try requirePrerequisite(Command.exists("dhclient"), "needs ISC dhclient (isc-dhcp-client; scripts/bootstrap --test)")
        directory = try temporaryDirectory("reachd-dhcp")
        leases = directory + "/leases"
        try FileManager.default.createDirectory(atPath: leases, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory + "/networkd", withIntermediateDirectories: true)
    }

    override func tearDown() {
        for process in background { process.kill() }
        background = []
        super.tearDown()
    }

    /// reachd in the host namespace, reading leases only from this test's directories.
    private func startReachd() throws -> (DaemonProcess, ReachabilityClient) {
        try startDaemon(extraArguments: ["--dhclient-leases", leases, "--networkd-leases", directory + "/networkd"])
    }

    /// dnsmasq serving `range` on the router's eth0, with option 43 `ANDROID_METERED` when
    /// `metered`; authoritative, so a client asking for an address outside the range gets a NAK.
    @discardableResult
    private func startDnsmasq(metered: Bool, range: (String, String) = ("10.77.0.50", "10.77.0.99")) throws -> BackgroundProcess {
        let run = "\(directory)/dnsmasq-\(background.count)"
        let log = run + ".log"
        let arguments = [
            "ip", "netns", "exec", topology.router.name, "dnsmasq", "--no-daemon", "--conf-file=/dev/null", "--port=0",
            "--interface=eth0", "--bind-interfaces", "--no-ping", "--dhcp-authoritative", "--log-dhcp",
            "--dhcp-range=\(range.0),\(range.1),255.255.255.0,10m", "--dhcp-leasefile=\(run).leases", "--pid-file=\(run).pid",
        ] + (metered ? ["--dhcp-option-force=43,ANDROID_METERED"] : [])
        let server = try BackgroundProcess(arguments, log: log)
        background.append(server)
        try waitUntil("dnsmasq listening (\(log))", timeout: .seconds(5)) {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("DHCP, sockets bound exclusively to interface eth0")
        }
        return server
    }

    /// ISC dhclient on the host's eth0 in the foreground, its lease and pid files in the test's
    /// directory; the default dhclient-script sets the address and the default route.
    private func startDhclient() throws -> BackgroundProcess {
        let client = try BackgroundProcess(
            ["ip", "netns", "exec", topology.host.name, "dhclient", "-d", "-v", "-lf", leases + "/dhclient.eth0.leases",
             "-pf", directory + "/dhclient.pid", "eth0"],
            log: directory + "/dhclient-\(background.count).log"
        )
        background.append(client)
        return client
    }

    /// The complete leases in dhclient's file, oldest first: (address, whether option 43 came).
    private func dhclientLeases() -> [(address: String, metered: Bool)] {
        let text = (try? String(contentsOfFile: leases + "/dhclient.eth0.leases", encoding: .utf8)) ?? ""
        return text.components(separatedBy: "lease {").dropFirst().compactMap { block in
            guard block.contains("}"), let line = block.components(separatedBy: "\n").first(where: { $0.contains("fixed-address ") }) else { return nil }
            let address = line.replacingOccurrences(of: "fixed-address", with: "").trimmingCharacters(in: CharacterSet(charactersIn: " ;"))
            return (address, block.contains("vendor-encapsulated-options"))
        }
    }

    /// Waits for lease number `count` in dhclient's file; returns it and when it was seen.
    private func waitForLease(_ count: Int) throws -> (address: String, metered: Bool, seen: ContinuousClock.Instant) {
        try waitUntil("dhclient's lease \(count)", timeout: .seconds(10)) { dhclientLeases().count >= count }
        let lease = dhclientLeases()[count - 1]
        return (lease.address, lease.metered, ContinuousClock.now)
    }

    /// eth0 as reachd describes it.
    private func eth0(_ client: ReachabilityClient) async throws -> InterfaceDescription? {
        try await interface("eth0", from: client)
    }

    /// Polls reachd until eth0 satisfies `predicate` or `deadline` passes; returns eth0's last view.
    private func eth0(_ client: ReachabilityClient, by deadline: ContinuousClock.Instant,
                      _ predicate: (InterfaceDescription) -> Bool) async throws -> InterfaceDescription? {
        var last: InterfaceDescription?
        repeat {
            last = try await eth0(client)
            if let last, predicate(last) { return last }
            try await Task.sleep(for: .milliseconds(20))
        } while ContinuousClock.now < deadline
        return last
    }

    private func holds(_ address: String) -> (InterfaceDescription) -> Bool {
        { $0.addresses.contains { $0.address == address } }
    }

    private func reachctlStatus(_ daemon: DaemonProcess) throws -> String {
        try reachctl(["status", "--socket", daemon.socketPath]).stdout
    }

    /// A hotspot's lease (option 43 `ANDROID_METERED`) makes eth0, and the path over it,
    /// expensive with reason dhcp within 2 s of dhclient recording it; a new lease from a
    /// server that no longer sends the option (another range: the old address is refused)
    /// makes it not expensive again within 2 s.
    func testDhclientAndroidMeteredLease() async throws {
        let (daemon, client) = try startReachd()
        try startDnsmasq(metered: true)
        var dhclient = try startDhclient()
        let lease = try waitForLease(1)
        XCTAssertTrue(lease.metered, "dnsmasq sent option 43")
        let expensive = try await eth0(client, by: lease.seen + .seconds(2)) { holds(lease.address)($0) && $0.expensiveReason == .dhcp }
        XCTAssertEqual(expensive?.isExpensive, true, "eth0 expensive within 2 s of the lease: \(String(describing: expensive))")
        XCTAssertEqual(expensive?.expensiveReason, .dhcp)
        print("dhcp: expensive \(ContinuousClock.now - lease.seen) after the lease (polled every 20 ms)")
        let path = try await client.status().path
        XCTAssertEqual(path.primaryInterface, "eth0")
        XCTAssertTrue(path.isExpensive)
        XCTAssertEqual(path.expensiveReason, .dhcp)
        let status = try reachctlStatus(daemon)
        XCTAssertTrue(status.contains("Expensive:    yes (dhcp ANDROID_METERED)"), status)
        let interfaces = try reachctl(["interfaces", "--socket", daemon.socketPath]).stdout
        XCTAssertTrue(interfaces.contains("eth0: expensive (dhcp ANDROID_METERED)"), interfaces)
        print("dhcp: the Android hotspot's network (option 43 ANDROID_METERED):\n\(status)")

        // The network changes its mind: its server no longer sends the option and hands out
        // another range, so dhclient's old address is refused and a new lease is recorded.
        dhclient.kill()
        for process in background { process.kill() }
        try startDnsmasq(metered: false, range: ("10.77.0.100", "10.77.0.149"))
        dhclient = try startDhclient()
        let plain = try waitForLease(2)
        XCTAssertFalse(plain.metered, "this server sends no option 43")
        XCTAssertNotEqual(plain.address, lease.address)
        let cheap = try await eth0(client, by: plain.seen + .seconds(2)) { holds(plain.address)($0) && !$0.isExpensive }
        XCTAssertEqual(cheap.map(holds(plain.address)), true, "eth0 holds the new lease's address \(plain.address): \(String(describing: cheap))")
        XCTAssertEqual(cheap?.isExpensive, false, "not expensive within 2 s of a lease without the option: \(String(describing: cheap))")
        XCTAssertNil(cheap?.expensiveReason)
        let after = try await client.status().path
        XCTAssertFalse(after.isExpensive)
    }

    /// A network whose server sends no option 43: eth0 holds its lease and stays not expensive.
    func testDhclientLeaseWithoutOptionIsNotExpensive() async throws {
        let (daemon, client) = try startReachd()
        try startDnsmasq(metered: false)
        _ = try startDhclient()
        let lease = try waitForLease(1)
        XCTAssertFalse(lease.metered)
        let held = try await eth0(client, by: lease.seen + .seconds(2), holds(lease.address))
        XCTAssertEqual(held.map(holds(lease.address)), true, "eth0 holds \(lease.address): \(String(describing: held))")
        // Past every read an address change schedules: still not expensive.
        let deadline = lease.seen + .seconds(2)
        repeat {
            let now = try await eth0(client)
            XCTAssertEqual(now?.isExpensive, false, "a lease without option 43: \(String(describing: now))")
            if now?.isExpensive != false { break }
            try await Task.sleep(for: .milliseconds(50))
        } while ContinuousClock.now < deadline
        let status = try reachctlStatus(daemon)
        XCTAssertTrue(status.contains("Expensive:    no"), status)
        print("dhcp: a plain network (no option 43):\n\(status)")
    }

    /// Polls `condition` every 20 ms; throws once `timeout` passed without it.
    private func waitUntil(_ what: String, timeout: Duration, _ condition: () -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else {
                let logs = (try? FileManager.default.contentsOfDirectory(atPath: directory))?.filter { $0.hasSuffix(".log") }.sorted()
                    .map { "--- \($0):\n" + ((try? String(contentsOfFile: directory + "/" + $0, encoding: .utf8)) ?? "") } ?? []
                throw CommandFailed(command: what, status: 0, stderr: "not within \(timeout)\n" + logs.joined(separator: "\n"))
            }
            usleep(20_000)
        }
    }
}

/// A server or DHCP client started in the background: its own process group, its output to a
/// file, no descriptor of the test's but those, stopped with SIGKILL to the whole group (the
/// scripts it ran too) and reaped with a deadline. Never `Process.waitUntilExit`: Foundation
/// waits for a socket every descendant inherits, and dhclient-script's children keep it.
private final class BackgroundProcess {
    /// Its process id, which is also its process group's.
    let pid: pid_t
    private var reaped = false

    /// glibc's posix_spawn_file_actions_addclosefrom_np (2.34), hidden from Swift's Glibc module.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
            unsafeBitCast($0, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
        }
    }()

    /// Starts `arguments` (the first looked up in PATH), stdout and stderr appended to `log`.
    init(_ arguments: [String], log: String) throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        guard let addCloseFrom = Self.addCloseFrom else {
            throw CommandFailed(command: "posix_spawn", status: 0, stderr: "glibc lacks posix_spawn_file_actions_addclosefrom_np")
        }
        _ = addCloseFrom(&actions, 3)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, environ)
        guard result == 0 else {
            throw CommandFailed(command: arguments.joined(separator: " "), status: result, stderr: String(cString: strerror(result)))
        }
        self.pid = pid
    }

    /// SIGKILL to the process group, then reaps the process, waiting at most 5 s.
    func kill() {
        guard !reaped else { return }
        _ = Glibc.kill(-pid, SIGKILL)
        let deadline = ContinuousClock.now + .seconds(5)
        var status: Int32 = 0
        while ContinuousClock.now < deadline {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid || (result == -1 && errno == ECHILD) { break }
            usleep(2_000)
        }
        reaped = true
    }

    deinit { kill() }
}
