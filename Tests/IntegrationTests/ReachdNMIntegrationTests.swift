import Foundation
import Glibc
import ReachClient
import ReachabilityCore
import TestSupport
import XCTest

/// reachd-nm end to end: a private system bus (dbus-daemon), the real reachd in the host
/// namespace, reachd-nm on the bus, and the reads NetworkManager's clients make, by busctl:
/// snapd's and unattended-upgrades' `Properties.Get` of `Metered` (no auto-start, 2 s
/// timeout), `state()`, a refused change. Debian's nmcli, nm-online and libnm run against it
/// in the system suite (Tests/system).
final class ReachdNMIntegrationTests: DaemonTestCase {
    private var bus: PrivateSystemBus!
    private var directory = ""
    private var answers: [Process] = []

    override func setUpWithError() throws {
        try super.setUpWithError()
        try requirePrerequisite(FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon"), "needs dbus-daemon (dbus-daemon; scripts/bootstrap --test)")
        try requirePrerequisite(Command.exists("busctl"), "needs busctl (systemd)")
        try requireBuiltTools()
        try requirePrerequisite(
            (try? Command.run(["/usr/bin/python3", "-c", "import gi; gi.require_version('Gio', '2.0')"]).status) == 0,
            "needs /usr/bin/python3 with PyGObject (python3-gi; scripts/bootstrap --test)")
        directory = try temporaryDirectory("reachd-nm")
        bus = try PrivateSystemBus(directory: directory)
        // reachd-nm is reachd called by that name.
        try FileManager.default.createSymbolicLink(atPath: directory + "/reachd-nm", withDestinationPath: Paths.products.appendingPathComponent("reachd").path)
    }

    override func tearDown() {
        for process in answers where process.isRunning { kill(process.processIdentifier, SIGKILL) }
        answers.forEach { $0.waitUntilExit() }
        answers = []
        bus?.stop()
        bus = nil
        super.tearDown()
    }

    /// Starts reachd-nm for `socket`; its output goes to `log`.
    private func startAnswer(socket: String, log: String) throws -> Process {
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        let process = try Command.launch([directory + "/reachd-nm", "--socket", socket],
                                         environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address], stdout: output, stderr: output)
        answers.append(process)
        return process
    }

    /// busctl against the private bus, as NetworkManager's passive readers ask: no auto-start, 2 s.
    private func busctl(_ arguments: [String]) throws -> ProcessResult {
        try Command.run(["busctl", "--address=\(bus.address)", "--auto-start=no", "--timeout=2"] + arguments)
    }

