import ReachabilityCore
import XCTest

/// Whether a stall is published as found or first decided by a probe round, as a table of
/// steps: the engine's verdicts or a finished round in, the actions out.
final class StallConfirmationTests: XCTestCase {
    enum Input {
        case found([Int32: DataStall], published: [Int32: DataStall], probed: Set<Int32>, at: Duration = .zero)
        case probeFinished(Int32, DataStall)
    }

    struct Step {
        var name: String
        var input: Input
        var actions: [StallConfirmation.Action]
        var awaiting: [Int32: DataStall]
    }

    private static let start = ContinuousClock.now
    private static let first = DataStall(since: 100, sockets: 4, destinations: 3, users: 2)
    private static let second = DataStall(since: 130, sockets: 3, destinations: 3, users: 1)

    private func play(_ steps: [Step], file: StaticString = #filePath, line: UInt = #line) {
        var confirmation = StallConfirmation()
        for step in steps {
            let actions: [StallConfirmation.Action]
            switch step.input {
            case let .found(found, published, probed, at):
                actions = confirmation.engineFound(found, published: published, probed: probed, now: Self.start + at)
            case let .probeFinished(index, stall): actions = confirmation.probeFinished(on: index, for: stall)
            }
            XCTAssertEqual(actions, step.actions, step.name, file: file, line: line)
            XCTAssertEqual(confirmation.awaitingProbe, step.awaiting, step.name, file: file, line: line)
        }
    }

    func testWithoutProbesTheBreadthRuleAloneDecides() {
        play([
            Step(name: "found: published at once", input: .found([2: Self.first], published: [:], probed: []), actions: [.publish(2, Self.first)], awaiting: [:]),
            Step(name: "found again: nothing", input: .found([2: Self.first], published: [2: Self.first], probed: []), actions: [], awaiting: [:]),
            Step(name: "probes run on another interface only", input: .found([2: Self.first, 3: Self.second], published: [2: Self.first], probed: [4]),
                 actions: [.publish(3, Self.second)], awaiting: [:]),
            Step(name: "cleared", input: .found([:], published: [2: Self.first, 3: Self.second], probed: []),
                 actions: [.publish(2, nil), .publish(3, nil)], awaiting: [:]),
        ])
    }

    func testWithProbesARoundDecidesFirst() {
        play([
            Step(name: "found: a round first, nothing published", input: .found([2: Self.first], published: [:], probed: [2]),
                 actions: [.probe(2, Self.first, at: Self.start)], awaiting: [2: Self.first]),
            Step(name: "found again while the round runs: no second round", input: .found([2: Self.first], published: [:], probed: [2]),
                 actions: [], awaiting: [2: Self.first]),
            Step(name: "the round finished: published, for its verdict to decide", input: .probeFinished(2, Self.first),
                 actions: [.publish(2, Self.first)], awaiting: [:]),
            Step(name: "a late second report of that round: nothing", input: .probeFinished(2, Self.first), actions: [], awaiting: [:]),
        ])
    }

    func testAStallThatClearsBeforeItsRoundIsNeverPublished() {
        play([
            Step(name: "found", input: .found([2: Self.first], published: [:], probed: [2]), actions: [.probe(2, Self.first, at: Self.start)], awaiting: [2: Self.first]),
            Step(name: "cleared while probing: nothing was published, nothing to clear", input: .found([:], published: [:], probed: [2]),
                 actions: [], awaiting: [:]),
            Step(name: "the round finished: too late", input: .probeFinished(2, Self.first), actions: [], awaiting: [:]),
            Step(name: "a new stall: a new round, a minute after the first", input: .found([2: Self.second], published: [:], probed: [2]),
                 actions: [.probe(2, Self.second, at: Self.start + .seconds(60))], awaiting: [2: Self.second]),
            Step(name: "the first round's report does not publish the second stall", input: .probeFinished(2, Self.first),
                 actions: [], awaiting: [2: Self.second]),
            Step(name: "its own does", input: .probeFinished(2, Self.second), actions: [.publish(2, Self.second)], awaiting: [:]),
        ])
    }

    /// Rounds a stall asks for are a minute apart per interface: a suspicion raised again
    /// sooner waits for its round; another interface does not.
    func testRoundsAreAMinuteApart() {
        let third = DataStall(since: 150, sockets: 3, destinations: 4, users: 1)
        play([
            Step(name: "found at 0 s: probed now", input: .found([2: Self.first], published: [:], probed: [2, 3]),
                 actions: [.probe(2, Self.first, at: Self.start)], awaiting: [2: Self.first]),
            Step(name: "cleared at 10 s", input: .found([:], published: [:], probed: [2, 3], at: .seconds(10)), actions: [], awaiting: [:]),
            Step(name: "found again at 20 s: its round waits until 60 s; wlan0's runs now",
                 input: .found([2: Self.second, 3: third], published: [:], probed: [2, 3], at: .seconds(20)),
                 actions: [.probe(2, Self.second, at: Self.start + .seconds(60)), .probe(3, third, at: Self.start + .seconds(20))],
                 awaiting: [2: Self.second, 3: third]),
            Step(name: "cleared, found at 200 s: probed now", input: .found([2: third], published: [:], probed: [2, 3], at: .seconds(200)),
                 actions: [.probe(2, third, at: Self.start + .seconds(200))], awaiting: [2: third]),
        ])
    }
}
