import Foundation
import ReachClient
import ReachProtocol
import ReachabilityCore
import TestSupport
import XCTest

/// reachd as a systemd service: notify protocol, reload, watchdog, socket activation,
/// configuration, and `reachctl wait` — all against the real binaries and kernel.
final class ServiceIntegrationTests: DaemonTestCase {
    /// Writes a configuration file (removed when the test ends) and returns its path.
    private func writeConfig(_ text: String) throws -> String {
        let path = try temporaryDirectory("reachd-config") + "/reachd.toml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Two defaults: eth0 (metric 100) and veth9 (metric 50), with `veth*` ignored by the
    /// configuration file, so eth0 is primary until a reload stops ignoring veth9.
    private func startWithIgnoredBetterRoute() throws -> (DaemonProcess, ReachabilityClient, String) {
        try topology.configureIPv4(defaultRoute: false)
        try topology.host.ip("route", "add", "default", "via", "10.77.0.1", "dev", "eth0", "metric", "100")
        try topology.addPair(hostName: "veth9", routerName: "veth9r", prefix: "10.79.0")
        try topology.host.ip("route", "add", "default", "via", "10.79.0.1", "dev", "veth9", "metric", "50")
        let config = try writeConfig("[interfaces]\nignore = [\"veth*\"]\n")
        let (daemon, client) = try startDaemon(extraArguments: ["--config", config])
        return (daemon, client, config)
    }

    func testReloadWithGoodAndBadConfigKeepsSubscribers() async throws {
        let (daemon, client, config) = try startWithIgnoredBetterRoute()
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "veth ignored") { $0.primaryInterface == "eth0" }

        // Good config: stop ignoring veth*; the better-metric veth9 becomes primary.
        try "[interfaces]\nignore = []\n".write(toFile: config, atomically: true, encoding: .utf8)
        kill(daemon.process.processIdentifier, SIGHUP)
        _ = await expectPath(recorder, "reload applied, same subscription") { $0.primaryInterface == "veth9" }
        XCTAssertTrue(daemon.notify.waitUntil(timeout: 3) { lines in
            guard let reloading = lines.firstIndex(of: "RELOADING=1") else { return false }
            return lines[reloading...].contains("READY=1") && lines.contains { $0.hasPrefix("MONOTONIC_USEC=") }
        }, "RELOADING=1 + MONOTONIC_USEC, then READY=1: \(daemon.notify.lines)")

        // Bad configs: refused, running configuration kept, reason in STATUS=. The second made
        // the TOML parser abort: refused like any bad one.
        let bad = [("[interfaces]\nignore = 5\n", "\(config):2:"), ("[[[ broken\n", "\(config):1:3:")]
        for (text, location) in bad {
            try text.write(toFile: config, atomically: true, encoding: .utf8)
            kill(daemon.process.processIdentifier, SIGHUP)
            XCTAssertTrue(daemon.notify.waitUntil(timeout: 3) { $0.contains { $0.hasPrefix("STATUS=config reload failed: \(location)") } },
                          "\(daemon.notify.lines)")
            XCTAssertTrue(daemon.process.isRunning)
            let status = try await client.status()
            XCTAssertEqual(status.path.primaryInterface, "veth9", "the running configuration is kept")
        }
        XCTAssertNil(recorder.error, "the subscriber stayed connected through every reload")
        XCTAssertTrue(daemon.log.contains("reload"), daemon.log)
    }

