import Foundation
import Glibc
import LinuxSystem
import Logging
import NetlinkMonitor
import ReachabilityCore
@testable import ReachDaemon
import Synchronization
import SystemPackage
import TestSupport
import XCTest
import ReachConfiguration
import ReachTargets


/// The engine's loop against a scripted kernel: docs/DESIGN.md rule 6 made deterministic. The
/// kernel announces a removal, the first lookup after it still answers through the route
/// (as IPv4 `fib_table_delete` allows), and nothing more arrives: the engine must look
/// again by itself, on the bounded schedule, and then go quiet.
final class EngineRecheckTests: XCTestCase {
    private static let route = DefaultRoute(family: .ipv4, nextHops: [NextHop(interfaceIndex: 2, gateway: IPAddress("192.0.2.1"))])
    private static let throughRoute: [AddressFamily: RouteLookup] = [
        .ipv4: .route(RouteLookupResult(outputInterface: 2, gateway: IPAddress("192.0.2.1"), table: 254)),
    ]
    private static let noRoute: [AddressFamily: RouteLookup] = [.ipv4: .failure(.noRoute)]

    func testAStaleLookupAfterADeletionIsMadeAgainWithoutAnotherEvent() throws {
        let kernel = ScriptedKernel(tracked: [Self.route], answers: [Self.throughRoute])
        let run = try EngineRun(kernel: kernel, directory: temporaryDirectory("reachd-engine"))
        defer { run.stop() }

        kernel.deliver(DrainOutcome(changed: true, removedDefaultRoutes: [Self.route]), tracked: [],
                       answers: [Self.throughRoute, Self.noRoute])
        let published = run.waitForPublications(2)
        XCTAssertEqual(published.map(\.lookups), [Self.throughRoute, Self.noRoute],
                       "the stale answer is handed on, then the recheck's, with no event in between")
        XCTAssertEqual(published.last?.defaultRoutes, [])
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(run.published.count, 2, "confirmed: no timer left")
        XCTAssertEqual(kernel.snapshots, 3, "the first snapshot, the batch's, one recheck")
    }

    func testALegitimateAnswerIsRecheckedOnTheBoundedScheduleThenLeftAlone() throws {
        // Split routes through the deleted default's gateway: the answer never changes.
        let kernel = ScriptedKernel(tracked: [Self.route], answers: [Self.throughRoute])
        let run = try EngineRun(kernel: kernel, directory: temporaryDirectory("reachd-engine"))
        defer { run.stop() }

        kernel.deliver(DrainOutcome(changed: true, removedDefaultRoutes: [Self.route]), tracked: [], answers: [Self.throughRoute])
        let expected = 1 + LookupRecheck.schedule.count
        _ = run.waitForPublications(expected)
        Thread.sleep(forTimeInterval: 0.3)
        let times = run.publicationTimes
        XCTAssertEqual(times.count, expected, "one evaluation for the batch, one per step of the schedule, then none")
        if let first = times.first, let last = times.last {
            XCTAssertGreaterThanOrEqual(last - first, LookupRecheck.schedule.reduce(.zero, +), "each step waits its delay: no spinning")
        }
    }

    func testMonitoredTargetsAreWatchedBeforeTheyAreLookedUp() throws {
        let kernel = ScriptedKernel(tracked: [Self.route], answers: [Self.throughRoute])
        let run = try EngineRun(kernel: kernel, directory: temporaryDirectory("reachd-engine"))
        defer { run.stop() }
        let (first, second) = (TargetKey(address: IPAddress("192.0.2.80")!, uid: 0), TargetKey(address: IPAddress("2001:db8::80")!, uid: 1000))

        run.post(.monitorTargets(add: [first, second], remove: []))
        let published = run.waitForPublications(1)
        XCTAssertEqual(published.last.map { Set($0.targets.keys) }, [first, second])
        XCTAssertEqual(kernel.watches.map(\.addresses), [[first.address, second.address]])
        XCTAssertEqual(kernel.watches.map(\.afterSnapshots), [1], "watched before the snapshot that looks them up")

        // Releasing a key narrows the set.
        run.post(.monitorTargets(add: [], remove: [second]))
        let deadline = Date().addingTimeInterval(5)
        while kernel.watches.count < 2 && Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        XCTAssertEqual(kernel.watches.map(\.addresses), [[first.address, second.address], [first.address]])
    }

