import Foundation
import TestSupport
import XCTest

/// reachd is one multi-call binary: called by the name reachctl (the package installs
/// /usr/bin/reachctl as a link to it) it is reachctl, by any other name reachd.
final class MulticallTests: XCTestCase {
    func testReachdCalledReachctlIsReachctl() throws {
        let directory = try Paths.makeTemporaryDirectory("multicall")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let link = directory + "/reachctl"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: Paths.product("reachd"))

        let help = try Command.run([link, "--help"])
        XCTAssertEqual(help.status, 0, help.stderr)
        XCTAssertTrue(help.stdout.hasPrefix("OVERVIEW: Ask reachd how this host reaches the network."), help.stdout)
        // The same answer, stream and exit code as the reachctl product: an async command
        // run from the multi-call binary's synchronous main.
        let missing = directory + "/no-socket"
        let viaLink = try Command.run([link, "status", "--socket", missing], unset: ["REACHD_SOCKET"])
        let direct = try reachctl(["status", "--socket", missing])
        XCTAssertEqual(viaLink.status, 2, viaLink.stderr)
        XCTAssertEqual(viaLink.status, direct.status)
        XCTAssertEqual(viaLink.stderr, direct.stderr)
        XCTAssertEqual(try Command.run([link, "--version"]).stdout, try reachctl(["--version"]).stdout)

        // Any other name is reachd.
        let other = directory + "/reachctl-old"
        try FileManager.default.createSymbolicLink(atPath: other, withDestinationPath: Paths.product("reachd"))
        for path in [other, Paths.product("reachd")] {
            let daemonHelp = try Command.run([path, "--help"])
            XCTAssertTrue(daemonHelp.stdout.hasPrefix("OVERVIEW: Watch the kernel's network state"), "\(path): \(daemonHelp.stdout)")
        }
    }
}