    /// `reachctl reload` (what `systemctl reload` runs) returns once the reload is applied —
    /// its effect is visible on the next call, no waiting — and exits 1 with the reason when
    /// the configuration is refused. Only root and reachd's own user may reload.
    func testReachctlReloadReturnsWhenDoneAndFailsWhenRefused() async throws {
        let (daemon, client, config) = try startWithIgnoredBetterRoute()
        let before = try await client.status()
        XCTAssertEqual(before.path.primaryInterface, "eth0")

        try "[interfaces]\nignore = []\n".write(toFile: config, atomically: true, encoding: .utf8)
        let applied = try reachctl(["reload", "--socket", daemon.socketPath])
        XCTAssertEqual(applied.status, 0, applied.stderr)
        let after = try await client.status()
        XCTAssertEqual(after.path.primaryInterface, "veth9", "applied by the time reachctl returned")
        XCTAssertTrue(daemon.log.contains("asked over Varlink, reloading the configuration"), daemon.log)

        try "[interfaces]\nignore = 5\n".write(toFile: config, atomically: true, encoding: .utf8)
        let refused = try reachctl(["reload", "--socket", daemon.socketPath])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.hasPrefix("reachctl: reload refused, reachd keeps its running configuration: \(config):2:"), refused.stderr)
        XCTAssertTrue(daemon.notify.waitUntil(timeout: 3) { $0.contains { $0.hasPrefix("STATUS=config reload failed") } }, "\(daemon.notify.lines)")
        let kept = try await client.status()
        XCTAssertEqual(kept.path.primaryInterface, "veth9")

