import Dispatch
@testable import ReachClient
import Synchronization
import TestSupport
import XCTest

/// reachd as a test plays it: each connection is a stream the test feeds, or refuses.
final class FakeReachd<Reply: Coalescible & Decodable & Sendable>: Sendable {
    private struct State {
        var connections: [SubscriptionStream<Reply>] = []
        var filters: [PathFilter] = []
        var closed = 0
        var refusing = false
        var greeting: Reply?
    }

    private let state = Mutex(State())
    static var error: ReachClientError { .daemonNotRunning(socketPath: "/fake", connectionRefused: true) }

    /// While set, connections fail at once like a stopped reachd's.
    var refusing: Bool {
        get { state.withLock { $0.refusing } }
        set { state.withLock { $0.refusing = newValue } }
    }

    /// Sent on every new connection at once, like reachd's first reply.
    var greeting: Reply? {
        get { state.withLock { $0.greeting } }
        set { state.withLock { $0.greeting = newValue } }
    }

    /// Connections opened so far.
    var opened: Int { state.withLock { $0.connections.count } }
    /// Connections the client closed.
    var closed: Int { state.withLock { $0.closed } }
    /// The filters subscriptions asked for.
    var filters: [PathFilter] { state.withLock { $0.filters } }

    func open(filter: PathFilter = .none) -> Updates<Reply> {
        let stream = SubscriptionStream<Reply>(socketPath: "/fake")
        stream.onStop { [self] in state.withLock { $0.closed += 1 } }
        let (refusing, greeting) = state.withLock { state in
            state.connections.append(stream)
            state.filters.append(filter)
            return (state.refusing, state.greeting)
        }
        if refusing {
            stream.finish(Self.error)
        } else if let greeting {
            stream.offer(greeting)
        }
        return Updates(stream: stream)
    }

    /// Connection `index` (0-based), once opened.
    func connection(_ index: Int, file: StaticString = #filePath, line: UInt = #line) async -> SubscriptionStream<Reply>? {
        for _ in 0..<500 {
            if let stream = state.withLock({ $0.connections.indices.contains(index) ? $0.connections[index] : nil }) { return stream }
            try? await Task.sleep(for: .milliseconds(5))
        }
        XCTFail("connection \(index) never opened (\(opened) opened)", file: file, line: line)
        return nil
    }
}

/// Collects what handlers receive, from any thread.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])

    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }

    /// Waits until `count` values arrived; fails the test after 5 s.
    @discardableResult
    func waitFor(_ count: Int, file: StaticString = #filePath, line: UInt = #line) async -> [Value] {
        for _ in 0..<1000 {
            let all = self.all
            if all.count >= count { return all }
            try? await Task.sleep(for: .milliseconds(5))
        }
        XCTFail("\(all.count) values, expected \(count): \(all)", file: file, line: line)
        return all
    }
}

private let fastPolicy = ReconnectPolicy(initialDelay: .milliseconds(1), maximumDelay: .milliseconds(5))

private func reply(_ sequence: Int, _ instance: String, wifiCarrier: Bool = true, gateway: String = "10.0.0.1") -> StatusReply {
    StatusReply(sequence: sequence, instance: instance, path: makeState(ethGateway: gateway, wifiCarrier: wifiCarrier).path, changes: [])
}

/// Every state of a PathMonitor, against a fake transport (no daemon, no kernel).
final class PathMonitorTests: XCTestCase {
    private enum Seen: Sendable, Equatable {
        case path(Path)
        case unavailable(ReachClientError)
    }

    private func makeMonitor(_ fake: FakeReachd<StatusReply>, filter: PathFilter = .none) -> (PathMonitor, Recorder<Seen>) {
        let monitor = PathMonitor(filter: filter, policy: fastPolicy, open: { fake.open(filter: $0) })
        let seen = Recorder<Seen>()
        monitor.pathUpdateHandler = { seen.append(.path($0)) }
        monitor.unavailableHandler = { seen.append(.unavailable($0)) }
        return (monitor, seen)
    }

    func testNotStarted() async throws {
        let fake = FakeReachd<StatusReply>()
        let (monitor, seen) = makeMonitor(fake)
        XCTAssertNil(monitor.currentPath)
        XCTAssertEqual(monitor.availability, .notStarted)
        XCTAssertNil(monitor.queue)
        monitor.cancel()
        XCTAssertEqual(monitor.availability, .notStarted, "cancelling a monitor that never started changes nothing")
        try await Task.sleep(for: .milliseconds(50))
        XCTAssertEqual(fake.opened, 0, "nothing connects before start")
        XCTAssertTrue(seen.all.isEmpty)
    }

