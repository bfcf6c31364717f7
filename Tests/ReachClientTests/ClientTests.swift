import Foundation
import LinuxSystem
import NIOCore
import ReachabilityCore
@testable import ReachClient
import ReachProtocol
import SystemPackage
import TestSupport
import XCTest


final class ClientTests: XCTestCase {
    func testStatusInterfacesInfo() async throws {
        let fixture = ServerFixture()
        try fixture.server.start()
        let client = ReachabilityClient(socketPath: fixture.socketPath)
        let status = try await client.status()
        XCTAssertEqual(status.path, makeState().path)
        let names = try await client.interfaces().map(\.name)
        XCTAssertEqual(names, ["lo", "eth0", "wlan0"])
        let info = try await client.info()
        XCTAssertEqual(info, ServiceInfo.reachd)
        await fixture.stop()
    }

    /// A reply that replaces one the consumer never took inherits its changes.
    func testCoalescedRepliesCarryEveryChange() {
        func reply(_ sequence: Int, _ changes: [PathChange]?) -> StatusReply {
            StatusReply(sequence: sequence, instance: "i", path: makeState().path, changes: changes)
        }
        let cases: [(name: String, replies: [StatusReply], expected: StatusReply)] = [
            ("one", [reply(2, [.gateways])], reply(2, [.gateways])),
            ("newer inherits the untaken ones' changes, canonical order",
             [reply(2, [.gateways]), reply(3, [.dns]), reply(4, [.primaryInterface, .gateways])],
             reply(4, [.primaryInterface, .gateways, .dns])),
            ("first reply (empty changes) then a change", [reply(1, []), reply(2, [.status])], reply(2, [.status])),
            ("GetStatus-shaped replies stay without changes", [reply(1, nil), reply(2, nil)], reply(2, nil)),
        ]
        for test in cases {
            var machine = LatestValueCoalescer<StatusReply>(consumerReady: false)
            for value in test.replies { _ = machine.offer(value) }
            guard case let .deliver(delivered) = machine.consumerReady() else { return XCTFail(test.name) }
            XCTAssertEqual(delivered, test.expected, test.name)
        }
    }

    func testSlowConsumerStillSeesEveryChange() async throws {
        let fixture = ServerFixture()
        try fixture.server.start()
        let client = ReachabilityClient(socketPath: fixture.socketPath)
        var updates = client.subscribe().makeAsyncIterator()
        var previous = try await updates.next()!
        // The consumer stalls while 3000 changes happen; wlan0 loses carrier near the end.
        let count = 3000
        for index in 1...count {
            fixture.server.deliver(.snapshot(makeSnapshot(ethGateway: "10.0.\(index / 250).\(index % 250 + 1)", wifiCarrier: index < count - 10)))
        }
        try await Task.sleep(for: .milliseconds(300))
        var received = 0
        while previous.sequence < count + 1, let reply = try await updates.next() {
            received += 1
            let differences = PathChange.between(previous.path, addresses: [], and: reply.path, addresses: [])
            XCTAssertTrue(Set(differences).isSubset(of: Set(reply.changes ?? [])),
                          "#\(reply.sequence) after #\(previous.sequence): \(reply.changes ?? []) misses some of \(differences)")
            previous = reply
        }
        XCTAssertLessThan(received, count, "the stalled consumer got the newest state, not a backlog")
        XCTAssertEqual(previous.path.availableInterfaces, ["eth0"])
        await fixture.stop()
    }

    func testSubscribeReceivesFirstAndUpdates() async throws {
        let fixture = ServerFixture()
        try fixture.server.start()
        let client = ReachabilityClient(socketPath: fixture.socketPath)
        var updates = client.subscribe(filter: PathFilter(prohibitedInterfaceTypes: [.wifi])).makeAsyncIterator()
        let first = try await updates.next()
        XCTAssertEqual(first?.path.availableInterfaces, ["eth0"])
        fixture.server.deliver(.snapshot(makeSnapshot(ethGateway: "10.0.0.77")))
        let second = try await updates.next()
        XCTAssertEqual(second?.sequence, 2)
        XCTAssertEqual(second?.path.gateways, ["10.0.0.77"])

        // The daemon going away ends the stream with connectionClosed.
        fixture.server.shutdown()
        do {
            _ = try await updates.next()
            XCTFail("stream did not end")
        } catch {
            XCTAssertEqual(error, .connectionClosed(socketPath: fixture.socketPath))
        }
        await fixture.stop()
    }