    /// A manager property as busctl prints it (`u 70`), or the error.
    private func managerProperty(_ name: String) throws -> String {
        let result = try busctl(["get-property", "org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager", "org.freedesktop.NetworkManager", name])
        return result.status == 0 ? result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) : "error: \(result.stderr)"
    }

    /// Waits until the manager's properties are `expected`; the last reading either way, and how long it took.
    @discardableResult
    private func waitForManager(_ expected: [String: String], within seconds: Double = 5) throws -> (values: [String: String], seconds: Double) {
        let start = Date()
        var values: [String: String] = [:]
        repeat {
            values = try Dictionary(uniqueKeysWithValues: expected.keys.map { ($0, try managerProperty($0)) })
            if values == expected { return (values, Date().timeIntervalSince(start)) }
            usleep(20_000)
        } while Date().timeIntervalSince(start) < seconds
        XCTFail("wanted \(expected), have \(values)")
        return (values, Date().timeIntervalSince(start))
    }

    func testTheReadsFollowReachdThroughACarrierLoss() throws {
        // Before: no owner, so NetworkManager's readers get no answer at all.
        let before = try managerProperty("Metered")
        XCTAssertTrue(before.hasPrefix("error:"), before)
        print("before reachd-nm: Metered read -> \(before)")

        try topology.configureIPv4()
        let (daemon, _) = try startDaemon()
        let log = directory + "/reachd-nm.log"
        _ = try startAnswer(socket: daemon.socketPath, log: log)
        let up = try waitForManager(["State": "u 70", "Metered": "u 2", "PrimaryConnectionType": "s \"802-3-ethernet\"", "Connectivity": "u 0"])
        print("reachd-nm: \(up.values.sorted { $0.key < $1.key })")

        let state = try busctl(["call", "org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager", "org.freedesktop.NetworkManager", "state"])
        XCTAssertEqual(state.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "u 70", state.stderr)
        let device = try busctl(["get-property", "org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager", "org.freedesktop.NetworkManager", "Devices"])
        XCTAssertTrue(device.stdout.hasPrefix("ao 1 \"/org/freedesktop/NetworkManager/Devices/"), device.stdout + device.stderr)
        let objects = try busctl(["call", "org.freedesktop.NetworkManager", "/org/freedesktop", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"])
        XCTAssertTrue(objects.stdout.contains("\"Interface\" s \"eth0\""), objects.stdout + objects.stderr)

        try topology.router.ip("link", "set", "eth0", "down")
        let down = try waitForManager(["State": "u 20", "Metered": "u 0", "PrimaryConnection": "o \"/\""])
        print("carrier lost: State 20 read \(String(format: "%.3f", down.seconds)) s after the link went down")

        try topology.router.ip("link", "set", "eth0", "up")
        try waitForManager(["State": "u 70", "Metered": "u 2"])
        XCTAssertTrue(((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("answering as NetworkManager"))
    }

    func testAConfiguredCostIsMeteredAndChangesAreRefusedAtOnce() throws {
        try topology.configureIPv4()
        let configuration = directory + "/reachd.toml"
        try """
            [[interfaces.override]]
            match = "eth0"
            expensive = true
            """.write(toFile: configuration, atomically: true, encoding: .utf8)
        let (daemon, _) = try startDaemon(extraArguments: ["--config", configuration])
        _ = try startAnswer(socket: daemon.socketPath, log: directory + "/reachd-nm.log")
        try waitForManager(["State": "u 70", "Metered": "u 1"])

        for call in [
            ["org.freedesktop.NetworkManager", "Enable", "b", "false"],
            ["org.freedesktop.NetworkManager", "Sleep", "b", "true"],
            ["org.freedesktop.NetworkManager", "DeactivateConnection", "o", "/org/freedesktop/NetworkManager/ActiveConnection/2"],
        ] {
            let start = Date()
            let result = try busctl(["call", "org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager"] + call)
            let seconds = Date().timeIntervalSince(start)
            XCTAssertNotEqual(result.status, 0, call.joined(separator: " "))
            XCTAssertTrue(result.stderr.contains("read-only"), result.stderr)
            XCTAssertLessThan(seconds, 1, "\(call[1]) refused at once")
        }
        let set = try busctl(["set-property", "org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager",
                              "org.freedesktop.NetworkManager", "WirelessEnabled", "b", "false"])
        XCTAssertNotEqual(set.status, 0)
        XCTAssertEqual(try managerProperty("WirelessEnabled"), "b true")
    }

    func testASecondOwnerIsRefusedAndNetworkManagerTakesTheName() throws {
        try topology.configureIPv4()
        let (daemon, _) = try startDaemon()
        let first = try startAnswer(socket: daemon.socketPath, log: directory + "/first.log")
        try waitForManager(["State": "u 70"])

        // The name has an owner: a second reachd-nm says so and exits 3 (its unit does not restart it).
        let secondLog = directory + "/second.log"
        let second = try startAnswer(socket: daemon.socketPath, log: secondLog)
        let deadline = Date().addingTimeInterval(5)
        while second.isRunning, Date() < deadline { usleep(20_000) }
        XCTAssertFalse(second.isRunning)
        XCTAssertEqual(second.terminationStatus, 3)
        XCTAssertTrue(((try? String(contentsOfFile: secondLog, encoding: .utf8)) ?? "").contains("is NetworkManager running?"))

        // NetworkManager (here: a connection asking for the name with replacement) takes it: reachd-nm steps aside, exit 0.
        let taker = try Command.launch(["/usr/bin/python3", "-c", """
            import sys, gi
            gi.require_version('Gio', '2.0')
            from gi.repository import Gio, GLib
            bus = Gio.DBusConnection.new_for_address_sync(sys.argv[1], Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
            reply = bus.call_sync('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'RequestName',
                                  GLib.Variant('(su)', ('org.freedesktop.NetworkManager', 2 | 4)), None, 0, 2000, None)
            print(reply.unpack()[0], flush=True)
            GLib.MainLoop().run()
            """, bus.address], stdout: FileHandle.nullDevice, stderr: FileHandle.nullDevice)
        answers.append(taker)
        let stepped = Date().addingTimeInterval(5)
        while first.isRunning, Date() < stepped { usleep(20_000) }
        XCTAssertFalse(first.isRunning, "reachd-nm still holds on")
        XCTAssertEqual(first.terminationStatus, 0)
        XCTAssertTrue(((try? String(contentsOfFile: directory + "/first.log", encoding: .utf8)) ?? "").contains("steps aside"))
    }
}
