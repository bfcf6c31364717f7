import ReachProtocol
import XCTest

private let socketName = "io.reachd.Reachability"
private let systemSocket = "/run/reachd/io.reachd.Reachability"

final class SocketLocationTests: XCTestCase {
    private struct Case {
        var environment: [String: String]
        var uid: UInt32
        var systemMayExist = false
        var expected: String
    }

    func testDaemonDefault() {
        let cases: [Case] = [
            Case(environment: ["REACHD_SOCKET": "/x/y.sock", "RUNTIME_DIRECTORY": "/run/reachd"], uid: 0, expected: "/x/y.sock"),
            Case(environment: ["RUNTIME_DIRECTORY": "/run/reachd"], uid: 0, expected: systemSocket),
            Case(environment: ["RUNTIME_DIRECTORY": "/run/other/"], uid: 1000, expected: "/run/other/" + socketName),
            Case(environment: ["RUNTIME_DIRECTORY": "/run/a:/run/b"], uid: 0, expected: "/run/a/" + socketName),
            Case(environment: [:], uid: 0, expected: systemSocket),
            Case(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], uid: 0, expected: systemSocket),
            Case(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], uid: 1000, expected: "/run/user/1000/reachd/" + socketName),
            Case(environment: [:], uid: 1000, expected: "/tmp/reachd-1000/" + socketName),
            Case(environment: ["REACHD_SOCKET": "", "XDG_RUNTIME_DIR": ""], uid: 1000, expected: "/tmp/reachd-1000/" + socketName),
        ]
        for test in cases {
            let path = SocketLocation.daemonDefault(environment: test.environment, uid: test.uid)
            XCTAssertEqual(path, test.expected, "\(test)")
        }
    }

    func testClientDefault() {
        let cases: [Case] = [
            Case(environment: ["REACHD_SOCKET": "/x/y.sock"], uid: 1000, systemMayExist: true, expected: "/x/y.sock"),
            Case(environment: [:], uid: 1000, systemMayExist: true, expected: systemSocket),
            Case(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], uid: 1000, systemMayExist: true, expected: systemSocket),
            Case(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], uid: 1000, expected: "/run/user/1000/reachd/" + socketName),
            Case(environment: [:], uid: 1000, expected: "/tmp/reachd-1000/" + socketName),
            Case(environment: [:], uid: 0, expected: systemSocket),
            Case(environment: ["RUNTIME_DIRECTORY": "/elsewhere"], uid: 1000, expected: "/tmp/reachd-1000/" + socketName),
        ]
        for test in cases {
            let exists = test.systemMayExist
            let path = SocketLocation.clientDefault(environment: test.environment, uid: test.uid) { $0 == systemSocket && exists }
            XCTAssertEqual(path, test.expected, "\(test)")
        }
    }

    func testSystemPath() {
        XCTAssertEqual(SocketLocation.systemPath, systemSocket)
    }
}
