import Foundation
import TestSupport
import XCTest

/// The shipped units: `systemd-analyze verify` clean, `security` exposure ≤ 1.5, and the
/// directives the daemon relies on present.
final class UnitFileTests: XCTestCase {
    static let units = ["reachd.service", "reachd.socket", "reachd-wait-online.service", "reachd-dispatcher.service", "reachd-nm.service"]
    static let maximumExposure = 1.5

    private func unitText(_ name: String) throws -> String {
        try String(contentsOf: Paths.repository.appendingPathComponent("systemd/\(name)"), encoding: .utf8)
    }

    /// `Key=value` lines of a unit, in order (repeated keys kept).
    private func directives(_ text: String) -> [(key: String, value: String)] {
        text.split(separator: "\n").compactMap { line in
            let line = line.trimmingCharacters(in: .whitespaces)
            guard !line.hasPrefix("#"), !line.hasPrefix("["), let equals = line.firstIndex(of: "=") else { return nil }
            return (String(line[..<equals]), String(line[line.index(after: equals)...]))
        }
    }

    /// "→ Overall exposure level for reachd.service: 0.9 SAFE 😀" → 0.9.
    static func exposure(in output: String) -> Double? {
        guard let range = output.range(of: "Overall exposure level for ") else { return nil }
        let rest = output[range.upperBound...]
        guard let colon = rest.range(of: ": ") else { return nil }
        let number = rest[colon.upperBound...].prefix { $0.isNumber || $0 == "." }
        return Double(number)
    }

    func testExposureParsing() {
        let cases: [(String, Double?)] = [
            ("→ Overall exposure level for reachd.service: 0.9 SAFE 😀\n", 0.9),
            ("x\n→ Overall exposure level for systemd-networkd.service: 3.1 OK 🙂", 3.1),
            ("→ Overall exposure level for a.service: 10.0 UNSAFE 😨", 10.0),
            ("no score here", nil),
        ]
        for (output, expected) in cases { XCTAssertEqual(Self.exposure(in: output), expected, output) }
    }

    func testSecurityExposureIsAtMostOnePointFive() throws {
        try requirePrerequisite(Command.exists("systemd-analyze"), "systemd-analyze is not installed")
        for name in ["reachd.service", "reachd-nm.service"] {
            let unit = Paths.repository.appendingPathComponent("systemd/\(name)").path
            let result = try Command.run(["systemd-analyze", "security", "--offline=true", "--no-pager", unit])
            let output = result.stdout + result.stderr
            let score = try XCTUnwrap(Self.exposure(in: output), "no exposure score in:\n\(output)")
            print("systemd-analyze security --offline=true systemd/\(name): overall exposure \(score)")
            XCTAssertLessThanOrEqual(score, Self.maximumExposure, output)
        }
    }

    func testVerifyIsClean() throws {
        try requirePrerequisite(Command.exists("systemd-analyze"), "systemd-analyze is not installed")
        // verify wants ExecStart= to exist: point the units at a temporary bin directory.
        let directory = URL(fileURLWithPath: try Paths.makeTemporaryDirectory("reachd-verify"))
        defer { try? FileManager.default.removeItem(at: directory) }
        let bin = directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        for tool in ["reachd", "reachctl", "reachd-nm"] {
            let built = Paths.products.appendingPathComponent(tool)
            let target = FileManager.default.isExecutableFile(atPath: built.path) ? built.path : "/bin/true"
            try FileManager.default.createSymbolicLink(atPath: bin.appendingPathComponent(tool).path, withDestinationPath: target)
        }
        for unit in Self.units {
            let text = try unitText(unit).replacingOccurrences(of: "/usr/local/bin/", with: bin.path + "/")
            try text.write(to: directory.appendingPathComponent(unit), atomically: true, encoding: .utf8)
        }
        let result = try Command.run(["systemd-analyze", "verify"] + Self.units.map { "./" + $0 }, in: directory)
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        // Unknown keys and bad values are only warnings: "clean" means nothing printed at all.
        XCTAssertEqual(result.stdout + result.stderr, "")
    }

