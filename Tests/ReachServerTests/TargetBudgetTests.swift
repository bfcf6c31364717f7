@testable import ReachServer
import XCTest


/// The target ledger, step by step: caps in all and per uid, and what is given back.
final class TargetBudgetTests: XCTestCase {
    private enum Step {
        case check(UInt32, refused: String?)
        case checked(UInt32)
        case stream(UInt32, refused: String?)
        case closed(UInt32)
    }

    /// The per-user rate: a burst of the per-second allowance, then refills with time; other
    /// users have their own.
    func testCheckRate() {
        var limits = ServerLimits()
        limits.targetChecksPerSecondPerUser = 4
        var budget = TargetBudget(limits: limits)
        let start = ContinuousClock.now
        let steps: [(at: Duration, uid: UInt32, refused: Bool)] = [
            (.zero, 1, false), (.zero, 1, false), (.zero, 1, false), (.zero, 1, false),
            (.zero, 1, true), (.zero, 2, false),
            (.milliseconds(250), 1, false), (.milliseconds(250), 1, true),
            (.seconds(2), 1, false), (.seconds(2), 1, false), (.seconds(2), 1, false), (.seconds(2), 1, false), (.seconds(2), 1, true),
        ]
        for (index, step) in steps.enumerated() {
            let limit = budget.spendCheck(uid: step.uid, now: start + step.at)
            XCTAssertEqual(limit != nil, step.refused, "step \(index)")
            if let limit { XCTAssertEqual(limit, TargetBudget.Limit(name: "target checks per second per user", maximum: 4)) }
        }
    }

    func testLedger() {
        var limits = ServerLimits()
        limits.targetStreams = 3
        limits.targetStreamsPerUser = 2
        limits.targetsInFlightPerUser = 2
        var budget = TargetBudget(limits: limits)
        let steps: [Step] = [
            .check(1000, refused: nil), .check(1000, refused: nil),
            .check(1000, refused: "targets in flight per user"),
            .check(1001, refused: nil),  // another user is not held up
            .checked(1000), .check(1000, refused: nil),
            .stream(1000, refused: nil), .stream(1000, refused: nil),
            .stream(1000, refused: "target streams per user"),
            .stream(1001, refused: nil),
            .stream(1002, refused: "target streams"),
            .closed(1000), .stream(1002, refused: nil),
        ]
        for (index, step) in steps.enumerated() {
            switch step {
            case let .check(uid, refused):
                XCTAssertEqual(budget.startCheck(uid: uid)?.name, refused, "step \(index)")
            case let .checked(uid):
                budget.finishCheck(uid: uid)
            case let .stream(uid, refused):
                XCTAssertEqual(budget.startStream(uid: uid)?.name, refused, "step \(index)")
            case let .closed(uid):
                budget.finishStream(uid: uid)
            }
        }
        XCTAssertEqual(budget.streams, 3)
        XCTAssertEqual(budget.startStream(uid: 1)?.maximum, 3)
        // Everything given back: the ledger is empty again.
        for uid: UInt32 in [1000, 1001, 1002] { budget.finishStream(uid: uid) }
        for uid: UInt32 in [1000, 1000, 1001] { budget.finishCheck(uid: uid) }
        XCTAssertEqual(budget, TargetBudget(limits: limits))
    }

    /// A request is admitted by its rate first, then by what it would hold: a refused one
    /// still spent from the rate, and a rate spent refuses before any cap is looked at.
    func testAdmission() {
        var limits = ServerLimits()
        limits.targetChecksPerSecondPerUser = 3
        limits.targetsInFlightPerUser = 1
        limits.targetStreamsPerUser = 1
        var budget = TargetBudget(limits: limits)
        let now = ContinuousClock.now
        let steps: [(stream: Bool, uid: UInt32, refused: String?)] = [
            (false, 1, nil),
            (false, 1, "targets in flight per user"),
            (true, 1, nil),
            (true, 1, "target checks per second per user"),  // not "target streams per user": the rate is spent
            (true, 2, nil),
            (true, 2, "target streams per user"),
            (false, 2, nil),
        ]
        for (index, step) in steps.enumerated() {
            let limit = step.stream ? budget.admitStream(uid: step.uid, now: now) : budget.admitCheck(uid: step.uid, now: now)
            XCTAssertEqual(limit?.name, step.refused, "step \(index)")
        }
        XCTAssertEqual(budget.streams, 2)
    }
}
