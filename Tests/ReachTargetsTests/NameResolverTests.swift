import CLinux
import Dispatch
import Foundation
import Glibc
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ReachabilityCore
import ReachProtocol
@testable import ReachTargets
import XCTest


/// What a resolver's answer means for a target: systemd-resolved's Varlink replies and
/// getaddrinfo's error codes, each to one reason. The integration tests ask real ones.
final class NameResolverTests: XCTestCase {
    func testResolvedReplies() {
        let address: (Int, [Int]) -> JSONValue = { family, bytes in
            .object(["ifindex": .integer(2), "family": .integer(family), "address": .array(bytes.map { .integer($0) })])
        }
        let cases: [(String, VarlinkReply<JSONObject>, NameResolver.Outcome)] = [
            ("two families, a duplicate",
             VarlinkReply(parameters: ["addresses": .array([address(10, [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [5]),
                                                            address(2, [198, 51, 100, 5]), address(2, [198, 51, 100, 5])])]),
             .addresses([IPAddress("2001:db8::5")!, IPAddress("198.51.100.5")!])),
            ("no addresses", VarlinkReply(parameters: ["addresses": .array([])]), .failed(.nameNotFound)),
            ("malformed address bytes", VarlinkReply(parameters: ["addresses": .array([address(2, [1, 2, 300, 4])])]), .failed(.nameNotFound)),
            ("NXDOMAIN", VarlinkReply(parameters: ["rcode": .integer(3)], error: "io.systemd.Resolve.DNSError"), .failed(.nameNotFound)),
            ("SERVFAIL", VarlinkReply(parameters: ["rcode": .integer(2)], error: "io.systemd.Resolve.DNSError"), .failed(.resolutionFailed)),
            ("DNSError without rcode", VarlinkReply(parameters: [:], error: "io.systemd.Resolve.DNSError"), .failed(.resolutionFailed)),
            ("no such record", VarlinkReply(parameters: nil, error: "io.systemd.Resolve.NoSuchResourceRecord"), .failed(.nameNotFound)),
            ("no servers", VarlinkReply(parameters: nil, error: "io.systemd.Resolve.NoNameServers"), .failed(.noDNSServer)),
            ("timed out", VarlinkReply(parameters: nil, error: "io.systemd.Resolve.QueryTimedOut"), .failed(.resolutionTimedOut)),
            ("attempts exhausted", VarlinkReply(parameters: nil, error: "io.systemd.Resolve.MaxAttemptsReached"), .failed(.resolutionTimedOut)),
            ("anything else", VarlinkReply(parameters: nil, error: "io.systemd.Resolve.InvalidReply"), .failed(.resolutionFailed)),
        ]
        for (name, reply, expected) in cases {
            XCTAssertEqual(NameResolver.outcome(ofResolvedReply: reply), expected, name)
        }
    }

    /// A link-local IPv6 answer keeps the interface it came from, by name; any other drops it.
    func testScopes() {
        let linkLocal = [0xfe, 0x80] + Array(repeating: 0, count: 13) + [0x0b]
        let entry: (Int, Int, [Int]) -> JSONValue = { index, family, bytes in
            .object(["ifindex": .integer(index), "family": .integer(family), "address": .array(bytes.map { .integer($0) })])
        }
        let names: (UInt32) -> String? = { [2: "eth0", 3: "wlan0"][$0] }
        let reply = VarlinkReply<JSONObject>(parameters: ["addresses": .array([
            entry(2, 10, linkLocal), entry(3, 10, linkLocal), entry(9, 10, linkLocal), entry(2, 2, [169, 254, 1, 1]),
        ])])
        guard case let .addresses(found) = NameResolver.outcome(ofResolvedReply: reply, interfaceName: names) else { return XCTFail() }
        let fe80b = IPAddress("fe80::b")!
        XCTAssertEqual(found.scoped.map(\.address), [fe80b, fe80b, fe80b, IPAddress("169.254.1.1")!])
        XCTAssertEqual(found.scoped.map(\.interface), ["eth0", "wlan0", nil, nil], "one per link; an unknown index and IPv4 unscoped")
        XCTAssertEqual(Array(found), [fe80b, fe80b, fe80b, IPAddress("169.254.1.1")!])

        // getaddrinfo hands the scope over as sin6_scope_id; it comes back as the name.
        guard case let .addresses(literal) = NameResolver.lookUp("fe80::b%lo", hasNameserver: false) else { return XCTFail() }
        XCTAssertEqual(literal.scoped.map(\.interface), ["lo"])
        XCTAssertEqual(literal.scoped.map(\.address), [fe80b])
        // A name an interface could not have is dropped, not shown.
        var unsafe = ResolvedAddresses()
        unsafe.append(fe80b, interface: "eth\u{1b}[2J")
        XCTAssertEqual(unsafe.scoped.map(\.interface), [nil])
    }

    func testGetaddrinfoErrors() {
        let cases: [(Int32, Bool, UnsatisfiedReason)] = [
            (EAI_NONAME, true, .nameNotFound), (reachd_EAI_NODATA, true, .nameNotFound), (EAI_NONAME, false, .nameNotFound),
            (EAI_AGAIN, true, .resolutionTimedOut), (EAI_AGAIN, false, .noDNSServer),
            (EAI_FAIL, true, .resolutionFailed), (EAI_FAIL, false, .noDNSServer), (EAI_SYSTEM, true, .resolutionFailed),
        ]
        for (status, servers, expected) in cases {
            XCTAssertEqual(NameResolver.reason(forError: status, hasNameserver: servers), expected, "\(status) servers: \(servers)")
        }
    }

    // MARK: Fairness, with a fake blocking lookup

    /// A resolver on a real loop whose lookups of names starting with "stuck" block until
    /// `release` (a DNS server that never answers); any other name resolves at once.
    private final class Harness: @unchecked Sendable {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let gate = DispatchSemaphore(value: 0)
        let started = NIOLockedValueBox(0)
        let blocked = NIOLockedValueBox(0)
        private var resolver: NIOLoopBound<NameResolver>!
        private var work: NIOLoopBound<BlockingWork>!

        init(timeout: TimeAmount, localFiles: NameResolver.LocalFiles? = nil) throws {
            let loop = group.next()
            let gate = self.gate, started = self.started, blocked = self.blocked
            work = try loop.submit { NIOLoopBound(BlockingWork(eventLoop: loop), eventLoop: loop) }.wait()
            let work = self.work!
            resolver = try loop.submit {
                NIOLoopBound(NameResolver(eventLoop: loop, work: work.value, resolvedSocket: nil, timeout: timeout, localFiles: localFiles) { name, _, _ in
                    started.withLockedValue { $0 += 1 }
                    if name.hasPrefix("stuck") {
                        blocked.withLockedValue { $0 += 1 }
                        gate.wait()
                    }
                    return .addresses([IPAddress("198.51.100.1")!])
                }, eventLoop: loop)
            }.wait()
        }

        func resolve(_ name: String, owner: WorkOwner) -> EventLoopFuture<NameResolver.Outcome> {
            let resolver = self.resolver!
            return resolver.eventLoop.flatSubmit { resolver.value.resolve(name, hasNameserver: true, owner: owner) }
        }

        func runOffLoop(_ body: @escaping @Sendable () -> Int) -> EventLoopFuture<Int> {
            work.value.run(body)
        }

        func shutdown() throws {
            let resolver = self.resolver!
            try resolver.eventLoop.submit { resolver.value.shutdown() }.wait()
        }

        /// Lets every blocked lookup return, then stops the loop.
        func finish() throws {
            for _ in 0..<blocked.withLockedValue({ $0 }) { gate.signal() }
            let resolver = self.resolver!
            try resolver.eventLoop.submit { resolver.value.shutdown() }.wait()
            try group.syncShutdownGracefully()
        }
    }

    /// uid 65534 asks for 100 names the server never answers: its share of threads hangs, the
    /// rest of its names wait and are dropped at their deadline without ever running, while
    /// another uid's names and reachd's own resolve at once, also after the deadlines.
    func testOneUserCannotStallAnother() throws {
        let harness = try Harness(timeout: .milliseconds(300))
        let flood = (0..<100).map { harness.resolve("stuck\($0).test", owner: .user(65534)) }
        let begin = ContinuousClock.now
        XCTAssertEqual(try harness.resolve("fine.test", owner: .user(1000)).wait(), .addresses([IPAddress("198.51.100.1")!]))
        XCTAssertEqual(try harness.resolve("probe.test", owner: .daemon).wait(), .addresses([IPAddress("198.51.100.1")!]))
        XCTAssertLessThan(ContinuousClock.now - begin, .milliseconds(100), "another uid waited for uid 65534's lookups")
        for answer in flood { XCTAssertEqual(try answer.wait(), .failed(.resolutionTimedOut)) }
        XCTAssertEqual(try harness.resolve("fine2.test", owner: .user(1000)).wait(), .addresses([IPAddress("198.51.100.1")!]))
        XCTAssertEqual(harness.blocked.withLockedValue { $0 }, BlockingSchedule.Limits().perUser, "only uid 65534's share ever ran")
        XCTAssertEqual(harness.started.withLockedValue { $0 }, BlockingSchedule.Limits().perUser + 3)
        try harness.finish()
    }

    /// A stuck lookup asked again by its owner is waited for, not queued twice; once it
    /// returns, its answer is cached.
    func testAbandonedLookupIsJoinedAndItsAnswerKept() throws {
        let harness = try Harness(timeout: .milliseconds(100))
        XCTAssertEqual(try harness.resolve("stuck.test", owner: .user(1000)).wait(), .failed(.resolutionTimedOut))
        let again = harness.resolve("stuck.test", owner: .user(1000))
        harness.gate.signal()
        XCTAssertEqual(try again.wait(), .addresses([IPAddress("198.51.100.1")!]))
        XCTAssertEqual(try harness.resolve("stuck.test", owner: .user(1001)).wait(), .addresses([IPAddress("198.51.100.1")!]), "cached")
        XCTAssertEqual(harness.started.withLockedValue { $0 }, 1)
        try harness.finish()
    }

    /// With nsswitch.conf asking files first, hosts names answer from the file even for a uid
    /// whose threads are all stuck; a changed file is read again; with dns first, the file
    /// is left to getaddrinfo.
    func testHostsFileAnswersWithoutAThread() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reachd-hosts-\(getpid())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = NameResolver.LocalFiles(hosts: directory + "/hosts", nsswitch: directory + "/nsswitch.conf")
        try "hosts: files dns\n".write(toFile: files.nsswitch, atomically: true, encoding: .utf8)
        try "10.77.0.1 gateway.test\n".write(toFile: files.hosts, atomically: true, encoding: .utf8)
        let harness = try Harness(timeout: .milliseconds(300), localFiles: files)
        let flood = (0..<10).map { harness.resolve("stuck\($0).test", owner: .user(65534)) }
        XCTAssertEqual(try harness.resolve("Gateway.test", owner: .user(65534)).wait(), .addresses([IPAddress("10.77.0.1")!]))
        try "10.77.0.2 gateway.test\n10.77.0.3 new.test\n".write(toFile: files.hosts, atomically: true, encoding: .utf8)
        usleep(1_100_000)  // the files are looked at again after a second
        XCTAssertEqual(try harness.resolve("new.test", owner: .user(65534)).wait(), .addresses([IPAddress("10.77.0.3")!]))
        XCTAssertEqual(try harness.resolve("gateway.test", owner: .user(1000)).wait(), .addresses([IPAddress("10.77.0.2")!]))
        try "hosts: dns files\n".write(toFile: files.nsswitch, atomically: true, encoding: .utf8)
        usleep(1_100_000)
        XCTAssertEqual(try harness.resolve("new.test", owner: .user(65534)).wait(), .failed(.resolutionTimedOut), "left to the stuck uid's threads")
        for answer in flood { _ = try answer.wait() }
        XCTAssertEqual(harness.started.withLockedValue { $0 }, BlockingSchedule.Limits().perUser)
        try harness.finish()
    }

    /// Shutting down answers every caller still waiting, queued or running (a stuck lookup
    /// keeps only its own thread), and refuses new work.
    func testShutdownAnswersEveryone() throws {
        let harness = try Harness(timeout: .seconds(30))
        let waiting = (0..<6).map { harness.resolve("stuck\($0).test", owner: .user(1000)) }
        let loop = harness.group.next()
        let offLoop = try loop.submit { [harness] in harness.runOffLoop { 7 } }.wait()
        XCTAssertEqual(try offLoop.wait(), 7)
        // The share's threads are started, the rest of the names queued.
        for _ in 0..<200 where harness.blocked.withLockedValue({ $0 }) < BlockingSchedule.Limits().perUser { usleep(10_000) }
        try harness.shutdown()
        for answer in waiting { XCTAssertEqual(try answer.wait(), .failed(.resolutionFailed)) }
        XCTAssertEqual(try harness.resolve("fine.test", owner: .user(1000)).wait(), .failed(.resolutionFailed))
        XCTAssertEqual(harness.started.withLockedValue { $0 }, BlockingSchedule.Limits().perUser)
        try harness.finish()
    }
}