    /// An app that drops its sequence (or cancels its task) closes the connection: the
    /// daemon's subscriber count goes back to zero.
    func testDroppingOrCancellingASubscriptionClosesIt() async throws {
        let fixture = ServerFixture()
        try fixture.server.start()
        let client = ReachabilityClient(socketPath: fixture.socketPath)
        do {
            var updates = client.subscribe().makeAsyncIterator()
            _ = try await updates.next()
            try await waitForSubscribers(1, on: fixture)
        }
        try await waitForSubscribers(0, on: fixture)

        let task = Task {
            for try await _ in client.subscribe() {}
        }
        try await waitForSubscribers(1, on: fixture)
        task.cancel()
        _ = try await task.value  // a cancelled subscription ends quietly, without an error
        try await waitForSubscribers(0, on: fixture)
        await fixture.stop()
    }

    private func waitForSubscribers(_ expected: Int, on fixture: ServerFixture, file: StaticString = #filePath, line: UInt = #line) async throws {
        var count = -1
        for _ in 0..<200 {
            count = try await fixture.server.subscriptionCount().get()
            if count == expected { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTFail("\(count) subscribers, expected \(expected)", file: file, line: line)
    }

    func testDaemonNotRunning() async {
        let path = "/tmp/reachd-test-missing-\(getpid())/sock"
        do {
            _ = try await ReachabilityClient(socketPath: path).status()
            XCTFail("no error")
        } catch {
            XCTAssertEqual(error, .daemonNotRunning(socketPath: path, connectionRefused: false))
            XCTAssertEqual("\(error)", "cannot reach reachd at \(path): no such socket (is reachd running?)")
        }
        var iterator = ReachabilityClient(socketPath: path).subscribe().makeAsyncIterator()
        do {
            _ = try await iterator.next()
            XCTFail("no error")
        } catch {
            XCTAssertEqual(error, .daemonNotRunning(socketPath: path, connectionRefused: false))
        }
    }

    /// A full listen backlog is a burst of clients, not a missing daemon: a call waits to
    /// be accepted, as a blocking connect would, and times out only if it never is.
    func testAFullBacklogIsWaitedOut() async throws {
        let directory = try Paths.makeTemporaryDirectory("reachd-backlog")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/sock"
        let listener = try UnixSocket.listen(at: path, backlog: 0)
        defer { try? listener.close() }
        // Backlog 0 queues one connection; the next non-blocking connect fails with EAGAIN.
        let filler = try unixSocket(SOCK_STREAM, path: path, .connect, nonBlocking: true)
        defer { close(filler) }
        XCTAssertThrowsError(try unixSocket(SOCK_STREAM, path: path, .connect, nonBlocking: true), "the backlog is full") { error in
            XCTAssertEqual((error as? CommandFailed)?.status, EAGAIN, "\(error)")
        }

        // Nobody accepts: the call gives up after its timeout, saying so.
        let started = ContinuousClock.now
        do {
            _ = try await ReachabilityClient(socketPath: path, timeout: .milliseconds(300)).status()
            XCTFail("answered with nobody accepting")
        } catch {
            XCTAssertEqual(error, .timedOut(socketPath: path, after: .milliseconds(300)))
        }
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .milliseconds(250))

        // Accepted 200 ms later: the call is answered.
        let reply = StatusReply(sequence: 1, instance: "i", path: makeState().path)
        let frame = try VarlinkCoding.encodeFrame(VarlinkReply(parameters: reply))
        let call = Task { try await ReachabilityClient(socketPath: path, timeout: .seconds(10)).status() }
        let served = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { served.signal() }
            usleep(200_000)
            func accepted() -> Int32 {
                var ready = pollfd(fd: listener.rawValue, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, 5000) == 1 else { return -1 }
                return accept(listener.rawValue, nil, nil)
            }
            close(accepted())  // the filler
            let client = accepted()
            guard client >= 0 else { return }
            defer { close(client) }
            _ = fcntl(client, F_SETFL, 0)  // blocking, for the read below
            var byte: UInt8 = 1
            while byte != 0, read(client, &byte, 1) == 1 {}  // the call, up to its NUL
            _ = frame.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
        }
        let answer = try await call.value
        served.wait()
        XCTAssertEqual(answer, reply)
    }

