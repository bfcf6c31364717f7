import Foundation
import Glibc
import ReachClient
import ReachabilityCore
import TestSupport
import XCTest

/// reachd reading NetworkManager over D-Bus, end to end: a private system bus (dbus-daemon)
/// with `Tests/Fixtures/networkmanager_stub.py` owning NetworkManager's name and objects,
/// the real daemon pointed at it (`DBUS_SYSTEM_BUS_ADDRESS`), and a GLib app on the GIO
/// module. Debian's real NetworkManager runs in the system suite (Tests/system).
final class NetworkManagerIntegrationTests: DaemonTestCase {
    private var bus: PrivateSystemBus!
    private var stubs: [NetworkManagerStub] = []
    private var apps: [GIOApp] = []

    override func setUpWithError() throws {
        try super.setUpWithError()
        try requirePrerequisite(FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon"), "needs dbus-daemon (dbus-daemon; scripts/bootstrap --test)")
        try requirePrerequisite(
            (try? Command.run(["/usr/bin/python3", "-c", "import gi; gi.require_version('Gio', '2.0')"]).status) == 0,
            "needs /usr/bin/python3 with PyGObject (python3-gi; scripts/bootstrap --test)")
        let built = try Command.run(["make", "--no-print-directory", "-C", Paths.repository.path, "gio"])
        if built.status != 0 { throw CommandFailed(command: "make gio", status: built.status, stderr: built.stdout + built.stderr) }
        bus = try PrivateSystemBus(directory: try temporaryDirectory("reachd-nm-bus"))
    }

    override func tearDown() {
        apps.forEach { $0.stop() }
        stubs.forEach { $0.stop() }
        (apps, stubs) = ([], [])
        bus?.stop()
        bus = nil
        super.tearDown()
    }

    private func startNetworkManager(metered: Int, ip4: Int, ip6: Int = 0) throws -> NetworkManagerStub {
        let stub = try NetworkManagerStub(address: bus.address, interface: "eth0", metered: metered, ip4: ip4, ip6: ip6)
        stubs.append(stub)
        return stub
    }

    private func startReachd(configuration: String? = nil, busAddress: String? = nil, arguments extra: [String] = []) throws -> (DaemonProcess, ReachabilityClient) {
        var arguments = extra
        if let configuration {
            let path = try temporaryDirectory("reachd-nm") + "/reachd.toml"
            try configuration.write(toFile: path, atomically: true, encoding: .utf8)
            arguments += ["--config", path]
        }
        let daemon = try DaemonProcess.started(in: topology.host, extraArguments: arguments,
                                               environment: ["DBUS_SYSTEM_BUS_ADDRESS": busAddress ?? bus.address])
        self.daemon = daemon
        return (daemon, ReachabilityClient(socketPath: daemon.socketPath))
    }

    /// Polls GetStatus until `predicate` holds; the last path either way.
    private func waitForPath(_ client: ReachabilityClient, within seconds: Double = 5, _ predicate: (Path) -> Bool) async throws -> Path {
        let deadline = Date().addingTimeInterval(seconds)
        var path = try await client.status().path
        while !predicate(path), Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))
            path = try await client.status().path
        }
        return path
    }

    private func reachctlStatus(_ daemon: DaemonProcess) throws -> String {
        let result = try reachctl(["status", "--socket", daemon.socketPath])
        return result.stdout
    }

    // MARK: Tests

    /// NetworkManager says eth0 is metered and its check met a portal: reachd's answer says
    /// both with NetworkManager named, and a GLib app on the module reads metered and PORTAL.
    func testPortalAndMeteredReachTheAnswerAndTheModule() async throws {
        try topology.configureIPv4()
        _ = try startNetworkManager(metered: 1, ip4: 2)
        let (daemon, client) = try startReachd()
        let path = try await waitForPath(client) { $0.connectivity == .portal && $0.isExpensive }
        XCTAssertEqual(path.connectivity, .portal)
        XCTAssertEqual(path.connectivityCause, .networkManager)
        XCTAssertNil(path.connectivityCauseSince)
        XCTAssertTrue(path.flags.contains(.interventionRequired))
        XCTAssertTrue(path.isExpensive)
        XCTAssertEqual(path.expensiveReason, .networkManager)
        let status = try reachctlStatus(daemon)
        XCTAssertTrue(status.contains("Connectivity: portal (NetworkManager)"), status)
        XCTAssertTrue(status.contains("Expensive:    yes (NetworkManager)"), status)
        let eth0 = try await interface("eth0", from: client)
        XCTAssertEqual(eth0?.ipv4Connectivity, .portal)
        XCTAssertEqual(eth0?.connectivityCause, .networkManager)
        XCTAssertEqual(eth0?.expensiveReason, .networkManager)

        let app = try GIOApp(namespace: topology.host, environment: [
            "GIO_EXTRA_MODULES": Paths.repository.appendingPathComponent(".build-gio").path, "REACHD_SOCKET": daemon.socketPath,
        ], unset: ["GIO_USE_NETWORK_MONITOR"])
        apps.append(app)
        let first = try XCTUnwrap(app.next { $0.event == "start" })
        XCTAssertEqual(first.type, "ReachdNetworkMonitor")
        XCTAssertEqual(first.connectivity, "portal")
        XCTAssertEqual(first.metered, true)
        XCTAssertEqual(first.available, true)
        print("networkmanager: reachctl status:\n\(status)gio: \(first.type ?? "-") connectivity=\(first.connectivity ?? "-") metered=\(String(describing: first.metered))")
    }

    /// Changes NetworkManager signals are followed; a signal about nothing reachd reads is
    /// not read again; NetworkManager stopping takes its word back, and a restart is followed.
    func testChangesStopsAndRestartsAreFollowed() async throws {
        try topology.configureIPv4()
        let first = try startNetworkManager(metered: 1, ip4: 2)
        let (daemon, client) = try startReachd()
        _ = try await waitForPath(client) { $0.connectivity == .portal }
        let app = try GIOApp(namespace: topology.host, environment: [
            "GIO_EXTRA_MODULES": Paths.repository.appendingPathComponent(".build-gio").path, "REACHD_SOCKET": daemon.socketPath,
        ], unset: ["GIO_USE_NETWORK_MONITOR"])
        apps.append(app)
        XCTAssertEqual(app.next { $0.event == "start" }?.connectivity, "portal")

        try first.set("Ip4Connectivity", 4)
        var path = try await waitForPath(client) { $0.connectivity == .full }
        XCTAssertEqual(path.connectivity, .full, "NM's check passed after the login")
        XCTAssertEqual(path.connectivityCause, .networkManager)
        XCTAssertNotNil(app.next { $0.event == "changed" && $0.connectivity == "full" }, "the module's network-changed to FULL")

        try first.set("Metered", 2)
        path = try await waitForPath(client) { !$0.isExpensive }
        XCTAssertFalse(path.isExpensive, "the user set the connection unmetered")
        XCTAssertNil(path.expensiveReason)
        XCTAssertNotNil(app.next { $0.event == "changed" && $0.metered == false }, "the module's network-changed to not metered")

        let reads = { daemon.log.components(separatedBy: "read NetworkManager").count - 1 }
        let readsBefore = reads()
        try first.noise()
        try await Task.sleep(for: .milliseconds(500))
        XCTAssertEqual(reads(), readsBefore, "a statistics-only PropertiesChanged is not read again")

        first.stop()
        path = try await waitForPath(client) { $0.connectivityCause == nil }
        XCTAssertEqual(path.connectivity, .unknown, "NetworkManager gone: its word is taken back")
        XCTAssertFalse(path.isExpensive)

        _ = try startNetworkManager(metered: 3, ip4: 3)
        path = try await waitForPath(client) { $0.connectivity == .limited }
        XCTAssertEqual(path.connectivity, .limited, "NetworkManager restarted: read again")
        XCTAssertEqual(path.expensiveReason, .networkManager, "guess-yes is metered")
        XCTAssertTrue(daemon.log.contains("NetworkManager read"), daemon.log)
        print("networkmanager: portal → full → unmetered → gone (unknown) → restarted (limited, metered); reads: \(reads())")
    }

    /// Configuration wins: an override's `expensive = false` over NetworkManager's Metered,
    /// and `[network-manager] read = false` reads nothing.
    func testConfigurationWins() async throws {
        try topology.configureIPv4()
        _ = try startNetworkManager(metered: 1, ip4: 2)
        let (_, client) = try startReachd(configuration: """
            [[interfaces.override]]
            match = "eth0"
            expensive = false
            """)
        let path = try await waitForPath(client) { $0.connectivity == .portal }
        XCTAssertEqual(path.connectivity, .portal, "NetworkManager still read")
        XCTAssertFalse(path.isExpensive, "the override wins over NetworkManager's Metered")
        daemon = nil

        let (off, offClient) = try startReachd(configuration: "[network-manager]\nread = false\n")
        try await Task.sleep(for: .milliseconds(500))
        let unread = try await offClient.status().path
        XCTAssertEqual(unread.connectivity, .unknown)
        XCTAssertFalse(unread.isExpensive)
        XCTAssertFalse(off.log.contains("NetworkManager"), off.log)
    }

    /// reachd's long-lived threads are the engine and the event loop (docs/DESIGN.md, "Two
    /// threads, one owner each"): with NetworkManager followed and the lease directories
    /// watched, an idle reachd has those two and no other, and both watches still answer.
    func testAnIdleDaemonHasTwoThreads() async throws {
        try topology.configureIPv4()
        // Metered 4 (guessed no) says nothing of metering, so the lease below decides it.
        let stub = try startNetworkManager(metered: 4, ip4: 2)
        let leases = try temporaryDirectory("reachd-nm-leases")
        let (daemon, client) = try startReachd(arguments: ["--dhclient-leases", leases, "--networkd-leases", leases, "--hook-leases", leases])
        _ = try await waitForPath(client) { $0.connectivity == .portal }
        let threads = try await idleThreads(daemon)
        let names = threads.map(\.name)
        XCTAssertEqual(names.count, 2, "reachd's threads once idle: \(names)")
        XCTAssertEqual(names.first, "reachd", "the engine, on the main thread: \(names)")
        XCTAssertEqual(names.dropFirst().filter { $0.hasPrefix("NIO-ELT-") }.count, 1, "the event loop's thread: \(names)")
        print("threads: an idle reachd with NetworkManager followed and the leases watched has \(threads.count): "
              + threads.map { "\($0.id) \($0.name)" }.joined(separator: ", "))

        try stub.set("Ip4Connectivity", 4)
        let full = try await waitForPath(client) { $0.connectivity == .full }
        XCTAssertEqual(full.connectivity, .full, "NetworkManager is still followed")
        let lease = "lease {\n  interface \"eth0\";\n  fixed-address 10.77.0.2;\n  option vendor-encapsulated-options \"ANDROID_METERED\";\n}\n"
        try lease.write(toFile: leases + "/dhclient.eth0.leases", atomically: true, encoding: .utf8)
        let metered = try await waitForPath(client) { $0.expensiveReason == .dhcp }
        XCTAssertEqual(metered.expensiveReason, .dhcp, "the lease directories are still watched")
        let after = try await idleThreads(daemon).map(\.name)
        XCTAssertEqual(after.count, 2, "reachd's threads once idle again: \(after)")
    }

    /// reachd's threads once two are left, or after 5 s: short-lived ones (BlockingWork's,
    /// such as a lease read) end within moments.
    private func idleThreads(_ daemon: DaemonProcess) async throws -> [(id: String, name: String)] {
        var threads = daemon.threads()
        let deadline = ContinuousClock.now + .seconds(5)
        while threads.count != 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            threads = daemon.threads()
        }
        return threads
    }

    /// No system bus at all: reachd starts and answers as before, and says why at debug level.
    func testWithoutASystemBus() async throws {
        try topology.configureIPv4()
        let missing = try temporaryDirectory("reachd-nm-none") + "/system_bus_socket"
        let (daemon, client) = try startReachd(busAddress: "unix:path=\(missing)")
        let path = try await client.status().path
        XCTAssertEqual(path.status, .satisfied)
        XCTAssertEqual(path.connectivity, .unknown)
        XCTAssertTrue(daemon.log.contains("no system bus: NetworkManager is not read"), daemon.log)
    }
}

