import Logging
import ReachabilityCore
import ReachConfiguration
import ReachDaemon
import ReachProtocol
import XCTest

/// Command line > config file > defaults.
final class ConfigurationResolutionTests: XCTestCase {
    func testSocketPathPrecedence() {
        var file = ReachdConfiguration()
        file.socket.path = "/srv/from-file.sock"
        let cases: [(name: String, file: ReachdConfiguration, overrides: CommandLineOverrides, environment: [String: String], uid: UInt32, expected: String)] = [
            ("command line wins", file, CommandLineOverrides(socketPath: "/cli.sock"), ["REACHD_SOCKET": "/env.sock"], 0, "/cli.sock"),
            ("environment over file", file, CommandLineOverrides(), ["REACHD_SOCKET": "/env.sock"], 0, "/env.sock"),
            ("file over computed", file, CommandLineOverrides(), ["RUNTIME_DIRECTORY": "/run/reachd"], 0, "/srv/from-file.sock"),
            ("empty environment value ignored", file, CommandLineOverrides(), ["REACHD_SOCKET": ""], 0, "/srv/from-file.sock"),
            ("computed under systemd", ReachdConfiguration(), CommandLineOverrides(), ["RUNTIME_DIRECTORY": "/run/reachd"], 0, "/run/reachd/io.reachd.Reachability"),
            ("computed for root", ReachdConfiguration(), CommandLineOverrides(), [:], 0, SocketLocation.systemPath),
            ("computed for a user", ReachdConfiguration(), CommandLineOverrides(), ["XDG_RUNTIME_DIR": "/run/user/1000"], 1000, "/run/user/1000/reachd/io.reachd.Reachability"),
        ]
        for testCase in cases {
            let options = DaemonOptions(configuration: testCase.file, overrides: testCase.overrides, environment: testCase.environment, uid: testCase.uid)
            XCTAssertEqual(options.socketPath, testCase.expected, testCase.name)
        }
    }

    func testOtherSettings() {
        var file = ReachdConfiguration()
        file.socket.mode = 0o600
        file.log.level = .warning
        file.netlink.receiveBufferSize = 1 << 20
        file.interfaces.policy = InterfacePolicy(ignoredPatterns: ["x*"])

        let fromFile = DaemonOptions(configuration: file, overrides: CommandLineOverrides(), environment: [:], uid: 0)
        XCTAssertEqual(fromFile.socketMode, 0o600)
        XCTAssertEqual(fromFile.logLevel, .warning)
        XCTAssertEqual(fromFile.engine.receiveBufferSize, 1 << 20)
        XCTAssertEqual(fromFile.policy, InterfacePolicy(ignoredPatterns: ["x*"]))
        XCTAssertEqual(fromFile.engine.sysfsRoot, "/sys")

        let overrides = CommandLineOverrides(logLevel: .trace, receiveBufferSize: 4 << 20, sysfsRoot: "/tmp/sys", resolvConfPath: "/tmp/resolv.conf")
        let fromCommandLine = DaemonOptions(configuration: file, overrides: overrides, environment: [:], uid: 0)
        XCTAssertEqual(fromCommandLine.logLevel, .trace)
        XCTAssertEqual(fromCommandLine.engine.receiveBufferSize, 4 << 20)
        XCTAssertEqual(fromCommandLine.engine.sysfsRoot, "/tmp/sys")
        XCTAssertEqual(fromCommandLine.engine.resolvConfPath, "/tmp/resolv.conf")

        let defaults = DaemonOptions(configuration: ReachdConfiguration(), overrides: CommandLineOverrides(), environment: [:], uid: 0)
        XCTAssertEqual(defaults.socketMode, 0o666)
        XCTAssertEqual(defaults.logLevel, .info)
        XCTAssertEqual(defaults.engine.receiveBufferSize, 8 << 20)
        XCTAssertEqual(defaults.policy, InterfacePolicy())
    }
}
