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
    /// The directory reachd's dhcpcd hook writes (`--hook-leases`; `REACHD_LEASES_DIR`).
    private var hookLeases = ""
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
        // Not created here: the dhcpcd hook creates it, as at boot (/run/reachd-leases).
        hookLeases = directory + "/hook"
    }

    override func tearDown() {
        for process in background { process.kill() }
        background = []
        super.tearDown()
    }

    /// reachd in the host namespace, reading leases only from this test's directories.
    private func startReachd() throws -> (DaemonProcess, ReachabilityClient) {
        try startDaemon(extraArguments: ["--dhclient-leases", leases, "--networkd-leases", directory + "/networkd", "--hook-leases", hookLeases])
    }

    /// dnsmasq serving `range` on the router's eth0, with option 43 `ANDROID_METERED` when
    /// `metered`; authoritative, so a client asking for an address outside the range gets a NAK.
    @discardableResult
    private func startDnsmasq(metered: Bool, range: (String, String)) throws -> BackgroundProcess {
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
    /// directory; the default dhclient-script sets the address and the default route. Returns
    /// the path of its log.
    private func startDhclient() throws -> String {
        let log = directory + "/dhclient-\(background.count).log"
        background.append(try BackgroundProcess(
            ["ip", "netns", "exec", topology.host.name, "dhclient", "-d", "-v", "-lf", leases + "/dhclient.eth0.leases",
             "-pf", directory + "/dhclient.pid", "eth0"],
            log: log
        ))
        return log
    }

    /// A lease dhclient recorded: its address, whether option 43 came, its text.
    private struct Lease: Equatable {
        var address: String
        var metered: Bool
        var text: String
    }

    /// The newest complete lease in dhclient's file.
    private func newestLease() -> Lease? {
        let text = (try? String(contentsOfFile: leases + "/dhclient.eth0.leases", encoding: .utf8)) ?? ""
        return text.components(separatedBy: "lease {").dropFirst().reversed().lazy.compactMap { block -> Lease? in
            guard block.contains("}"), let line = block.components(separatedBy: "\n").first(where: { $0.contains("fixed-address ") }) else { return nil }
            let address = line.replacingOccurrences(of: "fixed-address", with: "").trimmingCharacters(in: CharacterSet(charactersIn: " ;"))
            return Lease(address: address, metered: block.contains("vendor-encapsulated-options"), text: block)
        }.first
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

    /// The network hands out a new lease: the running server and dhclient are killed, a
    /// server started anew (`metered`, `range`) and dhclient again, which asks for its last
    /// address and gets it (same range) or a NAK and another address. Returns the lease once
    /// recorded (dhclient says `bound to` after it wrote it) and when that was seen.
    private func newLease(metered: Bool, range: (String, String)) throws -> (lease: Lease, seen: ContinuousClock.Instant) {
        for process in background { process.kill() }
        try startDnsmasq(metered: metered, range: range)
        let log = try startDhclient()
        try waitUntil("dhclient bound", timeout: .seconds(10)) {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("bound to ")
        }
        let seen = ContinuousClock.now
        return (try XCTUnwrap(newestLease(), "dhclient's lease"), seen)
    }

    /// A hotspot's lease (option 43 `ANDROID_METERED`) makes eth0, and the path over it,
    /// expensive with reason dhcp within 2 s of dhclient recording it. Each new lease decides
    /// again within 2 s: one without the option from another range (the old address refused)
    /// makes it not expensive; with the option again, or without it again, for the same
    /// address (nothing changes on the interface: only the lease file says so) too.
    func testDhclientAndroidMeteredLease() async throws {
        let (daemon, client) = try startReachd()
        let first: (String, String) = ("10.77.0.50", "10.77.0.99"), second: (String, String) = ("10.77.0.100", "10.77.0.149")
        let (lease, leaseSeen) = try newLease(metered: true, range: first)
        XCTAssertTrue(lease.metered, "dnsmasq sent option 43")
        let expensive = try await eth0(client, by: leaseSeen + .seconds(2)) { holds(lease.address)($0) && $0.expensiveReason == .dhcp }
        XCTAssertEqual(expensive?.isExpensive, true, "eth0 expensive within 2 s of the lease: \(String(describing: expensive))")
        XCTAssertEqual(expensive?.expensiveReason, .dhcp)
        print("dhcp: expensive \(ContinuousClock.now - leaseSeen) after the lease (polled every 20 ms)")
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
        let (plain, plainSeen) = try newLease(metered: false, range: second)
        XCTAssertFalse(plain.metered, "this server sends no option 43")
        XCTAssertNotEqual(plain.address, lease.address)
        let cheap = try await eth0(client, by: plainSeen + .seconds(2)) { holds(plain.address)($0) && !$0.isExpensive }
        XCTAssertEqual(cheap.map(holds(plain.address)), true, "eth0 holds the new lease's address \(plain.address): \(String(describing: cheap))")
        XCTAssertEqual(cheap?.isExpensive, false, "not expensive within 2 s of a lease without the option: \(String(describing: cheap))")
        XCTAssertNil(cheap?.expensiveReason)
        let after = try await client.status().path
        XCTAssertFalse(after.isExpensive)

        // The same address leased again, with the option and then without: only the lease
        // file changes (the interface keeps its address).
        for metered in [true, false] {
            let (again, againSeen) = try newLease(metered: metered, range: second)
            XCTAssertEqual(again.address, plain.address, "dhclient asked for its address and got it")
            XCTAssertEqual(again.metered, metered)
            let seen = try await eth0(client, by: againSeen + .seconds(2)) { holds(again.address)($0) && $0.isExpensive == metered }
            XCTAssertEqual(seen?.isExpensive, metered, "a lease for the same address, option 43 \(metered ? "sent" : "absent"): \(String(describing: seen))")
            XCTAssertEqual(seen?.expensiveReason, metered ? .dhcp : nil)
        }
    }

    /// A network whose server sends no option 43: eth0 holds its lease and stays not expensive.
    func testDhclientLeaseWithoutOptionIsNotExpensive() async throws {
        let (daemon, client) = try startReachd()
        let (lease, leaseSeen) = try newLease(metered: false, range: ("10.77.0.50", "10.77.0.99"))
        XCTAssertFalse(lease.metered)
        let held = try await eth0(client, by: leaseSeen + .seconds(2), holds(lease.address))
        XCTAssertEqual(held.map(holds(lease.address)), true, "eth0 holds \(lease.address): \(String(describing: held))")
        // Past every read an address change schedules: still not expensive.
        let deadline = leaseSeen + .seconds(2)
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

    /// The lease watch sleeps while nothing changes: the event loop's thread, which runs it,
    /// makes no system call in 1.5 s; a lease appended to dhclient's file (for an address eth0
    /// holds) wakes it, and eth0 is expensive within 2 s, with no address change to prompt a read.
    func testLeaseWatchSleepsUntilALeaseIsWritten() async throws {
        try requirePrerequisite(Command.exists("strace"), "needs strace (scripts/bootstrap --test)")
        try topology.configureIPv4()
        let (daemon, client) = try startReachd()
        let eth0Now = try await eth0(client)
        XCTAssertEqual(eth0Now?.isExpensive, false)
        let thread = try XCTUnwrap(daemon.threads().first { $0.name.hasPrefix("NIO-ELT") }, "reachd's event loop thread").id
        let leaseFile = leases + "/dhclient.eth0.leases"
        let lease = "lease {\n  interface \"eth0\";\n  fixed-address 10.77.0.2;\n  option vendor-encapsulated-options \"ANDROID_METERED\";\n}\n"

        XCTAssertTrue(FileManager.default.createFile(atPath: leaseFile, contents: nil))
        // The loop also hears the kernel: IPv6 link-local DAD ends with netlink events that
        // rightly wake it, so the quiet is measured after them.
        try await topology.waitForLinkLocal()
        try await Task.sleep(for: .milliseconds(300))  // the read it prompts is done
        let quiet = try await trace(thread: thread, seconds: 1.5) {}
        XCTAssertEqual(quiet.count, 0, "system calls of the idle event loop, which runs the lease watch:\n\(quiet.prefix(20).joined(separator: "\n"))")
        var written = ContinuousClock.now
        let woken = try await trace(thread: thread, seconds: 1.5) {
            // dhclient's way: one write to a file it keeps open, never closed meanwhile.
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: leaseFile, isDirectory: false))
            handle.write(Data(lease.utf8))
            written = ContinuousClock.now
            try await Task.sleep(for: .milliseconds(500))
            try handle.close()
        }
        XCTAssertGreaterThan(woken.count, 0, "the watch woke for the lease written")
        print("dhcp: the lease watch: \(quiet.count) system calls idle over 1.5 s, \(woken.count) over the 1.5 s a lease was written in")
        let expensive = try await eth0(client, by: written + .seconds(2)) { $0.expensiveReason == .dhcp }
        XCTAssertEqual(expensive?.expensiveReason, .dhcp, "expensive with no address change: \(String(describing: expensive))")
    }

    /// The system calls thread `thread` of reachd made while `body` ran and for `seconds` in all.
    private func trace(thread: String, seconds: Double, _ body: () async throws -> Void) async throws -> [Substring] {
        let output = try temporaryDirectory("reachd-dhcp-strace") + "/strace.out"
        // The test runner's children start with SIGINT and SIGTERM blocked: unblock them so
        // timeout's SIGINT makes strace detach and write what it saw.
        let unblocked = "import os, signal, sys; signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM}); os.execvp(sys.argv[1], sys.argv[1:])"
        let tracer = try BackgroundProcess(["python3", "-c", unblocked, "timeout", "-s", "INT", "\(seconds)", "strace", "-qq", "-o", output, "-p", thread],
                                           log: output + ".log")
        // strace prints nothing once attached: the thread's TracerPid says when it is, and a
        // moment more lets it start tracing calls (on a loaded machine that takes a while).
        let attached = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < attached, !Self.isTraced(thread) { try await Task.sleep(for: .milliseconds(20)) }
        try await Task.sleep(for: .milliseconds(100))
        try await body()
        let deadline = ContinuousClock.now + .seconds(seconds + 5)
        var status: Int32 = 0
        while waitpid(tracer.pid, &status, WNOHANG) == 0 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        tracer.kill()
        return ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: "\n")
            // What the thread was blocked in when strace attached (never resumed) and the
            // detach are not calls; a "resumed" line is one that returned: a wakeup.
            .filter { !$0.isEmpty && !$0.contains("<unfinished ...>") && !$0.contains("<detached ...>") }
    }

    /// Whether a tracer is attached to thread `thread` (/proc/TID/status, `TracerPid`).
    private static func isTraced(_ thread: String) -> Bool {
        let status = (try? String(contentsOfFile: "/proc/\(thread)/status", encoding: .utf8)) ?? ""
        return status.split(separator: "\n").contains { $0.hasPrefix("TracerPid:") && $0.split(separator: "\t").last != "0" }
    }

    /// dhcpcd on the host's eth0 in the foreground, IPv4 only, running packaging/dhcpcd-hook
    /// (sourced by a wrapper, `-c`) with `REACHD_LEASES_DIR` at the test's directory. dhcpcd
    /// 9.4.1 keeps its files in /var/lib/dhcpcd and /run/dhcpcd whatever its options, so it
    /// runs in a mount namespace of its own with tmpfs over /run and /var/lib/dhcpcd.
    /// Returns the path of its log; the wrapper says `hook ran: REASON` there after the hook.
    private func startDhcpcd() throws -> String {
        let run = "\(directory)/dhcpcd-\(background.count)"
        let log = run + ".log", wrapper = run + ".sh", config = run + ".conf"
        let hook = Paths.repository.appendingPathComponent("packaging/dhcpcd-hook").path
        try "#!/bin/sh\n. '\(hook)'\necho \"hook ran: $reason\" >>'\(log)'\n".write(toFile: wrapper, atomically: true, encoding: .utf8)
        guard chmod(wrapper, 0o755) == 0 else { throw CommandFailed(command: "chmod \(wrapper)", status: errno, stderr: "") }
        try "noarp\nnoipv4ll\nipv4only\nnodelay\n".write(toFile: config, atomically: true, encoding: .utf8)
        let mounts = "mount -t tmpfs -o mode=0755 tmpfs /run && mount -t tmpfs -o mode=0755 tmpfs /var/lib/dhcpcd && exec \"$@\""
        background.append(try BackgroundProcess(
            ["ip", "netns", "exec", topology.host.name, "unshare", "-m", "sh", "-c", mounts, "sh",
             "dhcpcd", "-B", "-4", "-d", "-f", config, "-c", wrapper, "-e", "REACHD_LEASES_DIR=\(hookLeases)", "eth0"],
            log: log
        ))
        return log
    }

    /// The network hands out a new lease to dhcpcd: the running server and dhcpcd are killed
    /// (dhcpcd's tmpfs goes with it, so it forgets its lease), a server started anew and
    /// dhcpcd again. Returns what the hook wrote and when its run was seen.
    private func newDhcpcdLease(metered: Bool, range: (String, String)) throws -> (lease: String, seen: ContinuousClock.Instant) {
        for process in background { process.kill() }
        try startDnsmasq(metered: metered, range: range)
        let log = try startDhcpcd()
        try waitUntil("dhcpcd's hook ran for BOUND", timeout: .seconds(10)) {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("hook ran: BOUND")
        }
        let seen = ContinuousClock.now
        return (try String(contentsOfFile: hookLeases + "/eth0", encoding: .utf8), seen)
    }

    /// dhcpcd, whose own lease is root's alone, through reachd's hook: a lease with option 43
    /// makes eth0 expensive (reason dhcp) within 2 s of the hook's file; the next lease,
    /// without the option, makes it not expensive within 2 s. The hook's directory does not
    /// exist when reachd starts: the hook makes it at PREINIT, before any address.
    func testDhcpcdHookAndroidMeteredLease() async throws {
        try requirePrerequisite(Command.exists("dhcpcd"), "needs dhcpcd (dhcpcd-base; scripts/bootstrap --test)")
        try requirePrerequisite(!directory.hasPrefix("/run/"), "dhcpcd runs with a tmpfs over /run: TMPDIR must be elsewhere")
        let (daemon, client) = try startReachd()
        let range: (String, String) = ("10.77.0.50", "10.77.0.99")
        let (lease, leaseSeen) = try newDhcpcdLease(metered: true, range: range)
        XCTAssertTrue(lease.contains("VENDOR_SPECIFIC=414e44524f49445f4d455445524544\n"), lease)
        let address = try XCTUnwrap(lease.split(separator: "\n").first { $0.hasPrefix("ADDRESS=") }?.dropFirst("ADDRESS=".count)).description
        let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: hookLeases + "/eth0")[.posixPermissions] as? Int)
        XCTAssertEqual(mode, 0o644, "the hook's file is world-readable")
        let expensive = try await eth0(client, by: leaseSeen + .seconds(2)) { holds(address)($0) && $0.expensiveReason == .dhcp }
        XCTAssertEqual(expensive?.expensiveReason, .dhcp, "eth0 expensive within 2 s of dhcpcd's lease: \(String(describing: expensive))\n\(logs())")
        print("dhcp: dhcpcd: expensive \(ContinuousClock.now - leaseSeen) after the hook wrote the lease (polled every 20 ms)")
        let status = try reachctlStatus(daemon)
        XCTAssertTrue(status.contains("Expensive:    yes (dhcp ANDROID_METERED)"), status)

        let (plain, plainSeen) = try newDhcpcdLease(metered: false, range: range)
        XCTAssertFalse(plain.contains("VENDOR_SPECIFIC="), plain)
        let cheap = try await eth0(client, by: plainSeen + .seconds(2)) { !$0.isExpensive }
        XCTAssertEqual(cheap?.isExpensive, false, "not expensive within 2 s of a lease without the option: \(String(describing: cheap))\n\(logs())")
        print("dhcp: dhcpcd: not expensive \(ContinuousClock.now - plainSeen) after a lease without the option")
    }

    /// What the servers and clients said, and dhclient's lease file, for a failure's message.
    private func logs() -> String {
        let logs = (try? FileManager.default.contentsOfDirectory(atPath: directory))?.filter { $0.hasSuffix(".log") }.sorted()
            .map { "--- \($0):\n" + ((try? String(contentsOfFile: directory + "/" + $0, encoding: .utf8)) ?? "") } ?? []
        let leaseFile = (try? String(contentsOfFile: leases + "/dhclient.eth0.leases", encoding: .utf8)) ?? "(none)"
        return logs.joined(separator: "\n") + "\n--- dhclient's leases:\n" + leaseFile
    }

    /// Polls `condition` every 20 ms; throws once `timeout` passed without it.
    private func waitUntil(_ what: String, timeout: Duration, _ condition: () -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { throw CommandFailed(command: what, status: 0, stderr: "not within \(timeout)\n" + logs()) }
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

    /// SIGKILL to the process group, then reaps the process and waits for the group to be
    /// gone (dhcpcd's privilege-separated helpers), at most 5 s in all.
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
        while ContinuousClock.now < deadline && Glibc.kill(-pid, 0) == 0 { usleep(2_000) }
        reaped = true
    }

    deinit { kill() }
}