    func testFirstPathThenAChange() async throws {
        let fake = FakeReachd<StatusReply>()
        fake.greeting = reply(1, "a")
        let (monitor, seen) = makeMonitor(fake)
        let queue = DispatchQueue(label: "test")
        monitor.start(queue: queue)
        XCTAssertTrue(monitor.queue === queue)
        await seen.waitFor(1)
        XCTAssertEqual(seen.all, [.path(reply(1, "a").path)])
        XCTAssertEqual(monitor.currentPath, reply(1, "a").path)
        XCTAssertEqual(monitor.availability, .available(instance: "a"))

        await fake.connection(0)?.offer(reply(2, "a", wifiCarrier: false))
        await seen.waitFor(2)
        XCTAssertEqual(seen.all.last, .path(reply(2, "a", wifiCarrier: false).path))
        XCTAssertEqual(monitor.currentPath?.availableInterfaces, ["eth0"])
        monitor.start(queue: queue)
        XCTAssertEqual(fake.opened, 1, "start while running does not connect again")
        monitor.cancel()
    }

    /// reachd goes away (the quiet retry fails too), the monitor says so and retries; it
    /// comes back as a new run with another path, and the monitor delivers that.
    func testDaemonGoneAndBackWithANewInstance() async throws {
        let fake = FakeReachd<StatusReply>()
        fake.greeting = reply(1, "a")
        let (monitor, seen) = makeMonitor(fake)
        // A consumer of updates() that keeps up sees every step.
        let kinds = Task {
            var kinds: [String] = []
            for await update in monitor.updates() {
                switch update {
                case let .path(_, kind): kinds.append("\(kind)")
                case .unavailable: kinds.append("unavailable")
                }
                if kinds.last == "restarted" { break }
            }
            return kinds
        }
        try await Task.sleep(for: .milliseconds(20))
        monitor.start(queue: DispatchQueue(label: "test"))
        await seen.waitFor(1)

        fake.refusing = true
        await fake.connection(0)?.finish(.connectionClosed(socketPath: "/fake"))
        await seen.waitFor(2)
        XCTAssertEqual(seen.all.last, .unavailable(FakeReachd<StatusReply>.error), "the error of the failed reconnect")
        XCTAssertNil(monitor.currentPath, "no made-up path while reachd is unreachable")
        XCTAssertEqual(monitor.availability, .unavailable(FakeReachd<StatusReply>.error))
        let retries = fake.opened
        try await Task.sleep(for: .milliseconds(50))
        XCTAssertGreaterThan(fake.opened, retries, "it keeps retrying")
        XCTAssertEqual(seen.all.count, 2, "an outage is told once")

        fake.greeting = reply(1, "b", gateway: "10.0.0.9")
        fake.refusing = false
        await seen.waitFor(3)
        XCTAssertEqual(seen.all.last, .path(reply(1, "b", gateway: "10.0.0.9").path))
        XCTAssertEqual(monitor.availability, .available(instance: "b"))

        let seenKinds = await kinds.value
        XCTAssertEqual(seenKinds, ["first", "unavailable", "restarted"])
        monitor.cancel()
    }

    /// reachd not running when the app starts: told at once, then the first path once it runs.
    func testNotRunningAtStart() async throws {
        let fake = FakeReachd<StatusReply>()
        fake.refusing = true
        let (monitor, seen) = makeMonitor(fake)
        monitor.start(queue: DispatchQueue(label: "test"))
        await seen.waitFor(1)
        XCTAssertEqual(seen.all, [.unavailable(FakeReachd<StatusReply>.error)])
        fake.greeting = reply(1, "a")
        fake.refusing = false
        await seen.waitFor(2)
        XCTAssertEqual(seen.all.last, .path(reply(1, "a").path))
        monitor.cancel()
    }

    func testCancelThenStartAgain() async throws {
        let fake = FakeReachd<StatusReply>()
        fake.greeting = reply(1, "a")
        let (monitor, seen) = makeMonitor(fake)
        let queue = DispatchQueue(label: "test")
        let updates = monitor.updates()
        monitor.start(queue: queue)
        await seen.waitFor(1)
        queue.sync { monitor.cancel() }
        XCTAssertEqual(monitor.availability, .cancelled)
        XCTAssertNil(monitor.currentPath)
        for _ in 0..<100 where fake.closed < 1 { try await Task.sleep(for: .milliseconds(5)) }
        XCTAssertEqual(fake.closed, 1, "cancel closes the connection")
        var ended = 0
        for await _ in updates { ended += 1 }
        XCTAssertEqual(ended, 1, "cancel ends updates() after what it had")

        // A late reply of the cancelled run reaches nobody.
        await fake.connection(0)?.offer(reply(9, "a"))
        try await Task.sleep(for: .milliseconds(30))
        XCTAssertEqual(seen.all.count, 1)

        fake.greeting = reply(2, "a", wifiCarrier: false)
        monitor.start(queue: queue)
        await seen.waitFor(2)
        XCTAssertEqual(seen.all.last, .path(reply(2, "a", wifiCarrier: false).path))
        XCTAssertEqual(fake.opened, 2)
        monitor.cancel()
    }

