import Foundation
import TestSupport
import XCTest

/// `make install` / `make uninstall` into a temporary DESTDIR, with the binaries this test
/// run was built with (INSTALL_BIN), so no second build happens.
final class InstallTests: XCTestCase {
    private var destination: URL!

    override func setUpWithError() throws {
        destination = URL(fileURLWithPath: try Paths.makeTemporaryDirectory("reachd-destdir"))
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: destination)
    }

    private func make(_ target: String, prefix: String = "/usr/local") throws -> ProcessResult {
        try Command.run(
            ["make", "--no-print-directory", target, "DESTDIR=\(destination.path)", "PREFIX=\(prefix)", "INSTALL_BIN=\(Paths.products.path)"],
            in: Paths.repository
        )
    }

    private func file(_ path: String) -> URL { destination.appendingPathComponent(String(path.dropFirst())) }

    private func text(_ path: String) throws -> String { try String(contentsOf: file(path), encoding: .utf8) }

    private func mode(_ path: String) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: file(path).path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    func testInstallAndUninstall() throws {
        try requirePrerequisite(Command.exists("make"), "make is not installed")
        try requireBuiltTools()
        let prefix = "/opt/reachd"
        let install = try make("install", prefix: prefix)
        XCTAssertEqual(install.status, 0, install.stdout + install.stderr)

        let expected: [(path: String, mode: Int)] = [
            ("/opt/reachd/bin/reachd", 0o755),
            ("/opt/reachd/bin/reachctl", 0o755),
            ("/opt/reachd/lib/systemd/system/reachd.service", 0o644),
            ("/opt/reachd/lib/systemd/system/reachd.socket", 0o644),
            ("/opt/reachd/lib/systemd/system/reachd-wait-online.service", 0o644),
            ("/opt/reachd/lib/systemd/system/reachd-dispatcher.service", 0o644),
            ("/etc/reachd/reachd.toml", 0o644),
            ("/opt/reachd/share/bash-completion/completions/reachctl", 0o644),
            ("/opt/reachd/share/zsh/site-functions/_reachctl", 0o644),
            ("/opt/reachd/share/fish/vendor_completions.d/reachctl.fish", 0o644),
            ("/opt/reachd/share/man/man1/reachctl.1", 0o644),
            ("/opt/reachd/share/man/man5/reachd.toml.5", 0o644),
            ("/opt/reachd/share/man/man8/reachd.8", 0o644),
            ("/opt/reachd/share/man/man8/reachd-nm.8", 0o644),
            ("/opt/reachd/lib/systemd/catalog/reachd.catalog", 0o644),
            ("/opt/reachd/lib/sysusers.d/reachd.conf", 0o644),
            ("/opt/reachd/share/polkit-1/rules.d/50-reachd.rules", 0o644),
            ("/opt/reachd/lib/systemd/system/reachd-nm.service", 0o644),
            ("/opt/reachd/lib/systemd/system/NetworkManager.service.d/reachd-nm.conf", 0o644),
            ("/opt/reachd/lib/sysusers.d/reachd-nm.conf", 0o644),
            // Where dbus-daemon reads system bus policies, whatever the prefix.
            ("/usr/share/dbus-1/system.d/reachd-nm.conf", 0o644),
            // Where dhcpcd looks, whatever the prefix; sourced, so not executable.
            ("/usr/lib/dhcpcd/dhcpcd-hooks/90-reachd", 0o644),
        ]
        for entry in expected {
            XCTAssertTrue(FileManager.default.fileExists(atPath: file(entry.path).path), "\(entry.path) not installed")
            XCTAssertEqual(try mode(entry.path), entry.mode, entry.path)
        }
        // Nothing else was installed.
        let installed = FileManager.default.enumerator(at: destination, includingPropertiesForKeys: [.isRegularFileKey])!
            .compactMap { $0 as? URL }
            .filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
            .map { "/" + $0.resolvingSymlinksInPath().path.dropFirst(destination.resolvingSymlinksInPath().path.count + 1) }
        XCTAssertEqual(Set(installed), Set(expected.map(\.path)))

        // reachd-nm is reachd called by that name (Multicall).
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: file("/opt/reachd/bin/reachd-nm").path), "reachd")
        XCTAssertTrue(try text("/opt/reachd/lib/systemd/system/reachd-nm.service").contains("\nExecStart=/opt/reachd/bin/reachd-nm\n"))
        // Units run the installed binaries.
        XCTAssertTrue(try text("/opt/reachd/lib/systemd/system/reachd.service").contains("\nExecStart=/opt/reachd/bin/reachd\n"))
        XCTAssertTrue(
            try text("/opt/reachd/lib/systemd/system/reachd-wait-online.service")
                .contains("\nExecStart=/opt/reachd/bin/reachctl wait --timeout 120\n")
        )
        XCTAssertTrue(try text("/opt/reachd/lib/systemd/system/reachd.service").contains("\nExecReload=/opt/reachd/bin/reachctl reload --timeout 60\n"))
        XCTAssertFalse(try text("/opt/reachd/lib/systemd/system/reachd.service").contains("/usr/local/bin"))
        XCTAssertTrue(
            try text("/opt/reachd/lib/systemd/system/reachd-dispatcher.service")
                .contains("\nExecStart=/opt/reachd/bin/reachctl dispatch /etc/reachd/dispatcher.d\n")
        )
        // The hook directory, empty, root's alone to write.
        XCTAssertEqual(try mode("/etc/reachd/dispatcher.d"), 0o755)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: file("/etc/reachd/dispatcher.d").path), [])
        // Man pages: the two commands' from their own help (every subcommand), the file format's by hand.
        XCTAssertTrue(try text("/opt/reachd/share/man/man8/reachd.8").contains(".Dt REACHD 8"))
        XCTAssertTrue(try text("/opt/reachd/share/man/man8/reachd.8").contains("--check-config"))
        XCTAssertTrue(try text("/opt/reachd/share/man/man8/reachd-nm.8").contains(".Dt REACHD-NM 8"))
        let reachctlPage = try text("/opt/reachd/share/man/man1/reachctl.1")
        XCTAssertTrue(reachctlPage.contains(".Dt REACHCTL 1"))
        for subcommand in ["status", "watch", "interfaces", "wait", "probe", "metrics", "reload", "dispatch"] {
            XCTAssertTrue(reachctlPage.contains(".It Em \(subcommand)"), "reachctl(1) documents \(subcommand)")
        }
        XCTAssertEqual(try text("/opt/reachd/share/man/man5/reachd.toml.5"), try String(contentsOf: Paths.repository.appendingPathComponent("man/reachd.toml.5"), encoding: .utf8))
        // The shipped configuration, byte for byte; completions as reachctl generates them.
        XCTAssertEqual(try text("/etc/reachd/reachd.toml"), try String(contentsOf: Paths.repository.appendingPathComponent("config/reachd.toml"), encoding: .utf8))
        let completions = [
            ("bash", "/opt/reachd/share/bash-completion/completions/reachctl"),
            ("zsh", "/opt/reachd/share/zsh/site-functions/_reachctl"),
            ("fish", "/opt/reachd/share/fish/vendor_completions.d/reachctl.fish"),
        ]
        for (shell, path) in completions {
            let generated = try Command.run([Paths.products.appendingPathComponent("reachctl").path, "--generate-completion-script", shell])
            XCTAssertEqual(generated.status, 0, shell)
            XCTAssertTrue(generated.stdout.contains("reachctl"), shell)
            XCTAssertEqual(try text(path), generated.stdout, shell)
        }
        let help = try Command.run([file("/opt/reachd/bin/reachd").path, "--help"])
        XCTAssertEqual(help.status, 0)

        // A changed configuration survives a second install and the uninstall.
        try "[log]\nlevel = \"debug\"\n".write(to: file("/etc/reachd/reachd.toml"), atomically: true, encoding: .utf8)
        let again = try make("install", prefix: prefix)
        XCTAssertEqual(again.status, 0, again.stdout + again.stderr)
        XCTAssertEqual(try text("/etc/reachd/reachd.toml"), "[log]\nlevel = \"debug\"\n")

        let uninstall = try make("uninstall", prefix: prefix)
        XCTAssertEqual(uninstall.status, 0, uninstall.stdout + uninstall.stderr)
        for entry in expected where entry.path != "/etc/reachd/reachd.toml" {
            XCTAssertFalse(FileManager.default.fileExists(atPath: file(entry.path).path), "\(entry.path) left behind")
        }
        XCTAssertEqual(try text("/etc/reachd/reachd.toml"), "[log]\nlevel = \"debug\"\n")
    }

    func testUninstallRemovesAnUnchangedConfiguration() throws {
        try requirePrerequisite(Command.exists("make"), "make is not installed")
        try requireBuiltTools()
        XCTAssertEqual(try make("install").status, 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: file("/usr/local/lib/systemd/system/reachd.service").path))
        XCTAssertEqual(try make("uninstall").status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("/etc/reachd/reachd.toml").path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("/etc/reachd").path))
    }
}
