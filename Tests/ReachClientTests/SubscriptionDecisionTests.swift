@testable import ReachClient
import XCTest

/// The reconnect decisions and the manager's "what to tell" decisions, as tables.
final class SubscriptionStateMachineTests: XCTestCase {
    private enum Event {
        case start, cancel
        case received(String?, generation: Int)
        case failed(generation: Int)
        case retryDue(generation: Int)
    }

    private typealias Machine = SubscriptionStateMachine
    private static let policy = ReconnectPolicy(initialDelay: .milliseconds(100), maximumDelay: .milliseconds(400))
    private static let gone = ReachClientError.daemonNotRunning(socketPath: "/s", connectionRefused: false)

    private func run(_ events: [Event]) -> (actions: [[Machine.Action]], machine: Machine) {
        var machine = Machine(policy: Self.policy)
        var actions: [[Machine.Action]] = []
        for event in events {
            switch event {
            case .start: actions.append(machine.start())
            case .cancel: actions.append(machine.cancel())
            case let .received(instance, generation): actions.append(machine.received(instance: instance, generation: generation))
            // jitter 0.999…: the wait is (almost exactly) the full delay.
            case let .failed(generation): actions.append(machine.failed(Self.gone, generation: generation, jitter: 1))
            case let .retryDue(generation): actions.append(machine.retryDue(generation: generation))
            }
        }
        return (actions, machine)
    }

    func testTransitions() {
        let cases: [(name: String, events: [Event], last: [Machine.Action], state: Machine.State)] = [
            ("not started", [], [], .idle),
            ("start connects", [.start], [.connect(generation: 1)], .connecting(generation: 1)),
            ("first path", [.start, .received("a", generation: 1)], [.deliver(.first)], .streaming(generation: 1)),
            ("a change", [.start, .received("a", generation: 1), .received("a", generation: 1)], [.deliver(.update)], .streaming(generation: 1)),
            ("start while running does nothing", [.start, .start], [], .connecting(generation: 1)),
            ("reachd not running at start: told at once, retried after 100 ms",
             [.start, .failed(generation: 1)], [.reportUnavailable(Self.gone), .retry(after: .milliseconds(100), generation: 1)],
             .waiting(generation: 1)),
            ("a broken connection gets one quiet retry",
             [.start, .received("a", generation: 1), .failed(generation: 1)], [.retry(after: .milliseconds(100), generation: 1)],
             .waiting(generation: 1)),
            ("the retry connects as a new generation",
             [.start, .received("a", generation: 1), .failed(generation: 1), .retryDue(generation: 1)], [.connect(generation: 2)],
             .connecting(generation: 2)),
            ("the retry failing too is an outage",
             [.start, .received("a", generation: 1), .failed(generation: 1), .retryDue(generation: 1), .failed(generation: 2)],
             [.reportUnavailable(Self.gone), .retry(after: .milliseconds(200), generation: 2)], .waiting(generation: 2)),
            ("an outage is told once, waits double up to the cap",
             [.start, .failed(generation: 1), .retryDue(generation: 1), .failed(generation: 2), .retryDue(generation: 2),
              .failed(generation: 3), .retryDue(generation: 3), .failed(generation: 4)],
             [.retry(after: .milliseconds(400), generation: 4)], .waiting(generation: 4)),
            ("same instance after reconnecting",
             [.start, .received("a", generation: 1), .failed(generation: 1), .retryDue(generation: 1), .received("a", generation: 2)],
             [.deliver(.reconnected)], .streaming(generation: 2)),
            ("a new instance after reconnecting is a restart",
             [.start, .received("a", generation: 1), .failed(generation: 1), .retryDue(generation: 1), .received("b", generation: 2)],
             [.deliver(.restarted)], .streaming(generation: 2)),
            ("target answers carry no instance: a reconnect",
             [.start, .received(nil, generation: 1), .failed(generation: 1), .retryDue(generation: 1), .received(nil, generation: 2)],
             [.deliver(.reconnected)], .streaming(generation: 2)),
            ("after an outage the waits start small again",
             [.start, .failed(generation: 1), .retryDue(generation: 1), .failed(generation: 2), .retryDue(generation: 2),
              .received("a", generation: 3), .failed(generation: 3)],
             [.retry(after: .milliseconds(100), generation: 3)], .waiting(generation: 3)),
            ("cancel disconnects", [.start, .received("a", generation: 1), .cancel], [.disconnect], .cancelled),
            ("cancel while waiting", [.start, .failed(generation: 1), .cancel], [.disconnect], .cancelled),
            ("cancel when not started does nothing", [.cancel], [], .idle),
            ("a reply racing cancel is dropped", [.start, .cancel, .received("a", generation: 1)], [], .cancelled),
            ("a failure racing cancel is dropped", [.start, .cancel, .failed(generation: 1)], [], .cancelled),
            ("restart after cancel connects anew", [.start, .received("a", generation: 1), .cancel, .start],
             [.connect(generation: 2)], .connecting(generation: 2)),
            ("the first answer after a restart is first again",
             [.start, .received("a", generation: 1), .cancel, .start, .received("a", generation: 2)], [.deliver(.first)],
             .streaming(generation: 2)),
            ("a stale timer of the previous run is ignored",
             [.start, .failed(generation: 1), .cancel, .start, .retryDue(generation: 1)], [], .connecting(generation: 2)),
            ("a reply of an older connection is ignored",
             [.start, .failed(generation: 1), .retryDue(generation: 1), .received("a", generation: 1)], [], .connecting(generation: 2)),
        ]
        for test in cases {
            let (actions, machine) = run(test.events)
            XCTAssertEqual(actions.last ?? [], test.last, test.name)
            XCTAssertEqual(machine.state, test.state, test.name)
        }
    }

