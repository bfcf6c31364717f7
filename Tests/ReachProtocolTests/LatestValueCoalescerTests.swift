import ReachProtocol
import XCTest

/// The latest-value state machine, input by input: what it delivers and what it folds.
final class LatestValueCoalescerTests: XCTestCase {
    /// A value that remembers every value folded into it.
    private struct Trace: Coalescible, Equatable {
        var values: [Int]
        func coalesced(with newer: Trace) -> Trace { Trace(values: values + newer.values) }
    }

    private enum Input {
        case offer(Int)
        case ready
        case pause
        case resume
    }

    private struct Case {
        var name: String
        var consumerReady: Bool
        var inputs: [Input]
        /// One entry per input: the values delivered by it (nil: nothing).
        var delivered: [[Int]?]
        /// What is still pending at the end.
        var pending: [Int]?
    }

    private let cases: [Case] = [
        Case(name: "a ready consumer gets the first value at once",
             consumerReady: true, inputs: [.offer(1)], delivered: [[1]], pending: nil),
        Case(name: "a busy consumer's values fold into one pending value",
             consumerReady: true, inputs: [.offer(1), .offer(2), .offer(3)], delivered: [[1], nil, nil], pending: [2, 3]),
        Case(name: "readiness takes the pending value",
             consumerReady: true, inputs: [.offer(1), .offer(2), .offer(3), .ready], delivered: [[1], nil, nil, [2, 3]], pending: nil),
        Case(name: "ready with nothing pending waits; the next offer goes straight out",
             consumerReady: true, inputs: [.offer(1), .ready, .offer(2)], delivered: [[1], nil, [2]], pending: nil),
        Case(name: "a consumer that starts unready gets nothing until it asks",
             consumerReady: false, inputs: [.offer(1), .offer(2), .ready, .ready, .offer(3)],
             delivered: [nil, nil, [1, 2], nil, [3]], pending: nil),
        Case(name: "asking twice is one request, not two",
             consumerReady: false, inputs: [.ready, .ready, .offer(1), .offer(2)], delivered: [nil, nil, [1], nil], pending: [2]),
        Case(name: "pause holds values even for a waiting consumer",
             consumerReady: true, inputs: [.pause, .offer(1), .offer(2), .resume], delivered: [nil, nil, nil, [1, 2]], pending: nil),
        Case(name: "resume without a waiting consumer delivers nothing",
             consumerReady: true, inputs: [.offer(1), .pause, .offer(2), .resume, .ready],
             delivered: [[1], nil, nil, nil, [2]], pending: nil),
        Case(name: "readiness while paused waits for resume",
             consumerReady: true, inputs: [.offer(1), .pause, .offer(2), .ready, .resume],
             delivered: [[1], nil, nil, nil, [2]], pending: nil),
        Case(name: "resume with nothing pending keeps the consumer waiting",
             consumerReady: true, inputs: [.pause, .resume, .offer(7)], delivered: [nil, nil, [7]], pending: nil),
    ]

    func testTransitions() {
        for testCase in cases {
            var machine = LatestValueCoalescer<Trace>(consumerReady: testCase.consumerReady)
            var delivered: [[Int]?] = []
            for input in testCase.inputs {
                let action: LatestValueCoalescer<Trace>.Action
                switch input {
                case let .offer(value): action = machine.offer(Trace(values: [value]))
                case .ready: action = machine.consumerReady()
                case .pause: machine.pause(); action = .none
                case .resume: action = machine.resume()
                }
                if case let .deliver(trace) = action { delivered.append(trace.values) } else { delivered.append(nil) }
            }
            XCTAssertEqual(delivered, testCase.delivered, testCase.name)
            XCTAssertEqual(machine.pending?.values, testCase.pending, testCase.name)
        }
    }

    /// However many values a stalled consumer misses, one value waits for it, holding all of them.
    func testMemoryStaysBoundedAndNothingIsLost() {
        var machine = LatestValueCoalescer<Trace>(consumerReady: false)
        for value in 1...10_000 { _ = machine.offer(Trace(values: [value])) }
        guard case let .deliver(trace) = machine.consumerReady() else { return XCTFail("nothing delivered") }
        XCTAssertEqual(trace.values, Array(1...10_000))
        XCTAssertNil(machine.pending)
    }
}