/// `Tests/Fixtures/networkmanager_stub.py` on the private bus: NetworkManager's name, root
/// object and one device.
final class NetworkManagerStub {
    private let process: Process
    private let input = Pipe()
    private let lines: LineReader

    init(address: String, interface: String, metered: Int, ip4: Int, ip6: Int) throws {
        let output = Pipe()
        lines = LineReader(output)
        process = try Command.launch(
            ["/usr/bin/python3", Paths.repository.appendingPathComponent("Tests/Fixtures/networkmanager_stub.py").path,
             address, interface, "\(metered)", "\(ip4)", "\(ip6)"],
            stdin: input, stdout: output)
        guard lines.next(timeout: .seconds(10)) == "ready" else {
            stop()
            throw CommandFailed(command: "networkmanager_stub.py", status: 0, stderr: "did not own org.freedesktop.NetworkManager in 10 s")
        }
    }

    /// Sets a device property and emits PropertiesChanged, as NetworkManager does.
    func set(_ property: String, _ value: Int) throws { try send("set \(property) \(value)") }

    /// A PropertiesChanged about a property reachd does not read (the MTU).
    func noise() throws { try send("noise") }

    private func send(_ command: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((command + "\n").utf8))
        guard lines.next(timeout: .seconds(5)) == "done" else {
            throw CommandFailed(command: "networkmanager_stub.py \(command)", status: 0, stderr: "no answer in 5 s")
        }
    }

    /// NetworkManager stops: its name leaves the bus.
    func stop() {
        try? input.fileHandleForWriting.close()
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