    func testDelays() {
        let policy = ReconnectPolicy(initialDelay: .milliseconds(50), maximumDelay: .seconds(2))
        let cases: [(failures: Int, jitter: Double, expected: Duration)] = [
            (1, 1, .milliseconds(50)), (1, 0, .milliseconds(25)), (2, 1, .milliseconds(100)), (3, 0.5, .milliseconds(150)),
            (6, 1, .milliseconds(1600)), (7, 1, .seconds(2)), (50, 1, .seconds(2)), (50, 0, .seconds(1)),
            (0, 1, .milliseconds(50)), (1, -3, .milliseconds(25)), (1, 7, .milliseconds(50)),
        ]
        for test in cases {
            XCTAssertEqual(policy.delay(afterFailures: test.failures, jitter: test.jitter), test.expected, "\(test)")
        }
        XCTAssertEqual(ReconnectPolicy(initialDelay: .seconds(3), maximumDelay: .seconds(1)).maximumDelay, .seconds(3), "the cap is at least the first delay")
    }
}

final class ReachabilityTrackerTests: XCTestCase {
    private static let gone = ReachClientError.daemonNotRunning(socketPath: "/s", connectionRefused: true)
    private static let wired = ReachabilityAnswer(status: .reachableViaWired, primaryInterface: "eth0", flags: [.reachable])
    private static let wifi = ReachabilityAnswer(status: .reachableViaWiFi, primaryInterface: "wlan0", flags: [.reachable])
    private static let noCarrier = ReachabilityAnswer(status: .notReachable, unsatisfiedReason: .noCarrier)
    private static let noRoute = ReachabilityAnswer(status: .notReachable, unsatisfiedReason: .noRoute)
    private static let direct = ReachabilityAnswer(status: .reachableViaWired, primaryInterface: "eth0", flags: [.reachable, .isDirect])

    private enum Event {
        case answer(ReachabilityAnswer, AnswerKind)
        case unavailable
    }

