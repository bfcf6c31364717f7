import Foundation
import Glibc
import ReachProtocol
import ReachabilityCore
import TestSupport
import XCTest

/// What the GIO module's tests share: the module built (or the one `REACHD_GIO_MODULES`
/// names), PyGObject, and the apps (`Tests/Fixtures/gio_monitor.py`) each test starts.
class GIOModuleTestCase: DaemonTestCase {
    static let ours = "ReachdNetworkMonitor"
    private var apps: [GIOApp] = []

    /// The directory GIO_EXTRA_MODULES names: `.build-gio`, which setUp keeps current with
    /// `make gio`; or `REACHD_GIO_MODULES`, taken as it is (another build of the module, e.g.
    /// an older one to show what a test catches).
    static var modules: String {
        ProcessInfo.processInfo.environment["REACHD_GIO_MODULES"] ?? Paths.repository.appendingPathComponent(".build-gio").path
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try requirePrerequisite(
            (try? Command.run(["/usr/bin/python3", "-c", "import gi; gi.require_version('Gio', '2.0')"]).status) == 0,
            "needs /usr/bin/python3 with PyGObject (python3-gi, gir1.2-glib-2.0; scripts/bootstrap --test)")
        if ProcessInfo.processInfo.environment["REACHD_GIO_MODULES"] != nil {
            try requirePrerequisite(FileManager.default.fileExists(atPath: Self.modules + "/libgioreachd.so"),
                                    "REACHD_GIO_MODULES=\(Self.modules) holds no libgioreachd.so")
            return
        }
        // `make test` built it already; make only checks it is current.
        let built = try Command.run(["make", "--no-print-directory", "-C", Paths.repository.path, "gio"])
        if built.status != 0 { throw CommandFailed(command: "make gio", status: built.status, stderr: built.stdout + built.stderr) }
    }

    override func tearDown() {
        apps.forEach { $0.stop() }
        apps = []
        super.tearDown()
    }

    /// Starts the app in `namespace` (default: the host's): on our module (reachd's socket
    /// `socket`), or with `GIO_USE_NETWORK_MONITOR=backend` on one of GLib's.
    func launchApp(in namespace: NetworkNamespace? = nil, socket: String?, backend: String? = nil) throws -> (GIOApp, AppLine) {
        var environment = ["GIO_EXTRA_MODULES": Self.modules]
        var unset: [String] = []
        if let socket { environment["REACHD_SOCKET"] = socket } else { unset.append("REACHD_SOCKET") }
        if let backend { environment["GIO_USE_NETWORK_MONITOR"] = backend } else { unset.append("GIO_USE_NETWORK_MONITOR") }
        let app = try GIOApp(namespace: namespace ?? topology.host, environment: environment, unset: unset)
        apps.append(app)
        let first = try XCTUnwrap(app.next { $0.event == "start" }, "the app's first line")
        return (app, first)
    }
}

/// The GIO network monitor module (`gio/`, docs/gio-module.md) inside a real GLib app:
/// `Tests/Fixtures/gio_monitor.py` (PyGObject, `Gio.NetworkMonitor.get_default()`) in the
/// host namespace beside the real daemon, and beside the same app on GLib's own netlink
/// backend where the two are compared. `GIOModuleGuestTests` holds issue 46's cases.
final class GIOModuleIntegrationTests: GIOModuleTestCase {
    // MARK: Helpers

    /// What GLib should say for reachd's path (the table in docs/gio-module.md).
    private func expected(_ path: Path) -> (available: Bool, connectivity: String, metered: Bool) {
        let available = path.status == .satisfied
        let connectivity: String
        switch path.connectivity {
        case _ where !available: connectivity = "local"
        case .portal: connectivity = "portal"
        // none / local on a satisfied path: LIMITED, a pair GLib documents (issue 46).
        case .limited, Connectivity.none, .local: connectivity = "limited"
        default: connectivity = "full"
        }
        return (available, connectivity, path.isExpensive || path.isConstrained)
    }