    /// The interface-type constraints go to reachd, which computes the path over the
    /// allowed interfaces only.
    func testFilters() async throws {
        let fake = FakeReachd<StatusReply>()
        fake.greeting = reply(1, "a")
        let required = PathMonitor(filter: PathFilter(requiredInterfaceType: .wifi), policy: fastPolicy, open: { fake.open(filter: $0) })
        XCTAssertEqual(required.requiredInterfaceType, .wifi)
        required.start(queue: DispatchQueue(label: "test"))
        let prohibited = PathMonitor(filter: PathFilter(prohibitedInterfaceTypes: [.wifi, .cellular]), policy: fastPolicy, open: { fake.open(filter: $0) })
        XCTAssertEqual(prohibited.prohibitedInterfaceTypes, [.wifi, .cellular])
        prohibited.start(queue: DispatchQueue(label: "test"))
        _ = await fake.connection(1)
        XCTAssertEqual(Set(fake.filters), [PathFilter(requiredInterfaceType: .wifi), PathFilter(prohibitedInterfaceTypes: [.wifi, .cellular])])
        required.cancel()
        prohibited.cancel()
        XCTAssertEqual(PathMonitor(requiredInterfaceType: .cellular).requiredInterfaceType, .cellular)
        XCTAssertEqual(PathMonitor(prohibitedInterfaceTypes: [.loopback]).prohibitedInterfaceTypes, [.loopback])
    }

    /// NWPathMonitor's pitfall: drop the reference and the handler never fires. A started
    /// PathMonitor keeps itself alive until cancelled, then goes.
    func testAStartedMonitorNeedsNoReference() async throws {
        let fake = FakeReachd<StatusReply>()
        fake.greeting = reply(1, "a")
        let seen = Recorder<Path>()
        weak var weakMonitor: PathMonitor?
        do {
            let monitor = PathMonitor(filter: .none, policy: fastPolicy, open: { fake.open(filter: $0) })
            monitor.pathUpdateHandler = { seen.append($0) }
            monitor.start(queue: DispatchQueue(label: "test"))
            weakMonitor = monitor
        }
        await seen.waitFor(1)
        await fake.connection(0)?.offer(reply(2, "a", wifiCarrier: false))
        await seen.waitFor(2)
        XCTAssertNotNil(weakMonitor)
        weakMonitor?.cancel()
        for _ in 0..<200 where weakMonitor != nil { try await Task.sleep(for: .milliseconds(5)) }
        XCTAssertNil(weakMonitor, "a cancelled monitor nobody holds is freed")
    }

    /// `for await path in monitor`, as with NWPathMonitor: starts it, current path first.
    func testIteratingTheMonitor() async throws {
        let fake = FakeReachd<StatusReply>()
        fake.greeting = reply(1, "a")
        let monitor = PathMonitor(filter: .none, policy: fastPolicy, open: { fake.open(filter: $0) })
        var paths: [Path] = []
        for await path in monitor {
            paths.append(path)
            if paths.count == 1 { await fake.connection(0)?.offer(reply(2, "a", wifiCarrier: false)) }
            if paths.count == 2 { monitor.cancel() }
        }
        XCTAssertEqual(paths, [reply(1, "a").path, reply(2, "a", wifiCarrier: false).path])
    }
}

/// ReachabilityManager against a fake transport.
final class ReachabilityManagerTests: XCTestCase {
    private func makeManager(_ fake: FakeReachd<TargetReply>, timeout: Duration = .seconds(5)) -> (ReachabilityManager, Recorder<ReachabilityChange>) {
        let manager = ReachabilityManager(target: .host("example.test"), timeout: timeout, callbackQueue: nil, policy: fastPolicy) { policy, onEvent in
            ReconnectingSubscription(policy: policy, open: { fake.open() }, instance: { _ in nil }) { onEvent($0.map { ReachabilityAnswer($0.path) }) }
        }
        let changes = Recorder<ReachabilityChange>()
        manager.setReachabilityStatusChangeBlock { changes.append($0) }
        return (manager, changes)
    }

    private static let reachable = TargetReply(target: "example.test", path: TargetPath(
        status: .satisfied, reachability: .reachableViaWiFi, flags: [.reachable], primaryInterface: "wlan0", primaryInterfaceType: .wifi))
    private static let unresolvable = TargetReply(target: "example.test", path: TargetPath(
        status: .unsatisfied, unsatisfiedReason: .nameNotFound, reachability: .notReachable))

