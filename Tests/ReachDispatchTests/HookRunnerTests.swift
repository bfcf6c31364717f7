import ReachDispatch
import ReachProtocol
import ReachabilityCore
import XCTest

/// The hook runner: one round at a time, changes during a round folded into one.
final class HookRunnerTests: XCTestCase {
    private func event(_ sequence: Int, _ status: PathStatus, changes: [PathChange] = [.status], kind: DispatchEvent.Kind = .change) -> DispatchEvent {
        DispatchEvent(kind: kind, sequence: sequence, instance: "run-1",
                      path: Path(status: status, reachability: status == .satisfied ? .reachableViaWired : .notReachable),
                      changes: changes)
    }

    /// What the owner saw, one word per action: "list 3", "run a 3", "wait".
    private func word(_ action: HookRunner<DispatchEvent>.Action) -> String {
        switch action {
        case .wait: return "wait"
        case let .list(event): return "list \(event.sequence)"
        case let .run(hook, event): return "run \(hook) \(event.sequence)"
        }
    }

    func testARoundRunsEveryHookInOrderThenIdles() {
        var runner = HookRunner<DispatchEvent>()
        XCTAssertEqual(word(runner.received(event(1, .satisfied))), "list 1")
        XCTAssertEqual(word(runner.listed(["10-a", "20-b"])), "run 10-a 1")
        XCTAssertEqual(word(runner.finished()), "run 20-b 1")
        XCTAssertEqual(word(runner.finished()), "wait")
        guard case .idle = runner.state else { return XCTFail("\(runner.state)") }
        // Stray inputs while idle do nothing.
        XCTAssertEqual(word(runner.finished()), "wait")
        XCTAssertEqual(word(runner.listed(["x"])), "wait")
    }

    func testAnEmptyDirectoryEndsTheRoundAtOnce() {
        var runner = HookRunner<DispatchEvent>()
        XCTAssertEqual(word(runner.received(event(1, .satisfied))), "list 1")
        XCTAssertEqual(word(runner.received(event(2, .unsatisfied))), "wait")
        // No hooks: the pending event's round starts (the directory may have hooks by then).
        XCTAssertEqual(word(runner.listed([])), "list 2")
        XCTAssertEqual(word(runner.listed([])), "wait")
        guard case .idle = runner.state else { return XCTFail("\(runner.state)") }
    }

    /// 100 changes while a slow hook runs: one more round, with the latest state and every
    /// change since; 100 more during that round: one more again. Never a queue.
    func testHundredFlapsWhileRunningMakeAtMostTwoMoreRounds() {
        var runner = HookRunner<DispatchEvent>()
        var runs: [DispatchEvent] = []
        func carry(_ action: HookRunner<DispatchEvent>.Action) -> HookRunner<DispatchEvent>.Action {
            switch action {
            case .list: return runner.listed(["10-slow"])
            case let .run(_, event):
                runs.append(event)
                return .wait
            case .wait: return .wait
            }
        }
        _ = carry(carry(runner.received(event(0, .satisfied, changes: [], kind: .initial))))
        XCTAssertEqual(runs.map(\.sequence), [0])
        // The hook runs; 100 flaps arrive, the last one unsatisfied.
        for sequence in 1...100 {
            let changes: [PathChange] = sequence == 50 ? [.gateways, .status] : [.status]
            XCTAssertEqual(word(runner.received(event(sequence, sequence.isMultiple(of: 2) ? .satisfied : .unsatisfied, changes: changes))), "wait")
        }
        guard case let .running(_, _, _, pending?) = runner.state else { return XCTFail("\(runner.state)") }
        XCTAssertEqual(pending.sequence, 100)
        // The first round ends: one round with the latest.
        _ = carry(carry(runner.finished()))
        XCTAssertEqual(runs.map(\.sequence), [0, 100])
        XCTAssertEqual(runs.last?.path.status, .satisfied)
        XCTAssertEqual(runs.last?.changes, [.status, .gateways], "every change since the last round, in canonical order")
        XCTAssertEqual(runs.last?.kind, .change)
        // 100 more during it, ending unsatisfied; then the runner goes idle.
        for sequence in 101...200 {
            _ = runner.received(event(sequence, sequence.isMultiple(of: 2) ? .satisfied : .unsatisfied))
        }
        _ = carry(carry(runner.finished()))
        XCTAssertEqual(runs.map(\.sequence), [0, 100, 200])
        XCTAssertEqual(word(runner.finished()), "wait")
        guard case .idle = runner.state else { return XCTFail("\(runner.state)") }
        XCTAssertEqual(runs.count - 1, 2, "at most two more rounds for 200 changes")
    }

    func testEventsWhileListingArePendingToo() {
        var runner = HookRunner<DispatchEvent>()
        XCTAssertEqual(word(runner.received(event(1, .satisfied))), "list 1")
        XCTAssertEqual(word(runner.received(event(2, .unsatisfied))), "wait")
        XCTAssertEqual(word(runner.received(event(3, .satisfied))), "wait")
        XCTAssertEqual(word(runner.listed(["a"])), "run a 1")
        XCTAssertEqual(word(runner.finished()), "list 3")
        XCTAssertEqual(word(runner.listed(["a"])), "run a 3")
        XCTAssertEqual(word(runner.finished()), "wait")
    }
}
