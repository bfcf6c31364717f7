@testable import ReachTargets
import XCTest


/// Which lookup gets a worker thread when, event by event, with small limits: 6 threads,
/// 2 per uid, 2 kept for reachd itself (so clients share 4).
final class BlockingScheduleTests: XCTestCase {
    private enum Event {
        case ask(Int, WorkOwner)
        case done(Int)
        case gaveUp(Int)
        case returned(Int, running: Bool)
    }

    private typealias Step = (event: Event, actions: [BlockingSchedule.Action])

    private static let alice = WorkOwner.user(1000)
    private static let mallory = WorkOwner.user(65534)
    private static let bob = WorkOwner.user(1001)
    private static let carol = WorkOwner.user(1002)

    private func run(_ name: String, _ steps: [Step], file: StaticString = #filePath, line: UInt = #line) -> BlockingSchedule {
        var schedule = BlockingSchedule(limits: .init(threads: 6, perUser: 2, daemon: 2))
        for (index, step) in steps.enumerated() {
            let actions: [BlockingSchedule.Action]
            switch step.event {
            case let .ask(id, owner): actions = schedule.enqueue(id, owner: owner)
            case let .done(id): actions = schedule.finished(id)
            case let .gaveUp(id): actions = schedule.callerGaveUp(id)
            case let .returned(id, running):
                XCTAssertEqual(schedule.callerReturned(id), running, "\(name), step \(index)", file: file, line: line)
                actions = []
            }
            XCTAssertEqual(actions, step.actions, "\(name), step \(index): \(step.event)", file: file, line: line)
        }
        return schedule
    }

    /// One uid asking for 100 names holds its 2 threads and queues the rest; another uid's
    /// lookup starts at once, and so do reachd's own.
    func testAMonopolisingUserDelaysNobodyElse() {
        var steps: [Step] = [(.ask(1, Self.mallory), [.start(1)]), (.ask(2, Self.mallory), [.start(2)])]
        steps += (3...100).map { (.ask($0, Self.mallory), []) }
        steps += [
            (.ask(101, Self.alice), [.start(101)]),
            (.ask(102, .daemon), [.start(102)]),
            (.done(101), []),  // nothing of mallory's may take alice's freed thread
            (.done(1), [.start(3)]),  // mallory's next, in order
        ]
        let schedule = run("monopolising", steps)
        XCTAssertEqual(schedule.threads(of: Self.mallory), 2)
        XCTAssertEqual(schedule.queued(for: Self.mallory), 97)
        XCTAssertEqual(schedule.threads, 3)
    }

    /// A lookup whose caller gave up keeps its thread and its owner's share until it returns;
    /// a queued one whose caller gave up is dropped and never runs.
    func testAbandonedAndDroppedLookups() {
        let schedule = run("abandoned", [
            (.ask(1, Self.mallory), [.start(1)]), (.ask(2, Self.mallory), [.start(2)]), (.ask(3, Self.mallory), []),
            (.ask(4, Self.mallory), []),
            (.gaveUp(1), []), (.gaveUp(2), []),  // running: abandoned, still holding their threads
            (.gaveUp(3), [.drop(3)]),  // queued: never started
            (.gaveUp(3), []),  // twice is nothing
            (.ask(5, Self.alice), [.start(5)]),
            (.done(1), [.start(4)]),  // 3 is gone: 4 is next
            (.done(2), []),
            (.gaveUp(99), []),  // unknown
        ])
        XCTAssertFalse(schedule.isAbandoned(4))
        XCTAssertEqual(schedule.threads(of: Self.mallory), 1)
        XCTAssertEqual(schedule.queued(for: Self.mallory), 0)
    }

    /// The same owner asking again for a name whose lookup it abandoned waits for that
    /// lookup instead of queueing another.
    func testReturningCaller() {
        var schedule = run("returning", [
            (.ask(1, Self.alice), [.start(1)]), (.gaveUp(1), []), (.returned(1, running: true), []),
            (.ask(2, Self.alice), [.start(2)]), (.returned(3, running: false), []),
        ])
        XCTAssertFalse(schedule.isAbandoned(1))
        _ = schedule.callerGaveUp(1)
        XCTAssertTrue(schedule.isAbandoned(1))
    }

    /// Clients together hold at most threads minus reachd's share (4 here): a fifth uid waits
    /// for a thread, then uids take turns in the order they asked; reachd is never refused
    /// its own 2.
    func testCapAndTurns() {
        let dave = WorkOwner.user(1003)
        let schedule = run("cap", [
            (.ask(1, Self.mallory), [.start(1)]), (.ask(2, Self.mallory), [.start(2)]),
            (.ask(3, Self.alice), [.start(3)]), (.ask(4, Self.alice), [.start(4)]),
            (.ask(5, Self.bob), []), (.ask(6, Self.carol), []), (.ask(7, Self.bob), []), (.ask(8, dave), []),
            (.ask(9, .daemon), [.start(9)]), (.ask(10, .daemon), [.start(10)]), (.ask(11, .daemon), []),
            (.done(1), [.start(5)]),  // bob asked first
            (.done(2), [.start(6)]),  // then carol, although bob has more
            (.done(3), [.start(8)]),  // then dave
            (.done(4), [.start(7)]),  // bob again
            (.done(9), [.start(11)]),
        ])
        XCTAssertEqual(schedule.threads, 6)
        XCTAssertEqual(schedule.threads(of: Self.bob), 2)
        XCTAssertEqual(schedule.threads(of: .daemon), 2)
    }

    /// Abandoned lookups count against the cap too: uids whose lookups all hang fill the
    /// clients' threads, and only a lookup returning frees one (the cap bounds the threads
    /// a dead DNS server can pin); reachd's share stays free.
    func testAbandonedLookupsFillTheCap() {
        let schedule = run("cap of abandoned", [
            (.ask(1, Self.mallory), [.start(1)]), (.ask(2, Self.mallory), [.start(2)]),
            (.ask(3, Self.bob), [.start(3)]), (.ask(4, Self.bob), [.start(4)]),
            (.gaveUp(1), []), (.gaveUp(2), []), (.gaveUp(3), []), (.gaveUp(4), []),
            (.ask(5, Self.alice), []),
            (.ask(6, .daemon), [.start(6)]),
            (.gaveUp(5), [.drop(5)]),
            (.ask(7, Self.alice), []),
            (.done(3), [.start(7)]),
        ])
        XCTAssertEqual(schedule.threads, 5)
    }
}
