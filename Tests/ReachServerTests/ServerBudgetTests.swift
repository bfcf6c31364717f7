@testable import ReachServer
import XCTest


/// Who may hold how many connections and buffered bytes.
final class ServerBudgetTests: XCTestCase {
    private var limits: ServerLimits {
        var limits = ServerLimits()
        limits.connections = 5
        limits.connectionsPerUser = 3
        limits.bufferedBytes = 100
        limits.bufferedBytesPerUser = 60
        return limits
    }

    func testConnectionCaps() {
        var budget = ServerBudget(limits: limits)
        let admitted = [1000, 1000, 1000, 1000, 0, 0, 2000].map { budget.admit(uid: $0) }
        XCTAssertEqual(admitted, [nil, nil, nil, .connectionsPerUser, nil, nil, .connections])
        XCTAssertEqual(budget.connections, 5)
        budget.release(uid: 1000, bufferedBytes: 0)
        XCTAssertEqual(budget.admit(uid: 2000), nil, "a slot freed by one uid goes to anyone")
        XCTAssertEqual(budget.admit(uid: 1000), .connections)
        XCTAssertEqual(budget.connections(of: 1000), 2)
    }

    func testBufferedBytes() {
        var budget = ServerBudget(limits: limits)
        let steps: [(uid: UInt32, from: Int, to: Int, expected: ServerBudget.Limit?)] = [
            (1000, 0, 40, nil),
            (1000, 0, 30, .bufferedBytesPerUser),   // 40 + 30 > 60 for uid 1000
            (1000, 40, 60, nil),                    // growing one connection to exactly the cap
            (0, 0, 40, nil),                        // 60 + 40 = 100 in all
            (0, 0, 1, .bufferedBytes),
            (1000, 60, 0, nil),                     // a finished message frees its bytes
            (0, 40, 50, nil),                       // uid 0's message grows: 50 in all
        ]
        for (index, step) in steps.enumerated() {
            XCTAssertEqual(budget.rebuffer(uid: step.uid, from: step.from, to: step.to), step.expected, "step \(index)")
        }
        XCTAssertEqual(budget.buffered, 50)
    }

    func testReleaseFreesTheConnectionsBytes() {
        var budget = ServerBudget(limits: limits)
        XCTAssertNil(budget.admit(uid: 7))
        XCTAssertNil(budget.rebuffer(uid: 7, from: 0, to: 60))
        budget.release(uid: 7, bufferedBytes: 60)
        XCTAssertEqual(budget.buffered, 0)
        XCTAssertEqual(budget.connections, 0)
        XCTAssertNil(budget.admit(uid: 7))
        XCTAssertNil(budget.rebuffer(uid: 7, from: 0, to: 60))
    }
}
