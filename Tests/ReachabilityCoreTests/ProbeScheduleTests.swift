import ReachabilityCore
import XCTest

/// The probe schedule as a sequence of inputs and the actions each must give, on a fake clock.
final class ProbeScheduleTests: XCTestCase {
    private enum Input {
        case path(eligible: Bool)
        case finished(round: Int, Connectivity, at: Duration, sessionEndsAt: Duration? = nil)
        case timer
        case request
    }

    private enum Expected: Equatable {
        case start(Int)
        case arm(at: Duration)
        case cancel
    }

    private func run(_ steps: [(Input, [Expected])], configuration: ProbeSchedule.Configuration = .init(), file: StaticString = #filePath, line: UInt = #line) {
        let zero = ContinuousClock.now
        var schedule = ProbeSchedule(configuration: configuration)
        for (index, (input, expected)) in steps.enumerated() {
            let actions: [ProbeSchedule.Action]
            switch input {
            case let .path(eligible): actions = schedule.pathChanged(eligible: eligible)
            case let .finished(round, connectivity, at, ends):
                actions = schedule.probeFinished(round: round, connectivity: connectivity, sessionEnds: ends.map { zero + $0 }, now: zero + at)
            case .timer: actions = schedule.timerFired()
            case .request: actions = schedule.probeRequested()
            }
            let got = actions.map { action -> Expected in
                switch action {
                case let .startProbe(round): return .start(round)
                case let .armTimer(at): return .arm(at: at - zero)
                case .cancelTimer: return .cancel
                }
            }
            XCTAssertEqual(got, expected, "step \(index): \(input)", file: file, line: line)
        }
    }

    /// Full at once: then silence (no timer: an idle validated daemon never wakes).
    func testFullStaysSilent() {
        run([
            (.path(eligible: true), [.cancel, .start(1)]),
            (.finished(round: 1, .full, at: .milliseconds(80)), []),
            (.timer, []),  // a stray timer does nothing
            (.request, [.start(2)]),  // reachctl probe
            (.finished(round: 2, .full, at: .seconds(5)), []),
        ])
    }

    /// Not full: 1 s doubling to the cap; full ends the retries.
    func testBackoffUntilFull() {
        run([
            (.path(eligible: true), [.cancel, .start(1)]),
            (.finished(round: 1, .limited, at: .seconds(0)), [.arm(at: .seconds(1))]),
            (.timer, [.start(2)]),
            (.finished(round: 2, .limited, at: .seconds(1)), [.arm(at: .seconds(3))]),
            (.timer, [.start(3)]),
            (.finished(round: 3, .portal, at: .seconds(3)), [.arm(at: .seconds(7))]),
            (.timer, [.start(4)]),
            (.finished(round: 4, .portal, at: .seconds(7)), [.arm(at: .seconds(15))]),
            (.timer, [.start(5)]),
            (.finished(round: 5, .portal, at: .seconds(15)), [.arm(at: .seconds(25))]),  // capped at 10 s
            (.timer, [.start(6)]),
            (.finished(round: 6, .full, at: .seconds(25)), []),
        ], configuration: .init(initialDelay: .seconds(1), maximumDelay: .seconds(10)))
    }

    /// A path change supersedes a running round and restarts the backoff; losing the route
    /// stops everything.
    func testPathChangesSupersede() {
        run([
            (.path(eligible: true), [.cancel, .start(1)]),
            (.path(eligible: true), [.cancel, .start(2)]),
            (.finished(round: 1, .limited, at: .seconds(1)), []),  // superseded: dropped
            (.finished(round: 2, .limited, at: .seconds(1)), [.arm(at: .seconds(2))]),
            (.request, [.cancel, .start(3)]),
            (.request, []),  // already running
            (.path(eligible: false), [.cancel]),
            (.finished(round: 3, .full, at: .seconds(2)), []),  // the route is gone: dropped
            (.timer, []),
            (.request, []),  // nothing to probe over
            (.path(eligible: true), [.cancel, .start(5)]),
            (.finished(round: 5, .limited, at: .seconds(10)), [.arm(at: .seconds(11))]),  // backoff restarted
        ])
    }

    /// Full with a captive session that ends, or a configured re-check: the earlier of the two.
    func testSessionEndAndRecheck() {
        run([
            (.path(eligible: true), [.cancel, .start(1)]),
            (.finished(round: 1, .full, at: .seconds(0), sessionEndsAt: .seconds(600)), [.arm(at: .seconds(570))]),
            (.timer, [.start(2)]),
            (.finished(round: 2, .full, at: .seconds(570), sessionEndsAt: .seconds(580)), [.arm(at: .seconds(570))]),  // already within the margin: at once
        ])
        run([
            (.path(eligible: true), [.cancel, .start(1)]),
            (.finished(round: 1, .full, at: .seconds(0), sessionEndsAt: .seconds(7200)), [.arm(at: .seconds(3600))]),
        ], configuration: .init(recheckInterval: .seconds(3600)))
    }
}
