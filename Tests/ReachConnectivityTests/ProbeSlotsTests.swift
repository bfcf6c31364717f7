@testable import ReachConnectivity
import XCTest

/// The probe connection cap as tables of steps: requests asking for a slot, requests
/// finishing (ran or waited), and what must start, wait or be refused.
final class ProbeSlotsTests: XCTestCase {
    private enum Step {
        case admit(Int, ProbeSlots.Admission)
        case finish(Int, starts: [Int])
    }

    private struct Case {
        var name: String
        var capacity: Int
        var queueLimit: Int
        var steps: [Step]
        var running: Set<Int>
        var waiting: [Int]
    }

    private let cases: [Case] = [
        Case(name: "under the cap every request starts", capacity: 3, queueLimit: 2,
             steps: [.admit(1, .start), .admit(2, .start), .admit(3, .start)], running: [1, 2, 3], waiting: []),
        Case(name: "over the cap they wait, over the queue they are refused", capacity: 2, queueLimit: 2,
             steps: [.admit(1, .start), .admit(2, .start), .admit(3, .wait), .admit(4, .wait), .admit(5, .refuse)],
             running: [1, 2], waiting: [3, 4]),
        Case(name: "a finished request hands its slot to the oldest waiting one", capacity: 2, queueLimit: 4,
             steps: [.admit(1, .start), .admit(2, .start), .admit(3, .wait), .admit(4, .wait),
                     .finish(2, starts: [3]), .finish(1, starts: [4]), .finish(3, starts: []), .finish(4, starts: [])],
             running: [], waiting: []),
        Case(name: "a waiting request that gives up (cancelled, timed out) leaves the queue, starting nothing", capacity: 1, queueLimit: 4,
             steps: [.admit(1, .start), .admit(2, .wait), .admit(3, .wait), .finish(2, starts: []), .finish(1, starts: [3])],
             running: [3], waiting: []),
        Case(name: "a refused request finishing changes nothing", capacity: 1, queueLimit: 0,
             steps: [.admit(1, .start), .admit(2, .refuse), .finish(2, starts: []), .admit(3, .refuse)],
             running: [1], waiting: []),
        Case(name: "a request finishing twice frees one slot", capacity: 1, queueLimit: 2,
             steps: [.admit(1, .start), .admit(2, .wait), .admit(3, .wait), .finish(1, starts: [2]), .finish(1, starts: [])],
             running: [2], waiting: [3]),
        Case(name: "a superseded round's requests all finish: the next round's take their slots", capacity: 3, queueLimit: 8,
             steps: [.admit(1, .start), .admit(2, .start), .admit(3, .start), .admit(4, .wait), .admit(5, .wait), .admit(6, .wait),
                     .finish(1, starts: [4]), .finish(2, starts: [5]), .finish(3, starts: [6])],
             running: [4, 5, 6], waiting: []),
    ]

    func testTable() {
        for test in cases {
            var slots = ProbeSlots(capacity: test.capacity, queueLimit: test.queueLimit)
            for (number, step) in test.steps.enumerated() {
                let label = "\(test.name), step \(number + 1)"
                switch step {
                case let .admit(id, expected): XCTAssertEqual(slots.admit(id), expected, label)
                case let .finish(id, starts): XCTAssertEqual(slots.finished(id), starts, label)
                }
            }
            XCTAssertEqual(slots.running, test.running, test.name)
            XCTAssertEqual(slots.waiting, test.waiting, test.name)
        }
    }

    /// However many requests come, no more than the cap run and no more than the queue wait.
    func testBoundedUnderAnyLoad() {
        var slots = ProbeSlots()
        for id in 0..<10_000 {
            _ = slots.admit(id)
            if id % 3 == 0 { _ = slots.finished(id / 2) }
            XCTAssertLessThanOrEqual(slots.running.count, ProbeSlots.defaultCapacity)
            XCTAssertLessThanOrEqual(slots.waiting.count, ProbeSlots.defaultQueueLimit)
        }
    }
}
