import ReachabilityCore
import XCTest

@testable import ReachSystemd

private let eth0Path = "/org/freedesktop/NetworkManager/Devices/2"
private let wlanPath = "/org/freedesktop/NetworkManager/Devices/3"
private let root: NetworkManagerReads.Answer = .properties(["Devices": .objectPaths([eth0Path, wlanPath, eth0Path])])
private let eth0Portal: NetworkManagerReads.Answer = .properties(["Interface": .string("eth0"), "Ip4Connectivity": .uint32(2)])
private let eth0Full: NetworkManagerReads.Answer = .properties(["Interface": .string("eth0"), "Ip4Connectivity": .uint32(4)])
private let wlanSilent: NetworkManagerReads.Answer = .properties(["Interface": .string("wlan0")])
private let portal = ["eth0": NetworkManagerDevice(ipv4: .portal)]

/// When NetworkManager is read, what each read asks next, and which answers are handed on, step by step.
final class NetworkManagerReadsTests: XCTestCase {
    private typealias Reads = NetworkManagerReads
    private static let start = ContinuousClock.now

    private enum Step {
        case tick
        case signal
        case answer(Reads.Question, Reads.Answer)
        case close
    }

    private static func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    func testReads() {
        let steps: [(name: String, at: Int, step: Step, actions: [Reads.Action], nextTick: Int?)] = [
            ("the first read at once", 0, .tick, [.ask(.isRunning)], nil),
            ("a tick during the read asks nothing", 5, .tick, [], nil),
            ("NetworkManager runs: its root", 10, .answer(.isRunning, .running(true)), [.ask(.root)], nil),
            ("its devices, each once, at once", 12, .answer(.root, root),
             [.ask(.device(path: eth0Path)), .ask(.device(path: wlanPath))], nil),
            ("a signal during the read: another read 100 ms on", 14, .signal, [], nil),
            ("one device answered: the read goes on", 15, .answer(.device(path: wlanPath), wlanSilent), [], nil),
            ("an answer about no device of the read is dropped", 16, .answer(.device(path: "/other"), eth0Full), [], nil),
            ("the last device: the answer handed on, announced", 17, .answer(.device(path: eth0Path), eth0Portal),
             [.read(devices: 1), .deliver(portal, announce: true)], 114),
            ("not due yet", 100, .tick, [], 114),
            ("due: read again", 114, .tick, [.ask(.isRunning)], nil),
            ("running", 115, .answer(.isRunning, .running(true)), [.ask(.root)], nil),
            ("the same devices", 116, .answer(.root, root), [.ask(.device(path: eth0Path)), .ask(.device(path: wlanPath))], nil),
            ("eth0 the same", 117, .answer(.device(path: eth0Path), eth0Portal), [], nil),
            ("wlan0 removed meanwhile: left out; the same answer is not handed on", 118,
             .answer(.device(path: wlanPath), .failed), [.read(devices: 1)], nil),
            ("a burst of signals is one read", 200, .signal, [], 300),
            ("", 250, .signal, [], 300),
            ("", 300, .tick, [.ask(.isRunning)], nil),
            ("NetworkManager left the bus: nothing said of any device, announced", 301, .answer(.isRunning, .running(false)),
             [.read(devices: 0), .deliver([:], announce: true)], nil),
            ("it comes back", 400, .signal, [], 500),
            ("", 500, .tick, [.ask(.isRunning)], nil),
            ("", 501, .answer(.isRunning, .running(true)), [.ask(.root)], nil),
            ("its root does not answer: nothing said, nothing new", 503, .answer(.root, .failed), [.read(devices: 0)], nil),
            ("", 600, .signal, [], 700),
            ("", 700, .tick, [.ask(.isRunning)], nil),
            ("", 701, .answer(.isRunning, .running(true)), [.ask(.root)], nil),
            ("no devices at all", 702, .answer(.root, .properties(["Devices": .objectPaths([])])), [.read(devices: 0)], nil),
            ("", 800, .signal, [], 900),
            ("", 900, .tick, [.ask(.isRunning)], nil),
            ("", 901, .answer(.isRunning, .running(true)), [.ask(.root)], nil),
            ("", 902, .answer(.root, .properties(["Devices": .objectPaths([eth0Path])])), [.ask(.device(path: eth0Path))], nil),
            ("back with eth0, full: announced (no device before)", 903, .answer(.device(path: eth0Path), eth0Full),
             [.read(devices: 1), .deliver(["eth0": NetworkManagerDevice(ipv4: .full)], announce: true)], nil),
            ("", 910, .signal, [], 1010),
            ("", 1010, .tick, [.ask(.isRunning)], nil),
            ("", 1011, .answer(.isRunning, .running(true)), [.ask(.root)], nil),
            ("", 1012, .answer(.root, .properties(["Devices": .objectPaths([eth0Path])])), [.ask(.device(path: eth0Path))], nil),
            ("a portal again: handed on, not announced (devices before and after)", 1013, .answer(.device(path: eth0Path), eth0Portal),
             [.read(devices: 1), .deliver(portal, announce: false)], nil),
            ("reachd-nm took the name", 1020, .signal, [], 1120),
            ("", 1120, .tick, [.ask(.isRunning)], nil),
            ("", 1121, .answer(.isRunning, .running(true)), [.ask(.root)], nil),
            ("its devices echo reachd: none read, the word taken back", 1122,
             .answer(.root, .properties(["Devices": .objectPaths([eth0Path]), "Version": .string("0.1.0-reachd-nm")])),
             [.read(devices: 0), .deliver([:], announce: true)], nil),
            ("NetworkManager back with its portal", 1130, .signal, [], 1230),
            ("", 1230, .tick, [.ask(.isRunning)], nil),
            ("", 1231, .answer(.isRunning, .running(true)), [.ask(.root)], nil),
            ("", 1232, .answer(.root, .properties(["Devices": .objectPaths([eth0Path]), "Version": .string("1.42.4")])),
             [.ask(.device(path: eth0Path))], nil),
            ("", 1233, .answer(.device(path: eth0Path), eth0Portal), [.read(devices: 1), .deliver(portal, announce: true)], nil),
            ("the connection closed: the word taken back", 1050, .close, [.deliver([:], announce: true)], nil),
            ("nothing more", 2000, .tick, [], nil),
        ]
        var reads = Reads(now: Self.start)
        XCTAssertEqual(reads.nextTick, Self.start, "the first read is due at once")
        for (name, milliseconds, step, actions, nextTick) in steps {
            let now = Self.at(milliseconds)
            let done: [Reads.Action]
            switch step {
            case .tick: done = reads.tick(now: now)
            case .signal: reads.signalled(now: now); done = []
            case let .answer(question, answer): done = reads.answered(question, with: answer, now: now)
            case .close: done = reads.closed()
            }
            XCTAssertEqual(done, actions, "\(milliseconds) ms: \(name)")
            XCTAssertEqual(reads.nextTick, nextTick.map(Self.at), "\(milliseconds) ms: \(name): the next tick")
        }
    }

    /// A first read that finds NetworkManager absent still hands on its (empty) answer: the
    /// owner learns it was read; a connection closed before anything was said takes nothing back.
    func testAbsentAtStart() {
        var reads = Reads(now: Self.start)
        XCTAssertEqual(reads.tick(now: Self.start), [.ask(.isRunning)])
        XCTAssertEqual(reads.answered(.isRunning, with: .failed, now: Self.at(1)), [.read(devices: 0), .deliver([:], announce: false)])
        XCTAssertEqual(reads.closed(), [])
    }
}