    /// The status is right when the synchronous startMonitoring() returns, and the block
    /// hears the first answer with its cause.
    func testRightWhenStartMonitoringReturns() async throws {
        let cases: [(TargetReply, ReachabilityStatus, UnsatisfiedReason?)] = [
            (Self.reachable, .reachableViaWiFi, nil), (Self.unresolvable, .notReachable, .nameNotFound),
        ]
        for (greeting, status, reason) in cases {
            let fake = FakeReachd<TargetReply>()
            fake.greeting = greeting
            let (manager, changes) = makeManager(fake)
            XCTAssertEqual(manager.networkReachabilityStatus, .unknown)
            await Task.detached { manager.startMonitoring() }.value
            XCTAssertEqual(manager.networkReachabilityStatus, status)
            XCTAssertEqual(manager.isReachable, status != .notReachable)
            XCTAssertEqual(manager.isReachableViaWiFi, status == .reachableViaWiFi)
            XCTAssertFalse(manager.isReachableViaWWAN)
            XCTAssertFalse(manager.isReachableViaWired)
            XCTAssertEqual(manager.lastChange?.unsatisfiedReason, reason)
            let told = await changes.waitFor(1)
            XCTAssertEqual(told.first?.cause, .firstAnswer)
            XCTAssertEqual(told.first?.status, status)
            manager.stopMonitoring()
            XCTAssertEqual(manager.networkReachabilityStatus, .unknown)
        }
    }

    /// reachd not running: startMonitoring() returns at once with `unknown` and says why;
    /// the manager retries and reports reachd's answer once it runs.
    func testDaemonNotRunning() async throws {
        let fake = FakeReachd<TargetReply>()
        fake.refusing = true
        let (manager, changes) = makeManager(fake)
        let started = ContinuousClock.now
        await manager.startMonitoring()
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(1))
        XCTAssertEqual(manager.networkReachabilityStatus, .unknown)
        XCTAssertEqual(manager.lastChange?.cause, .daemonUnavailable(FakeReachd<TargetReply>.error))
        XCTAssertEqual(manager.localizedNetworkReachabilityStatusString, "Unknown")

        fake.greeting = Self.reachable
        fake.refusing = false
        let told = await changes.waitFor(2)
        XCTAssertEqual(told.map(\.status), [.unknown, .reachableViaWiFi])
        XCTAssertEqual(told.last?.cause, .firstAnswer, "the first answer of this run")
        XCTAssertEqual(manager.localizedNetworkReachabilityStatusString, "Reachable via WiFi")
        manager.stopMonitoring()
    }

    /// Changes are told with what changed; the same answer again is not told.
    func testChangesCarryTheirReason() async throws {
        let fake = FakeReachd<TargetReply>()
        fake.greeting = Self.reachable
        let (manager, changes) = makeManager(fake)
        await manager.startMonitoring()
        let connection = await fake.connection(0)
        connection?.offer(Self.reachable)
        connection?.offer(Self.unresolvable)
        let told = await changes.waitFor(2)
        XCTAssertEqual(told.count, 2, "the repeated answer is not told")
        XCTAssertEqual(told.last?.cause, .networkChanged([.status, .reachability, .primaryInterface, .flags]))
        XCTAssertEqual(told.last?.previousStatus, .reachableViaWiFi)
        XCTAssertEqual(told.last?.unsatisfiedReason, .nameNotFound)
        manager.stopMonitoring()
        XCTAssertEqual(changes.all.count, 2, "stopping is not told")
    }

    /// A reachd that accepts but never answers: startMonitoring() is bounded.
    func testBoundedByTheTimeout() async throws {
        let fake = FakeReachd<TargetReply>()
        let (manager, _) = makeManager(fake, timeout: .milliseconds(100))
        let started = ContinuousClock.now
        await Task.detached { manager.startMonitoring() }.value
        let waited = ContinuousClock.now - started
        XCTAssertGreaterThanOrEqual(waited, .milliseconds(1000), "timeout + 1 s of grace")
        XCTAssertLessThan(waited, .seconds(3))
        XCTAssertEqual(manager.networkReachabilityStatus, .unknown)
        manager.stopMonitoring()
    }

    func testInitialisers() {
        XCTAssertNil(ReachabilityManager(domain: "not a host"))
        XCTAssertEqual(ReachabilityManager(domain: "Example.COM")?.target, .host("example.com"))
        XCTAssertEqual(ReachabilityManager(domain: "192.0.2.1")?.target, .address(IPAddress("192.0.2.1")!))
        XCTAssertEqual(ReachabilityManager(address: IPAddress("2001:db8::1")!).target, .address(IPAddress("2001:db8::1")!))
        XCTAssertNil(ReachabilityManager.shared.target)
        XCTAssertEqual(ReachabilityManager.shared.networkReachabilityStatus, .unknown)
    }
}