    private func configuration(_ text: String) throws -> String {
        let path = try temporaryDirectory("reachd-gio") + "/reachd.toml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    // MARK: Tests

    /// With the module, GIO picks it (priority 35, no NetworkManager here) and its first
    /// answer is reachd's GetStatus, mapped.
    func testModuleIsChosenAndStartsWithReachdsAnswer() async throws {
        try topology.configureIPv4()
        let (daemon, client) = try startDaemon()
        let status = try await client.status()
        let (_, first) = try launchApp(socket: daemon.socketPath)
        XCTAssertEqual(first.type, Self.ours)
        let want = expected(status.path)
        XCTAssertEqual(first.available, want.available)
        XCTAssertEqual(first.connectivity, want.connectivity)
        XCTAssertEqual(first.metered, want.metered)
        XCTAssertEqual(first.available, true)
        XCTAssertLessThan(first.elapsed ?? 99, 1, "get_default() with reachd answering")
    }

    /// Where GLib's netlink backend is wrong: the route stays but cannot carry traffic. The
    /// module follows reachd (not available, network-changed arrives); what netlink said is
    /// printed beside it.
    func testWhereNetlinkIsWrongTheModuleFollowsReachd() async throws {
        try topology.configureIPv4()
        let (daemon, _) = try startDaemon()
        let (module, moduleStart) = try launchApp(socket: daemon.socketPath)
        let (netlink, netlinkStart) = try launchApp(socket: nil, backend: "netlink")
        XCTAssertEqual(moduleStart.type, Self.ours)
        XCTAssertEqual(netlinkStart.type, "GNetworkMonitorNetlink")
        XCTAssertEqual(moduleStart.available, true)

        let cases: [(name: String, breakIt: () throws -> Void, repair: () throws -> Void)] = [
            ("carrier lost, route kept",
             { try self.topology.router.ip("link", "set", "eth0", "down") },
             { try self.topology.router.ip("link", "set", "eth0", "up") }),
            ("blackhole default route",
             { try self.topology.host.ip("route", "replace", "blackhole", "default") },
             { try self.topology.host.ip("route", "replace", "default", "via", "10.77.0.1", "dev", "eth0") }),
            ("default route only in table 100, no rule uses it",
             { try self.topology.host.ip("route", "del", "default")
               try self.topology.host.ip("route", "add", "default", "via", "10.77.0.1", "dev", "eth0", "table", "100") },
             { try self.topology.host.ip("route", "del", "default", "table", "100")
               try self.topology.host.ip("route", "add", "default", "via", "10.77.0.1", "dev", "eth0") }),
        ]
        for test in cases {
            try test.breakIt()
            let moduleLine = module.next(timeout: .seconds(5)) { $0.event == "changed" && $0.available == false }
            XCTAssertNotNil(moduleLine, "\(test.name): the module's network-changed to unavailable")
            usleep(300_000)  // netlink's own events have long arrived; give its loop time all the same
            let netlinkSaid = netlink.state()
            print("gio: \(test.name): module available=\(String(describing: moduleLine?.available)) "
                  + "connectivity=\(moduleLine?.connectivity ?? "-") (network-changed: \(moduleLine != nil)); "
                  + "netlink available=\(String(describing: netlinkSaid?.available)) connectivity=\(netlinkSaid?.connectivity ?? "-")")
            try test.repair()
            XCTAssertNotNil(module.next(timeout: .seconds(5)) { $0.event == "changed" && $0.available == true },
                            "\(test.name) repaired: available again")
        }
    }

    /// Where both are right (the default route removed, then added), both follow.
    func testDefaultRouteRemovedAndAddedBothFollow() async throws {
        try topology.configureIPv4()
        let (daemon, _) = try startDaemon()
        let (module, _) = try launchApp(socket: daemon.socketPath)
        let (netlink, _) = try launchApp(socket: nil, backend: "netlink")
        try topology.host.ip("route", "del", "default")
        let moduleDown = module.next { $0.event == "changed" && $0.available == false }
        let netlinkDown = netlink.next { $0.event == "changed" && $0.available == false }
        XCTAssertNotNil(moduleDown, "module: unavailable")
        XCTAssertNotNil(netlinkDown, "netlink: unavailable")
        XCTAssertEqual(moduleDown?.connectivity, "local")
        try topology.host.ip("route", "add", "default", "via", "10.77.0.1", "dev", "eth0")
        XCTAssertNotNil(module.next { $0.event == "changed" && $0.available == true }, "module: available")
        XCTAssertNotNil(netlink.next { $0.event == "changed" && $0.available == true }, "netlink: available")
        print("gio: default route removed/added: module \(String(describing: moduleDown?.available))→true, "
              + "netlink \(String(describing: netlinkDown?.available))→true")
    }

    /// can_reach (CheckTarget, mapped) agrees with ping: the router answers; an address
    /// with no route (the default route removed) is NETWORK_UNREACHABLE.
    func testCanReachAgreesWithPing() async throws {
        try topology.configureIPv4()
        let (daemon, _) = try startDaemon()
        let (app, _) = try launchApp(socket: daemon.socketPath)

        let router = app.reach("10.77.0.1")
        let pingRouter = try topology.host.ping("10.77.0.1")
        XCTAssertEqual(router?.reachable, true, "\(String(describing: router))")
        XCTAssertTrue(pingRouter, "ping 10.77.0.1")

        try topology.host.ip("route", "del", "default")
        _ = app.next { $0.event == "changed" && $0.available == false }
        let far = app.reach("10.99.0.1")
        let pingFar = try topology.host.ping("10.99.0.1")
        XCTAssertEqual(far?.reachable, false, "\(String(describing: far))")
        XCTAssertEqual(far?.error, "g-io-error-quark:network-unreachable")
        XCTAssertFalse(pingFar, "ping 10.99.0.1 without a route")
        print("gio: can_reach 10.77.0.1 → \(String(describing: router?.reachable)) (ping \(pingRouter)); "
              + "10.99.0.1 → \(String(describing: far?.reachable)) \(far?.error ?? "") (ping \(pingFar))")
    }

    /// An interface configured expensive makes the monitor metered.
    func testExpensiveInterfaceIsMetered() async throws {
        try topology.configureIPv4()
        let toml = try configuration("""
            [[interfaces.override]]
            match = "eth0"
            expensive = true
            """)
        let (daemon, client) = try startDaemon(extraArguments: ["--config", toml])
        let status = try await client.status()
        XCTAssertTrue(status.path.isExpensive)
        let (_, first) = try launchApp(socket: daemon.socketPath)
        XCTAssertEqual(first.type, Self.ours)
        XCTAssertEqual(first.metered, true)
        XCTAssertEqual(first.available, true)
    }

    /// Connectivity from reachd's probes (a probe server in the router namespace): full is
    /// FULL, a redirect is PORTAL, a failed probe LIMITED, and back.
    func testConnectivityFullPortalAndLimited() async throws {
        try topology.configureIPv4()
        let work = try temporaryDirectory("reachd-gio-probe")
        let state = work + "/state.json"
        try #"{"http": "204"}"#.write(toFile: state, atomically: true, encoding: .utf8)
        try topology.hostFiles(hosts: "127.0.0.1 localhost\n10.77.0.1 probe.test portal.test\n", nsswitch: "hosts: files\n")
        let server = try topology.launchRouterServer("probe_server.py", [state])
        defer {
            kill(server.processIdentifier, SIGKILL)  // children of the test runner have SIGTERM blocked
            server.waitUntilExit()
        }
        let toml = try configuration("""
            [probe]
            url = "http://probe.test/generate_204"
            timeout = 2
            initial-delay = 1
            maximum-delay = 2
            families = ["ipv4"]
            """)
        let (daemon, client) = try startDaemon(extraArguments: ["--config", toml])
        for _ in 0..<50 {
            if try await client.status().path.connectivity == .full { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let reachdSays = try await client.status().path.connectivity
        XCTAssertEqual(reachdSays, .full)
        let (app, first) = try launchApp(socket: daemon.socketPath)
        XCTAssertEqual(first.connectivity, "full", "reachd says \(reachdSays)")

        try #"{"http": "redirect"}"#.write(toFile: state, atomically: true, encoding: .utf8)
        XCTAssertEqual(try reachctl(["probe", "--socket", daemon.socketPath]).status, 0)
        let portal = app.next { $0.event == "changed" && $0.connectivity == "portal" }
        XCTAssertNotNil(portal, "a redirect: PORTAL")
        XCTAssertEqual(portal?.available, true)

        try #"{"http": "500"}"#.write(toFile: state, atomically: true, encoding: .utf8)
        XCTAssertEqual(try reachctl(["probe", "--socket", daemon.socketPath]).status, 0)
        let limited = app.next { $0.event == "changed" && $0.connectivity == "limited" }
        XCTAssertNotNil(limited, "the probe fails (500): LIMITED")
        XCTAssertEqual(limited?.available, true, "a failed probe leaves the path satisfied")

        try #"{"http": "204"}"#.write(toFile: state, atomically: true, encoding: .utf8)
        XCTAssertEqual(try reachctl(["probe", "--socket", daemon.socketPath]).status, 0)
        XCTAssertNotNil(app.next { $0.event == "changed" && $0.connectivity == "full" }, "204 again: FULL")
        print("gio: connectivity full → \(first.connectivity ?? "-"), portal → \(portal?.connectivity ?? "-"), "
              + "limited → \(limited?.connectivity ?? "-")")
    }

    /// No reachd socket: init fails at once, GIO picks another implementation, and the app
    /// works (can_reach answers) without waiting.
    func testNoSocketStepsAside() throws {
        try topology.configureIPv4()
        let missing = try temporaryDirectory("reachd-gio-none") + "/io.reachd.Reachability"
        let started = ContinuousClock.now
        let (app, first) = try launchApp(socket: missing)
        let startup = ContinuousClock.now - started
        XCTAssertNotEqual(first.type, Self.ours)
        XCTAssertLessThan(first.elapsed ?? 99, 1, "get_default() without reachd")
        let reached = app.reach("10.77.0.1")
        XCTAssertEqual(reached?.reachable, true, "\(String(describing: reached))")
        print("gio: no socket: \(first.type ?? "-") chosen, get_default() took \(first.elapsed ?? -1) s "
              + "(app start with interpreter \(startup)); can_reach 10.77.0.1 → \(String(describing: reached?.reachable))")
    }

    /// A reachd older than SubscribeSummary (a stand-in answering MethodNotFound to it, a
    /// canned path to GetStatus and Subscribe): the module falls back to those two and
    /// answers from the path.
    func testOlderReachdWithoutSummaryIsFollowedThroughSubscribe() throws {
        let directory = try temporaryDirectory("reachd-gio-older")
        let socket = directory + "/io.reachd.Reachability"
        let path = Path(status: .satisfied, reachability: .reachableViaWired, flags: [.reachable], primaryInterface: "eth0",
                        primaryInterfaceType: .wiredEthernet, availableInterfaces: ["eth0"], supportsIPv4: true, isExpensive: true,
                        connectivity: .portal, captivePortal: CaptivePortal(captive: true))
        let status = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(
            StatusReply(sequence: 1, instance: "older", path: path, changes: [])))
        let replies = directory + "/replies.json"
        try JSONSerialization.data(withJSONObject: [
            ReachabilityInterface.Method.getStatus: status, ReachabilityInterface.Method.subscribe: status,
        ]).write(to: URL(fileURLWithPath: replies))
        let ready = Pipe()
        let stub = try Command.launch(
            ["python3", Paths.repository.appendingPathComponent("Tests/Fixtures/canned_reachd.py").path, socket, replies], stdout: ready)
        defer {
            kill(stub.processIdentifier, SIGKILL)
            stub.waitUntilExit()
        }
        XCTAssertTrue(String(decoding: ready.fileHandleForReading.availableData, as: UTF8.self).hasPrefix("ready"))

        let (app, first) = try launchApp(socket: socket)
        XCTAssertEqual(first.type, Self.ours, "MethodNotFound to SubscribeSummary is no reason to step aside")
        XCTAssertEqual(first.available, true)
        XCTAssertEqual(first.connectivity, "portal")
        XCTAssertEqual(first.metered, true)
        XCTAssertNil(app.next(timeout: .milliseconds(500)) { $0.event == "changed" }, "Subscribe's first reply changes nothing")
        XCTAssertEqual(app.state()?.connectivity, "portal", "still connected, still the same answer")
        print("gio: a reachd without SubscribeSummary: \(first.type ?? "-") chosen, connectivity \(first.connectivity ?? "-"), "
              + "metered \(first.metered.map(String.init) ?? "-") from GetStatus and Subscribe")
    }

    /// reachd restarted under the app: no network-changed when nothing changed, exactly
    /// one when the network changed while it was gone, and changes arrive afterwards.
    func testReachdRestartIsSurvived() async throws {
        try topology.configureIPv4()
        let (daemon, _) = try startDaemon()
        let (app, first) = try launchApp(socket: daemon.socketPath)
        XCTAssertEqual(first.type, Self.ours)

        daemon.terminate()
        var second = try DaemonProcess.started(in: topology.host, socketPath: daemon.socketPath)
        // The module keeps its answer for a 1 s grace and reconnects when the socket comes
        // back; past the grace GLib's own monitor answers, which says the same here.
        XCTAssertNil(app.next(timeout: .seconds(1.5)) { $0.event == "changed" }, "a restart with nothing changed is silent")
        XCTAssertEqual(app.state()?.available, true)

        second.terminate()
        try topology.host.ip("route", "del", "default")
        XCTAssertNil(app.next(timeout: .milliseconds(300)) { $0.event == "changed" }, "reachd gone: the last answer is kept")
        second = try DaemonProcess.started(in: topology.host, socketPath: daemon.socketPath)
        self.daemon = second
        let restarted = app.next { $0.event == "changed" }
        XCTAssertEqual(restarted?.available, false, "the restart's one change: \(String(describing: restarted))")
        XCTAssertNil(app.next(timeout: .seconds(1)) { $0.event == "changed" }, "only one network-changed for the restart")

        try topology.host.ip("route", "add", "default", "via", "10.77.0.1", "dev", "eth0")
        XCTAssertNotNil(app.next { $0.event == "changed" && $0.available == true }, "changes still arrive")
        print("gio: restart: none for the silent restart, one (available=\(String(describing: restarted?.available))) "
              + "for the restart with a change; network-changed in all: \(app.changes)")
        withExtendedLifetime(daemon) {}
    }
}

/// One line `gio_monitor.py` prints.
struct AppLine: Decodable {
    var event: String
    var type: String?
    var available: Bool?
    var connectivity: String?
    var metered: Bool?
    var changes: Int?
    var elapsed: Double?
    var signalled: Bool?
    var host: String?
    var reachable: Bool?
    var error: String?
    var sync: Bool?
    var n: Int?
    var taskDelay: Double?
    var idleDelay: Double?
    var reached: Int?
    var errors: [String]?
    var afterCancel: Double?
    var addresses: [String]?
}

/// `Tests/Fixtures/gio_monitor.py` running in a namespace: its lines, its stdin.
final class GIOApp {
    private let process: Process
    private let input = Pipe()
    private let lines: LineReader
    /// The `changes` count of the last line read.
    private(set) var changes = 0

    init(namespace: NetworkNamespace, environment: [String: String], unset: [String]) throws {
        let output = Pipe()
        lines = LineReader(output)
        process = try Command.launch(
            ["ip", "netns", "exec", namespace.name, "/usr/bin/python3",
             Paths.repository.appendingPathComponent("Tests/Fixtures/gio_monitor.py").path],
            environment: environment, unset: unset, stdin: input, stdout: output)
    }

    /// The python process itself: env and `ip netns exec` exec it in place, but look, in
    /// case one of them ever forks.
    var pid: Int32 {
        var pid = process.processIdentifier
        for _ in 0..<4 {
            let comm = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? ""
            if comm.hasPrefix("python") { break }
            let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
            guard let child = children.split(separator: " ").first.flatMap({ Int32($0) }) else { break }
            pid = child
        }
        return pid
    }

    /// The next line that satisfies `predicate` (others are read and passed over); nil
    /// after `timeout`.
    func next(timeout: Duration = .seconds(5), _ predicate: (AppLine) -> Bool) -> AppLine? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let text = lines.next(timeout: deadline - ContinuousClock.now) else { return nil }
            guard let line = try? JSONDecoder().decode(AppLine.self, from: Data(text.utf8)) else { continue }
            if let count = line.changes { changes = count }
            if predicate(line) { return line }
        }
        return nil
    }

