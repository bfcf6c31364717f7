import Dispatch
import Foundation
import ReachClient
import Synchronization
import TestSupport
import XCTest

/// PathMonitor, ReachabilityManager and the two example apps against the real daemon in a
/// namespace: first answers, changes, a daemon restart.
final class ClientAPIIntegrationTests: DaemonTestCase {
    /// A host with one name that routes via the gateway; with `hosts: files` only, any other
    /// name is not found at once (no DNS query leaves).
    private func configureNames() throws {
        try topology.hostFiles(hosts: "127.0.0.1 localhost\n198.51.100.7 far.test\n", nsswitch: "hosts: files\n")
    }

    /// Runs a blocking call on a thread of its own: `startMonitoring()` blocks, and the
    /// cooperative pool it would otherwise block is small.
    private func onThread(_ body: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                body()
                continuation.resume()
            }
        }
    }

    func testPathMonitorFirstPathChangeAndRestart() async throws {
        try topology.configureIPv4()
        let (daemon, _) = try startDaemon()
        let monitor = PathMonitor(client: ReachabilityClient(socketPath: daemon.socketPath))
        let handled = Mutex<[Path]>([])
        monitor.pathUpdateHandler = { path in handled.withLock { $0.append(path) } }
        var updates = monitor.updates().makeAsyncIterator()

        let started = ContinuousClock.now
        monitor.start(queue: DispatchQueue(label: "test"))
        let first = await updates.next()
        let elapsed = ContinuousClock.now - started
        print("PathMonitor: first path \(elapsed) after start")
        // The first event is the first path (no placeholder, no failed attempt before it);
        // the bound only rules out waiting for a change or a timer, with room for a loaded CI host.
        XCTAssertLessThan(elapsed, .milliseconds(500), "the first path right after start")
        guard case let .path(path, .first)? = first else { return XCTFail("\(String(describing: first))") }
        XCTAssertEqual(path.status, .satisfied)
        XCTAssertEqual(path.primaryInterface, "eth0")
        XCTAssertTrue(path.usesInterfaceType(.wiredEthernet))
        XCTAssertEqual(path.gateways, ["10.77.0.1"])
        guard case let .available(firstInstance) = monitor.availability else { return XCTFail("\(monitor.availability)") }

        try topology.host.ip("route", "del", "default")
        let change = await updates.next()
        guard case let .path(unsatisfied, .update)? = change else { return XCTFail("\(String(describing: change))") }
        XCTAssertEqual(unsatisfied.status, .unsatisfied)
        XCTAssertEqual(unsatisfied.unsatisfiedReason, .noRoute)
        XCTAssertEqual(monitor.currentPath, unsatisfied)

        // reachd stops: the monitor says so, and has no path.
        daemon.terminate()
        let outage = await updates.next()
        guard case let .unavailable(error)? = outage else { return XCTFail("\(String(describing: outage))") }
        guard case .daemonNotRunning = error else { return XCTFail("\(error)") }
        XCTAssertNil(monitor.currentPath)

        // The network changes while reachd is down; the new run's path is delivered.
        try topology.host.ip("route", "add", "default", "via", "10.77.0.1", "dev", "eth0")
        let second = try DaemonProcess.started(in: topology.host, socketPath: daemon.socketPath)
        self.daemon = second
        let back = await updates.next()
        guard case let .path(restored, .restarted)? = back else { return XCTFail("\(String(describing: back))") }
        XCTAssertEqual(restored.status, .satisfied)
        guard case let .available(secondInstance) = monitor.availability else { return XCTFail("\(monitor.availability)") }
        XCTAssertNotEqual(secondInstance, firstInstance)

        // The handler saw the same paths, in order, on its queue.
        for _ in 0..<100 where handled.withLock({ $0.count }) < 3 { try await Task.sleep(for: .milliseconds(10)) }
        XCTAssertEqual(handled.withLock { $0.map(\.status) }, [.satisfied, .unsatisfied, .satisfied])
        monitor.cancel()
        withExtendedLifetime(daemon) {}
    }

    /// `startMonitoring()` returns with the status right: a reachable name, an unresolvable
    /// one (with its reason), an address; the system manager then follows a change.
    func testReachabilityManagerIsRightWhenStartMonitoringReturns() async throws {
        try topology.configureIPv4()
        try configureNames()
        let (daemon, _) = try startDaemon()
        let client = ReachabilityClient(socketPath: daemon.socketPath)
        let cases: [(String, ReachabilityStatus, UnsatisfiedReason?)] = [
            ("far.test", .reachableViaWired, nil), ("no-such-host.test", .notReachable, .nameNotFound), ("198.51.100.7", .reachableViaWired, nil),
        ]
        for (host, status, reason) in cases {
            let manager = try XCTUnwrap(ReachabilityManager(domain: host, client: client))
            await onThread { manager.startMonitoring() }
            XCTAssertEqual(manager.networkReachabilityStatus, status, host)
            XCTAssertEqual(manager.lastChange?.unsatisfiedReason, reason, host)
            XCTAssertEqual(manager.lastChange?.cause, .firstAnswer, host)
            manager.stopMonitoring()
        }

        let system = ReachabilityManager(client: client)
        let told = Mutex<[ReachabilityChange]>([])
        system.setReachabilityStatusChangeBlock { change in told.withLock { $0.append(change) } }
        await system.startMonitoring()
        XCTAssertTrue(system.isReachableViaWired)
        try topology.host.ip("link", "set", "eth0", "down")
        for _ in 0..<300 where told.withLock({ $0.count }) < 2 { try await Task.sleep(for: .milliseconds(10)) }
        let changes = told.withLock { $0 }
        XCTAssertEqual(changes.map(\.status), [.reachableViaWired, .notReachable])
        guard case let .networkChanged(what)? = changes.last?.cause else { return XCTFail("\(changes)") }
        XCTAssertTrue(what.contains(.reachability), "\(what)")
        XCTAssertNotNil(changes.last?.unsatisfiedReason)
        XCTAssertFalse(system.isReachable)
        system.stopMonitoring()
    }

    /// The two examples, built with the package, against a running reachd.
    func testExamples() throws {
        try topology.configureIPv4()
        try configureNames()
        let (daemon, _) = try startDaemon()
        let environment = ["REACHD_SOCKET": daemon.socketPath]

        let once = try Command.run([Paths.product("host-reachability"), "far.test", "no-such-host.test", "198.51.100.7"], environment: environment)
        print("host-reachability far.test no-such-host.test 198.51.100.7:\n\(once.stdout)")
        XCTAssertEqual(once.status, 0, once.stderr)
        XCTAssertEqual(once.stdout, "far.test: Reachable via Wired\nno-such-host.test: Not Reachable (nameNotFound)\n198.51.100.7: Reachable via Wired\n")
        let usage = try Command.run([Paths.product("host-reachability"), "not a host"], environment: environment)
        XCTAssertEqual(usage.status, 64)

        let watchOut = Pipe(), pathOut = Pipe()
        let watcher = try Command.launch([Paths.product("host-reachability"), "--watch", "far.test"], environment: environment, stdout: watchOut)
        let pathWatch = try Command.launch([Paths.product("path-watch"), "--count", "2"], environment: environment, stdout: pathOut)
        defer { if watcher.isRunning { watcher.terminate() } }
        let watchLines = LineReader(watchOut), pathLines = LineReader(pathOut)
        var printed: [String] = []
        printed.append(watchLines.next() ?? "(nothing)")
        printed.append(pathLines.next() ?? "(nothing)")
        try topology.host.ip("route", "del", "default")
        printed.append(watchLines.next() ?? "(nothing)")
        printed.append(pathLines.next() ?? "(nothing)")
        print("host-reachability --watch far.test, path-watch --count 2; then the default route goes:\n" + printed.joined(separator: "\n"))
        XCTAssertEqual(printed, [
            "far.test: Reachable via Wired — reachableViaWired via eth0 (first answer)",
            "satisfied via eth0 (wiredEthernet), gateways [10.77.0.1], ipv4, dns, connectivity unknown",
            "far.test: Not Reachable — notReachable: noRoute (network changed: status, reachability, primaryInterface, flags)",
            "unsatisfied: noRoute",
        ])
        pathWatch.waitUntilExit()
        XCTAssertEqual(pathWatch.terminationStatus, 0, "path-watch exits after --count paths")
    }
}