    func testADeferredStartReadsWhatTheFirstAnswerNeedsThenTheRestFirstThing() throws {
        // IPv4's lookup decides alone; IPv6 found no route, which its defaults may explain.
        let answers: [AddressFamily: RouteLookup] = Self.throughRoute.merging([.ipv6: .failure(.noRoute)]) { $1 }
        let kernel = ScriptedKernel(tracked: [Self.route], answers: [answers], pending: [.ipv4, .ipv6])
        let run = try EngineRun(kernel: kernel, directory: temporaryDirectory("reachd-engine"))
        defer { run.stop() }

        XCTAssertEqual(run.firstSnapshot.pendingRouteFamilies, [.ipv4], "the first answer waited for IPv6's routes only")
        let published = run.waitForPublications(1)
        XCTAssertEqual(kernel.reads, ["ipv6", "finish"])
        XCTAssertEqual(published.first?.pendingRouteFamilies, [], "the complete snapshot is published first thing")
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(run.published.count, 1, "and the loop then waits for events")
    }

    func testANewTargetIsPublishedWhenTheSameWakeUpDrainsABatchThatChangedNothing() throws {
        let kernel = ScriptedKernel(tracked: [Self.route], answers: [Self.throughRoute])
        let target = TargetKey(address: IPAddress("192.0.2.80")!, uid: 0)
        // Both ready before the loop first polls: one wake-up takes the command and drains
        // a batch that changed nothing (an RA repeating itself).
        let run = try EngineRun(kernel: kernel, directory: temporaryDirectory("reachd-engine")) { mailbox in
            mailbox.post(.monitorTargets(add: [target], remove: []))
            kernel.deliver(DrainOutcome(events: 1), tracked: [Self.route], answers: [Self.throughRoute])
        }
        defer { run.stop() }

        let published = run.waitForPublications(1)
        XCTAssertEqual(published.last.map { Set($0.targets.keys) }, [target], "the new target's answer is published")
        XCTAssertEqual(kernel.snapshots, 2, "the first snapshot and this wake-up's")
    }

    func testABatchWithoutRemovalsIsOneEvaluationAndNoTimer() throws {
        let kernel = ScriptedKernel(tracked: [Self.route], answers: [Self.throughRoute])
        let run = try EngineRun(kernel: kernel, directory: temporaryDirectory("reachd-engine"))
        defer { run.stop() }

        kernel.deliver(DrainOutcome(changed: true), tracked: [Self.route], answers: [Self.throughRoute])
        _ = run.waitForPublications(1)
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(run.published.count, 1)
        XCTAssertEqual(kernel.snapshots, 2, "the first snapshot and the batch's")
    }
}

/// A kernel view whose events and lookup answers the test scripts. Its "event socket" is
/// an eventfd the test rings.
private final class ScriptedKernel: KernelView, Sendable {
    private struct Script {
        var queued: [DrainOutcome] = []
        var tracked: [DefaultRoute]
        /// Lookup answers for the next snapshots, in order; the last one repeats.
        var answers: [[AddressFamily: RouteLookup]]
        var snapshots = 0
        /// Each `watch` call: the set, and how many snapshots had been taken by then.
        var watches: [(addresses: Set<IPAddress>, afterSnapshots: Int)] = []
        /// Families whose routes a deferred start has not read.
        var pending: Set<AddressFamily> = []
        /// Each `readRoutes` call's families, then "finish" for each `finishStart`.
        var reads: [String] = []
    }

    private let script: Mutex<Script>
    private let doorbell: EventDescriptor

    init(tracked: [DefaultRoute], answers: [[AddressFamily: RouteLookup]], pending: Set<AddressFamily> = []) {
        script = Mutex(Script(tracked: tracked, answers: answers, pending: pending))
        doorbell = try! EventDescriptor()
    }

    /// Queues a batch: what `drain()` will report, the tracked routes after it and the
    /// answers of the snapshots that follow.
    func deliver(_ outcome: DrainOutcome, tracked: [DefaultRoute], answers: [[AddressFamily: RouteLookup]]) {
        script.withLock {
            $0.queued.append(outcome)
            $0.tracked = tracked
            $0.answers = answers
        }
        doorbell.ring()
    }

    /// Snapshots taken so far.
    var snapshots: Int { script.withLock { $0.snapshots } }

    var eventDescriptor: FileDescriptor { doorbell.descriptor }
    var resyncCount: Int { 0 }

    func drain() throws(NetlinkError) -> DrainOutcome {
        doorbell.reset()
        return script.withLock { script in
            defer { script.queued = [] }
            return script.queued.reduce(into: DrainOutcome()) { total, outcome in
                total.changed = total.changed || outcome.changed
                total.removedDefaultRoutes.formUnion(outcome.removedDefaultRoutes)
            }
        }
    }

    func resynchronize() throws(NetlinkError) -> Set<DefaultRoute> { [] }

    func readRoutes(of families: Set<AddressFamily>) throws(NetlinkError) {
        script.withLock {
            $0.reads.append(families.map(\.rawValue).sorted().joined(separator: "+"))
            $0.pending.subtract(families)
        }
    }