        let stranger = try Command.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                        Paths.product("reachctl"), "reload", "--socket", daemon.socketPath], unset: ["REACHD_SOCKET"])
        XCTAssertEqual(stranger.status, 1)
        XCTAssertEqual(stranger.stderr, "reachctl: reload: permission denied (only root and reachd's own user may reload)\n")

        // Calls pipelined behind a Reload on one connection are answered after it, in order.
        try "[interfaces]\nignore = [\"veth*\"]\n".write(toFile: config, atomically: true, encoding: .utf8)
        let raw = try VarlinkConnection(path: daemon.socketPath)
        try raw.send(rawBytes: Array(#"{"method":"io.systemd.service.Reload"}"#.utf8) + [0] + Array(#"{"method":"io.reachd.Reachability.GetStatus"}"#.utf8) + [0])
        XCTAssertEqual(raw.next(timeout: 5), .message(#"{"parameters":{}}"#))
        guard case let .message(second) = raw.next(timeout: 5) else { return XCTFail("no GetStatus reply") }
        XCTAssertTrue(second.contains(#""primaryInterface":"eth0""#), "GetStatus after the reload sees it: \(second)")
    }

    func testWatchdogPingsWhenAsked() throws {
        try topology.configureIPv4()
        let daemon = try DaemonProcess.started(in: topology.host, environment: ["WATCHDOG_USEC": "200000"])
        self.daemon = daemon
        XCTAssertTrue(daemon.notify.waitUntil(timeout: 3) { $0.filter { $0 == "WATCHDOG=1" }.count >= 3 },
                      "pings at half the 200 ms interval: \(daemon.notify.lines)")
    }

    func testNoWatchdogPingsUnlessAsked() throws {
        try topology.configureIPv4()
        let (daemon, _) = try startDaemon()
        _ = daemon.notify.waitUntil(timeout: 1) { _ in false }
        XCTAssertFalse(daemon.notify.lines.contains("WATCHDOG=1"), "an idle daemon sends nothing unasked")
    }

    func testSocketActivation() async throws {
        try topology.configureIPv4()
        let socket = try temporaryDirectory("reachd-sa") + "/io.reachd.Reachability"
        let daemon = try DaemonProcess(
            namespace: topology.host,
            launcher: ["systemd-socket-activate", "--listen=\(socket)", "--fdname=varlink", "-E", "NOTIFY_SOCKET"]
        )
        self.daemon = daemon
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socket) && Date() < deadline { usleep(10_000) }
        // The first client connects before reachd runs: systemd-socket-activate starts it then.
        let status = try await ReachabilityClient(socketPath: socket).status()
        XCTAssertEqual(status.path.status, .satisfied)
        XCTAssertTrue(daemon.notify.waitFor("READY=1", timeout: 5))
        XCTAssertTrue(daemon.log.contains("socket systemd passed"), daemon.log)
        XCTAssertFalse(FileManager.default.fileExists(atPath: daemon.socketPath), "reachd did not create its own socket")
    }

    func testConfigOverridesTypeAndCost() async throws {
        try topology.configureIPv4()
        let config = try writeConfig("""
            [[interfaces.override]]
            match = "eth*"
            type = "cellular"
            constrained = true
            """)
        let (_, client) = try startDaemon(extraArguments: ["--config", config])
        let path = try await client.status().path
        XCTAssertEqual(path.reachability, .reachableViaWWAN)
        XCTAssertEqual(path.primaryInterfaceType, .cellular)
        XCTAssertTrue(path.flags.contains(.isWWAN))
        XCTAssertTrue(path.isExpensive, "cellular is expensive by default")
        XCTAssertTrue(path.isConstrained)
    }

    func testBadConfigRefusesToStart() throws {
        let config = try writeConfig("[socket]\nmode = \"0999\"\n")
        let daemon = try DaemonProcess(namespace: topology.host, extraArguments: ["--config", config])
        self.daemon = daemon
        daemon.process.waitUntilExit()
        XCTAssertNotEqual(daemon.process.terminationStatus, 0)
        XCTAssertTrue(daemon.log.contains("\(config):2"), "names file and line: \(daemon.log)")
        XCTAssertFalse(daemon.notify.lines.contains("READY=1"))
    }

    /// A failure to start ends the process with one clear critical line and exit status 1,
    /// after the kernel was read but before READY=1 (so systemd sees a failed start).
    func testStartFailureExitsNonZeroWithTheReason() throws {
        let occupied = try temporaryDirectory("reachd-occupied") + "/io.reachd.Reachability"
        try "not a socket".write(toFile: occupied, atomically: true, encoding: .utf8)
        // The last --socket wins over the one DaemonProcess passes.
        let blocked = try DaemonProcess(namespace: topology.host, extraArguments: ["--socket", occupied])
        daemon = blocked
        blocked.process.waitUntilExit()
        XCTAssertEqual(blocked.process.terminationStatus, 1)
        XCTAssertTrue(blocked.log.contains("critical reachd: \(occupied) exists and is not a socket; refusing to replace it"), blocked.log)
        XCTAssertFalse(blocked.notify.lines.contains("READY=1"))
        XCTAssertEqual(try String(contentsOfFile: occupied, encoding: .utf8), "not a socket", "the file is left alone")
    }

    // MARK: reachctl wait

    func testWaitExitCodes() throws {
        try topology.configureIPv4(defaultRoute: false)
        let missing = try temporaryDirectory("reachd-wait") + "/none"
        // 2: nobody answers by the deadline.
        let unreachable = try reachctl(["wait", "--socket", missing, "--timeout", "0.5"])
        XCTAssertEqual(unreachable.status, 2, unreachable.stderr)

        let (daemon, _) = try startDaemon()
        // 1: reachd answers, but the path stays unsatisfied.
        let timedOut = try reachctl(["wait", "--socket", daemon.socketPath, "--timeout", "0.5"])
        XCTAssertEqual(timedOut.status, 1, timedOut.stderr)
        // 0: satisfied, with family and interface conditions.
        try topology.host.ip("route", "add", "default", "via", "10.77.0.1", "dev", "eth0")
        XCTAssertEqual(try reachctl(["wait", "--socket", daemon.socketPath, "--timeout", "5", "--family", "4", "--interface", "eth0"]).status, 0)
        // IPv6 never comes: 1.
        XCTAssertEqual(try reachctl(["wait", "--socket", daemon.socketPath, "--timeout", "0.5", "--family", "6"]).status, 1)
    }

    func testWaitWorksWhileTheDaemonIsStillStarting() throws {
        try topology.configureIPv4()
        let socket = try temporaryDirectory("reachd-wait") + "/io.reachd.Reachability"
        let waiter = try launchReachctl(["wait", "--socket", socket, "--timeout", "15"])
        usleep(500_000)  // reachctl is retrying against a socket that does not exist yet
        let daemon = try DaemonProcess.started(in: topology.host, extraArguments: ["--socket", socket])
        self.daemon = daemon
        waiter.waitUntilExit()
        XCTAssertEqual(waiter.terminationStatus, 0)
    }
}
