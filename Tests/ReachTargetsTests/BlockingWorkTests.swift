import Dispatch
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
@testable import ReachTargets
import XCTest

/// `BlockingWork` on a real loop and real threads: values come back on the loop, an owner's
/// share bounds its threads while others still run, and work that never ran says so.
final class BlockingWorkTests: XCTestCase {
    private final class Harness: @unchecked Sendable {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let gate = DispatchSemaphore(value: 0)
        let running = NIOLockedValueBox(0)
        let work: NIOLoopBound<BlockingWork>

        init(limits: BlockingSchedule.Limits = .init()) throws {
            let loop = group.next()
            work = try loop.submit { NIOLoopBound(BlockingWork(eventLoop: loop, limits: limits), eventLoop: loop) }.wait()
        }

        /// Work for `owner` that blocks until `release` (a lookup stuck in glibc).
        func blocked(for owner: WorkOwner, value: Int = 0) -> EventLoopFuture<Int> {
            let work = self.work, gate = self.gate, running = self.running
            return work.eventLoop.flatSubmit {
                work.value.run(for: owner) {
                    running.withLockedValue { $0 += 1 }
                    gate.wait()
                    running.withLockedValue { $0 -= 1 }
                    return value
                }
            }
        }

        func quick(for owner: WorkOwner, value: Int) -> EventLoopFuture<Int> {
            let work = self.work
            return work.eventLoop.flatSubmit { work.value.run(for: owner) { value } }
        }

        func waitUntilRunning(_ count: Int) {
            for _ in 0..<500 where running.withLockedValue({ $0 }) < count { usleep(2_000) }
        }

        func release(_ count: Int) {
            for _ in 0..<count { gate.signal() }
        }

        func shutdown() throws {
            let work = self.work
            try work.eventLoop.submit { work.value.shutdown() }.wait()
        }

        func finish() throws {
            try group.syncShutdownGracefully()
        }
    }

    func testValueComesBackOnTheLoop() throws {
        let harness = try Harness()
        let work = harness.work
        let onLoop = try work.eventLoop.flatSubmit {
            work.value.run { 42 }.map { ($0, work.eventLoop.inEventLoop) }
        }.wait()
        XCTAssertEqual(onLoop.0, 42)
        XCTAssertTrue(onLoop.1)
        try harness.finish()
    }

    /// A user at its share waits; another user and reachd itself still get threads at once.
    func testOneOwnersShareDoesNotHoldUpOthers() throws {
        let limits = BlockingSchedule.Limits()
        let harness = try Harness(limits: limits)
        let stuck = (0..<(limits.perUser + 2)).map { harness.blocked(for: .user(1000), value: $0) }
        harness.waitUntilRunning(limits.perUser)
        XCTAssertEqual(try harness.quick(for: .user(1001), value: 7).wait(), 7)
        XCTAssertEqual(try harness.quick(for: .daemon, value: 8).wait(), 8)
        usleep(50_000)
        XCTAssertEqual(harness.running.withLockedValue { $0 }, limits.perUser, "the user's queued work waits for its own threads")
        harness.release(limits.perUser + 2)
        XCTAssertEqual(try stuck.map { try $0.wait() }, Array(0..<(limits.perUser + 2)))
        try harness.finish()
    }

    /// Queued work whose caller gives up never runs; its completion hears nil.
    func testQueuedWorkGivenUpNeverRuns() throws {
        var limits = BlockingSchedule.Limits()
        limits.daemon = 1
        let harness = try Harness(limits: limits)
        let first = harness.blocked(for: .daemon, value: 1)
        harness.waitUntilRunning(1)
        let ran = NIOLockedValueBox(false)
        let work = harness.work
        let heard: EventLoopFuture<Int?> = try work.eventLoop.submit {
            let promise = work.eventLoop.makePromise(of: Int?.self)
            let ticket = work.value.submit(for: .daemon, { ran.withLockedValue { $0 = true }; return 2 }) { promise.succeed($0) }
            work.value.callerGaveUp(ticket)
            return promise.futureResult
        }.wait()
        XCTAssertNil(try heard.wait())
        harness.release(1)
        XCTAssertEqual(try first.wait(), 1)
        usleep(50_000)
        XCTAssertFalse(ran.withLockedValue { $0 })
        try harness.finish()
    }

    /// Shutting down fails what waits and refuses what comes; running work still ends.
    func testShutdownDropsQueuedWork() throws {
        var limits = BlockingSchedule.Limits()
        limits.daemon = 1
        let harness = try Harness(limits: limits)
        let running = harness.blocked(for: .daemon, value: 1)
        harness.waitUntilRunning(1)
        let queued = harness.quick(for: .daemon, value: 2)
        try harness.shutdown()
        XCTAssertThrowsError(try queued.wait()) { XCTAssertEqual($0 as? BlockingWork.NotRun, BlockingWork.NotRun()) }
        XCTAssertThrowsError(try harness.quick(for: .user(1), value: 3).wait())
        harness.release(1)
        XCTAssertEqual(try running.wait(), 1)
        try harness.finish()
    }
}