    func finishStart() throws(NetlinkError) -> DrainOutcome {
        script.withLock {
            $0.reads.append("finish")
            $0.pending = []
        }
        return DrainOutcome(changed: true)
    }

    /// What was read of the routes a deferred start left pending, in order.
    var reads: [String] { script.withLock { $0.reads } }

    func watch(_ addresses: Set<IPAddress>) throws(NetlinkError) {
        script.withLock { $0.watches.append((addresses, $0.snapshots)) }
    }

    /// The `watch` calls so far.
    var watches: [(addresses: Set<IPAddress>, afterSnapshots: Int)] { script.withLock { $0.watches } }

    func lookup(_ destination: IPAddress, uid: UInt32?) -> RouteLookup {
        .failure(.noRoute)
    }

    func snapshot() -> NetworkSnapshot {
        script.withLock { script in
            script.snapshots += 1
            let answer = script.answers.count > 1 ? script.answers.removeFirst() : script.answers.first ?? [:]
            var snapshot = NetworkSnapshot(defaultRoutes: script.tracked, lookups: answer)
            snapshot.pendingRouteFamilies = script.pending
            return snapshot
        }
    }
}

/// An engine running its loop on a thread of its own, recording what it publishes.
final class EngineRun: Sendable {
    private struct Record {
        var snapshots: [NetworkSnapshot] = []
        var times: [ContinuousClock.Instant] = []
        var linkQuality: [[Int32: LinkQualityEstimate]] = []
    }

    /// What the engine's thread writes and the test reads.
    private final class Recorder: Sendable {
        let state = Mutex(Record())
    }

    /// Only the engine's thread touches the engine; the test keeps its mailbox.
    private final class Handoff: @unchecked Sendable {
        let engine: ReachabilityEngine
        init(_ engine: ReachabilityEngine) { self.engine = engine }
    }

    private let record = Recorder()
    private let mailbox: EngineMailbox
    private let finished = DispatchSemaphore(value: 0)
    /// The engine's snapshot before its loop ran.
    let firstSnapshot: NetworkSnapshot

    /// - Parameter beforeTheLoop: runs once the engine exists, before its loop first polls,
    ///   so everything it queues is seen by one wake-up.
    init(
        kernel: some KernelView & Sendable, directory: String, stall: ReachdConfiguration.Stall = ReachdConfiguration.Stall(),
        beforeTheLoop: (EngineMailbox) -> Void = { _ in }
    ) throws {
        let logger = Logger(label: "engine-test")
        let resolver = ResolverWatcher(
            resolvConfPath: directory + "/resolv.conf", resolvedUpstreamPath: directory + "/upstream.conf", logger: logger
        )
        // A signal nobody sends: the engine polls its descriptor like reachd's.
        let signals = try SignalDescriptor([SIGUSR2])
        let handoff = Handoff(try ReachabilityEngine(kernel: kernel, resolver: resolver, signals: signals, logger: logger, stall: stall))
        mailbox = handoff.engine.mailbox
        firstSnapshot = handoff.engine.snapshot
        let record = self.record
        let finished = self.finished
        beforeTheLoop(mailbox)
        Thread.detachNewThread {
            let deliver = { (event: EngineEvent) in
                switch event {
                case let .snapshot(snapshot):
                    record.state.withLock {
                        $0.snapshots.append(snapshot)
                        $0.times.append(.now)
                    }
                case let .linkQuality(estimates):
                    record.state.withLock { $0.linkQuality.append(estimates) }
                default:
                    break
                }
            }
            _ = try? handoff.engine.run(deliver: deliver, watchdogInterval: nil)
            finished.signal()
        }
    }

    var published: [NetworkSnapshot] { record.state.withLock { $0.snapshots } }
    var publicationTimes: [ContinuousClock.Instant] { record.state.withLock { $0.times } }
    /// Every link-quality hand-over so far.
    var linkQuality: [[Int32: LinkQualityEstimate]] { record.state.withLock { $0.linkQuality } }

    /// Waits (up to 5 s) until `count` snapshots were published; returns them all.
    func waitForPublications(_ count: Int, file: StaticString = #filePath, line: UInt = #line) -> [NetworkSnapshot] {
        let deadline = Date().addingTimeInterval(5)
        while published.count < count && Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        let snapshots = published
        if snapshots.count < count {
            XCTFail("\(snapshots.count) of \(count) publications: \(snapshots.map(\.lookups))", file: file, line: line)
        }
        return snapshots
    }

    /// Posts a command, as the event loop does.
    func post(_ command: EngineCommand) {
        mailbox.post(command)
    }

    /// Ends the loop (as a fatal command would) and waits for the thread.
    func stop() {
        mailbox.post(.fail("test finished"))
        finished.wait()
    }
}