    /// The server's error reply reaches the caller as a typed `remoteError`, name and
    /// parameters intact; this fails if the client's reply decoding breaks.
    func testRemoteErrorIsDecodedAndTyped() async throws {
        let fixture = ServerFixture()
        try fixture.server.start()
        let client = ReachabilityClient(socketPath: fixture.socketPath)
        let cases: [(method: String, expected: VarlinkError)] = [
            ("io.reachd.Reachability.NoSuchMethod", .methodNotFound(method: "io.reachd.Reachability.NoSuchMethod")),
            ("com.example.Other.Call", .interfaceNotFound(interface: "com.example.Other")),
            (ReachabilityInterface.Method.subscribe, .expectedMore),
        ]
        for test in cases {
            do {
                _ = try await client.call(test.method, NoParameters(), returning: StatusReply.self)
                XCTFail("\(test.method): no error")
            } catch {
                XCTAssertEqual(error.varlinkError, test.expected, test.method)
                guard case let .remoteError(path, name, _) = error else { return XCTFail("\(test.method): \(error)") }
                XCTAssertEqual(path, fixture.socketPath)
                XCTAssertEqual(name, test.expected.name)
                let sentence = ErrorAdvice.forRemote(test.expected).explanation
                XCTAssertEqual("\(error)", "reachd at \(fixture.socketPath) answered with an error: \(sentence) (\(test.expected.name))")
            }
        }
        // Invalid parameters come back naming the parameter.
        do {
            _ = try await client.call(ReachabilityInterface.Method.getStatus, ["bogus": JSONValue.bool(true)], returning: StatusReply.self)
            XCTFail("no error")
        } catch {
            XCTAssertEqual(error.varlinkError, .invalidParameter(parameter: "bogus"))
        }
        await fixture.stop()
    }
}

/// What a connect or send failure means to a caller, errno by errno.
final class ClientErrorMappingTests: XCTestCase {
    func testErrnoMeanings() {
        let path = "/run/reachd/io.reachd.Reachability"
        let cases: [(Errno, ReachClientError)] = [
            (.noSuchFileOrDirectory, .daemonNotRunning(socketPath: path, connectionRefused: false)),
            (.notDirectory, .daemonNotRunning(socketPath: path, connectionRefused: false)),
            (.connectionRefused, .daemonNotRunning(socketPath: path, connectionRefused: true)),
            (.brokenPipe, .connectionClosed(socketPath: path)),
            (.connectionReset, .connectionClosed(socketPath: path)),
            (.permissionDenied, .permissionDenied(socketPath: path, deniedPath: "/run/reachd")),
            (.tooManyOpenFiles, .connectionFailed(socketPath: path, reason: Errno.tooManyOpenFiles.description)),
        ]
        for (errno, expected) in cases {
            XCTAssertEqual(ReachClientError(errno: errno, socketPath: path) { _ in "/run/reachd" }, expected, "\(errno)")
        }
        XCTAssertEqual(ReachClientError(IOError(errnoCode: ECONNREFUSED, reason: "connect"), socketPath: path), cases[2].1, "via NIO")
    }

    /// The one line says what refused: no path known, the socket, or a directory.
    func testPermissionDeniedNamesWhatRefused() {
        let path = "/run/reachd/io.reachd.Reachability"
        let cases: [(String?, String)] = [
            (nil, "permission denied"),
            (path, "permission denied (no write permission on the socket)"),
            ("/run/reachd", "permission denied (may not search /run/reachd)"),
        ]
        for (denied, expected) in cases {
            XCTAssertEqual("\(ReachClientError.permissionDenied(socketPath: path, deniedPath: denied))", "cannot reach reachd at \(path): \(expected)")
        }
    }
}