    func testServiceDirectives() throws {
        let service = directives(try unitText("reachd.service"))
        func values(_ key: String) -> [String] { service.filter { $0.key == key }.map(\.value) }
        let required: [(String, String)] = [
            ("Type", "notify"), ("NotifyAccess", "main"), ("WatchdogSec", "30s"), ("Restart", "on-failure"),
            ("ExecReload", "/usr/local/bin/reachctl reload --timeout 60"), ("Requires", "reachd.socket"), ("User", "reachd"), ("Group", "reachd"),
            ("CapabilityBoundingSet", ""), ("RestrictAddressFamilies", "AF_UNIX AF_NETLINK AF_INET AF_INET6"),
            ("ProtectSystem", "strict"), ("ProtectHome", "yes"), ("PrivateTmp", "yes"), ("RemoveIPC", "yes"), ("RestrictSUIDSGID", "yes"),
            ("NoNewPrivileges", "yes"), ("SystemCallFilter", "@system-service"),
            ("MemoryDenyWriteExecute", "yes"), ("IPAddressDeny", "any"), ("UMask", "0022"),
            ("SystemCallArchitectures", "native"), ("ProtectProc", "invisible"), ("ProcSubset", "pid"),
            ("ExecStart", "/usr/local/bin/reachd"), ("LimitNOFILE", "8192"),
        ]
        for (key, value) in required {
            XCTAssertTrue(values(key).contains(value), "\(key)=\(value) missing; have \(values(key))")
        }
        XCTAssertTrue(values("SystemCallFilter").contains { $0.hasPrefix("~") && $0.contains("@privileged") })
        // Not a DynamicUser=: Debian's dbus-daemon drops dynamic users from the system bus.
        XCTAssertTrue(values("DynamicUser").isEmpty, "DynamicUser= keeps reachd off the system bus")
        // /run/reachd is the socket unit's (root's, 0755), not the service's.
        XCTAssertTrue(values("RuntimeDirectory").isEmpty, "RuntimeDirectory= takes /run/reachd from reachd.socket")
        // reachd must see the host's network and read /sys/class/net and /etc/resolv.conf.
        XCTAssertTrue(values("PrivateNetwork").isEmpty)
        for key in ["InaccessiblePaths", "TemporaryFileSystem", "RootDirectory", "RootImage"] {
            XCTAssertTrue(values(key).isEmpty, "\(key)= would hide what reachd reads")
        }
    }

    func testNetworkManagerAnswerDirectives() throws {
        let service = directives(try unitText("reachd-nm.service"))
        for expected in [
            ("Type", "notify"), ("NotifyAccess", "main"), ("ExecStart", "/usr/local/bin/reachd-nm"),
            ("Requires", "reachd.socket dbus.socket"), ("User", "reachd-nm"),
            ("RestrictAddressFamilies", "AF_UNIX"), ("PrivateNetwork", "yes"), ("CapabilityBoundingSet", ""),
            ("RestartPreventExitStatus", "3"), ("NoNewPrivileges", "yes"), ("IPAddressDeny", "any"),
        ] {
            XCTAssertTrue(service.contains { $0 == expected }, "\(expected) missing")
        }
        XCTAssertTrue(service.contains { $0.key == "ExecCondition" && $0.value.contains("for state in active enabled") })
        // Not BusName=: NetworkManager.service watches that name, and systemd lets only one unit do so.
        XCTAssertFalse(service.contains { $0.key == "BusName" })
        // Not Conflicts=: starting reachd-nm must never stop a running NetworkManager.
        XCTAssertFalse(service.contains { $0.key == "Conflicts" })
        let dropIn = directives(try unitText("reachd-nm.networkmanager.conf"))
        XCTAssertTrue(dropIn.contains { $0 == ("ExecStartPre", "-/usr/bin/systemctl stop reachd-nm.service") })
        // Installed by its own package, never by reachd's: nothing pulls it in but its [Install].
        XCTAssertFalse(try unitText("reachd.service").contains("reachd-nm"))
    }

    func testSocketAndWaitOnlineDirectives() throws {
        let socket = directives(try unitText("reachd.socket"))
        for expected in [
            ("ListenStream", "/run/reachd/io.reachd.Reachability"), ("SocketMode", "0666"),
            ("FileDescriptorName", "varlink"), ("Service", "reachd.service"), ("DirectoryMode", "0755"),
        ] {
            XCTAssertTrue(socket.contains { $0 == expected }, "\(expected) missing")
        }
        let wait = directives(try unitText("reachd-wait-online.service"))
        for expected in [
            ("Type", "oneshot"), ("ExecStart", "/usr/local/bin/reachctl wait --timeout 120"), ("RemainAfterExit", "yes"),
            ("Requires", "reachd.service"), ("After", "reachd.service"), ("Before", "network-online.target"),
            ("WantedBy", "network-online.target"),
        ] {
            XCTAssertTrue(wait.contains { $0 == expected }, "\(expected) missing")
        }
    }
}
