import Foundation
import Glibc
import TestSupport
import XCTest

/// reachd's memory grew by ~5.8 KB with every SIGHUP (docs/performance.md, "Reloads"),
/// all of it what TOMLKit allocated reading the configuration and never freed. 1,000 SIGHUPs (REACHD_RELOADS to change it), each waited for (READY=1), now leave
/// the resident set within 2 MB of where it was (the leak alone was 5.8 MB).
final class ReloadMemoryTests: DaemonTestCase {
    private func residentKiB(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// Sends SIGHUP and waits until reachd says READY=1 again.
    private func reload(_ daemon: DaemonProcess, readySoFar: inout Int) {
        kill(daemon.process.processIdentifier, SIGHUP)
        let target = readySoFar + 1
        XCTAssertTrue(daemon.notify.waitUntil(timeout: 5) { lines in lines.lazy.filter { $0 == "READY=1" }.count >= target })
        readySoFar = target
    }

    func testReloadsDoNotGrowMemory() throws {
        try topology.configureIPv4()
        let config = try temporaryDirectory("reachd-config") + "/reachd.toml"
        // The shape of the measured file (373 bytes): every TOML type reachd reads.
        try """
            [log]
            level = "info"

            [interfaces]
            ignore = ["docker*", "veth*", "virbr*", "br-*"]

            [[interfaces.override]]
            match = "wwan*"
            type = "cellular"
            expensive = true

            [[interfaces.override]]
            match = "wg*"
            constrained = true

            [netlink]
            receive-buffer-size = 8388608

            [socket]
            mode = "0666"

            [captive-portal]
            networkd = false
            router-advertisements = true

            """.write(toFile: config, atomically: true, encoding: .utf8)
        let (daemon, _) = try startDaemon(extraArguments: ["--config", config, "--log-level", "warning"])
        let pid = daemon.process.processIdentifier
        let reloads = Int(ProcessInfo.processInfo.environment["REACHD_RELOADS"] ?? "") ?? 1000
        var ready = daemon.notify.lines.filter { $0 == "READY=1" }.count
        for _ in 0..<100 { reload(daemon, readySoFar: &ready) }  // caches and arenas settle
        let before = try residentKiB(pid)
        let started = ContinuousClock.now
        for _ in 0..<reloads { reload(daemon, readySoFar: &ready) }
        let after = try residentKiB(pid)
        let growth = after - before
        print("VmRSS over \(reloads) reloads: \(before) → \(after) KiB (\(growth) KiB, \(growth * 1024 / reloads) bytes a reload), in \(ContinuousClock.now - started)")
        XCTAssertTrue(daemon.process.isRunning)
        XCTAssertLessThan(growth, 2048 * reloads / 1000, "VmRSS grew \(growth) KiB over \(reloads) reloads")
    }
}