    func testWhatIsTold() {
        typealias Cause = ReachabilityChange.Cause
        let cases: [(name: String, events: [Event], told: (status: ReachabilityStatus, previous: ReachabilityStatus, cause: Cause)?)] = [
            ("the first answer is told", [.answer(Self.wired, .first)], (.reachableViaWired, .unknown, .firstAnswer)),
            ("a first answer that is not reachable, with its reason", [.answer(Self.noCarrier, .first)], (.notReachable, .unknown, .firstAnswer)),
            ("the same answer again is not", [.answer(Self.wired, .first), .answer(Self.wired, .update)], nil),
            ("another interface of another type",
             [.answer(Self.wired, .first), .answer(Self.wifi, .update)], (.reachableViaWiFi, .reachableViaWired, .networkChanged([.reachability, .primaryInterface]))),
            ("unreachable",
             [.answer(Self.wired, .first), .answer(Self.noCarrier, .update)],
             (.notReachable, .reachableViaWired, .networkChanged([.status, .reachability, .primaryInterface, .flags]))),
            ("still unreachable, for another reason",
             [.answer(Self.noCarrier, .first), .answer(Self.noRoute, .update)], (.notReachable, .notReachable, .networkChanged([.status]))),
            ("flags alone", [.answer(Self.wired, .first), .answer(Self.direct, .update)], (.reachableViaWired, .reachableViaWired, .networkChanged([.flags]))),
            ("reachd unavailable", [.answer(Self.wired, .first), .unavailable], (.unknown, .reachableViaWired, .daemonUnavailable(Self.gone))),
            ("reachd back with the same answer is told (status was unknown)",
             [.answer(Self.wired, .first), .unavailable, .answer(Self.wired, .reconnected)], (.reachableViaWired, .unknown, .daemonAvailable)),
            ("reachd restarted behind the socket, same answer: nothing",
             [.answer(Self.wired, .first), .answer(Self.wired, .restarted)], nil),
            ("reachd restarted behind the socket with another answer",
             [.answer(Self.wired, .first), .answer(Self.noCarrier, .restarted)],
             (.notReachable, .reachableViaWired, .daemonRestarted([.status, .reachability, .primaryInterface, .flags]))),
            ("unavailable before any answer", [.unavailable], (.unknown, .unknown, .daemonUnavailable(Self.gone))),
        ]
        for test in cases {
            var tracker = ReachabilityTracker()
            var last: ReachabilityChange?
            for event in test.events {
                switch event {
                case let .answer(answer, kind): last = tracker.received(answer, kind: kind)
                case .unavailable: last = tracker.unavailable(Self.gone)
                }
            }
            XCTAssertEqual(last?.status, test.told?.status, test.name)
            XCTAssertEqual(last?.previousStatus, test.told?.previous, test.name)
            XCTAssertEqual(last?.cause, test.told?.cause, test.name)
        }
    }

    func testDescriptions() {
        let cases: [(ReachabilityChange, String)] = [
            (ReachabilityChange(status: .reachableViaWired, previousStatus: .unknown, cause: .firstAnswer, primaryInterface: "eth0"),
             "reachableViaWired via eth0 (first answer)"),
            (ReachabilityChange(status: .notReachable, previousStatus: .reachableViaWired, cause: .networkChanged([.status, .reachability]),
                                unsatisfiedReason: .nameNotFound),
             "notReachable: nameNotFound (network changed: status, reachability)"),
            (ReachabilityChange(status: .unknown, previousStatus: .notReachable, cause: .daemonUnavailable(Self.gone)),
             "unknown (cannot reach reachd at /s: connection refused (is reachd running?))"),
        ]
        for (change, expected) in cases { XCTAssertEqual("\(change)", expected) }
        XCTAssertEqual(ReachabilityStatus.allCases.map(ReachabilityManager.localizedString(for:)),
                       ["Unknown", "Not Reachable", "Reachable via WiFi", "Reachable via WWAN", "Reachable via Wired", "Reachable via Other"])
    }
}