    /// The monitor's properties now.
    func state() -> AppLine? {
        send("state")
        return next { $0.event == "state" }
    }

    /// can_reach_async on HOST, and its answer.
    func reach(_ host: String) -> AppLine? {
        send("reach \(host)")
        return next(timeout: .seconds(15)) { $0.event == "reach" && $0.host == host }
    }

    /// can_reach_async on the GInetSocketAddress `text` makes (a scope too: fe80::1%eth0).
    func reachAddress(_ text: String) -> AppLine? {
        send("reach-address \(text)")
        return next(timeout: .seconds(15)) { $0.event == "reach" && $0.host == text }
    }

    /// The blocking can_reach on HOST, and its answer with how long it took.
    func reachSync(_ host: String) -> AppLine? {
        send("reach-sync \(host)")
        return next(timeout: .seconds(15)) { $0.event == "reach" && $0.host == host && $0.sync == true }
    }

    /// Sends one command line (gio_monitor.py's docstring lists them).
    func send(_ command: String) {
        try? input.fileHandleForWriting.write(contentsOf: Data((command + "\n").utf8))
    }

    func stop() { process.end(closing: input) }
}

extension NetworkNamespace {
    /// `ping -c1 -W1 ADDRESS` inside the namespace: whether it was answered.
    func ping(_ address: String) throws -> Bool {
        try Command.run(["ip", "netns", "exec", name, "ping", "-c1", "-W1", address]).status == 0
    }
}

extension Process {
    /// Ends a child the test feeds through `input`: its input closed, killed if it still
    /// runs, reaped.
    func end(closing input: Pipe) {
        try? input.fileHandleForWriting.close()
        if isRunning { kill(processIdentifier, SIGKILL) }
        waitUntilExit()
    }
}
