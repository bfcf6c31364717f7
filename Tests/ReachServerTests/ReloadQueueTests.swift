import NIOCore
import NIOEmbedded
@testable import ReachServer
import ReachTargets
import XCTest

/// Reloads one at a time, as a table: requests and ends in, actions out.
final class ReloadQueueTests: XCTestCase {
    private enum Input {
        case requested(EventLoopPromise<ReloadOutcome>?)
        case finished(ReloadOutcome)
    }

    private let loop = EmbeddedEventLoop()
    private var promises: [EventLoopPromise<ReloadOutcome>] = []

    override func tearDown() {
        for promise in promises { promise.succeed(.applied) }  // NIO calls a dropped promise a leak
        promises = []
    }

    private func reply() -> EventLoopPromise<ReloadOutcome> {
        let promise = loop.makePromise(of: ReloadOutcome.self)
        promises.append(promise)
        return promise
    }

    func testOneReadAtATimeAndOneMoreForEveryoneWhoAskedMeanwhile() {
        let (first, second, third) = (reply(), reply(), reply())
        let rows: [(name: String, steps: [(Input, [ReloadQueue.Action])], end: ReloadQueue.State)] = [
            ("SIGHUP alone", [(.requested(nil), [.read(askedByClient: false)]), (.finished(.applied), [])], .idle),
            ("a client alone", [
                (.requested(first), [.read(askedByClient: true)]),
                (.finished(.refused("line 2")), [.answer([first], .refused("line 2"))]),
            ], .idle),
            ("asked twice while a read runs: one more read answers both", [
                (.requested(nil), [.read(askedByClient: false)]),
                (.requested(first), []),
                (.requested(second), []),
                (.finished(.applied), [.read(askedByClient: true)]),
                (.finished(.applied), [.answer([first, second], .applied)]),
            ], .idle),
            ("SIGHUPs while a client's read runs: the client is answered by its own read", [
                (.requested(third), [.read(askedByClient: true)]),
                (.requested(nil), []),
                (.requested(nil), []),
                (.finished(.applied), [.answer([third], .applied), .read(askedByClient: false)]),
                (.finished(.applied), []),
            ], .idle),
            ("an end with no read under way changes nothing", [(.finished(.applied), [])], .idle),
        ]
        for row in rows {
            var queue = ReloadQueue()
            for (index, (input, expected)) in row.steps.enumerated() {
                let actions: [ReloadQueue.Action]
                switch input {
                case let .requested(reply): actions = queue.requested(reply)
                case let .finished(outcome): actions = queue.finished(outcome)
                }
                XCTAssertEqual(actions, expected, "\(row.name), step \(index)")
            }
            XCTAssertEqual(queue.state, row.end, row.name)
        }
    }
}
