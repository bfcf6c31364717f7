import Foundation
import ReachClient
import ReachProtocol
import ReachabilityCore
import TestSupport
import XCTest

/// "Can I reach this host?" on a real kernel: each address looked up in the FIB with the
/// caller's uid, names resolved by reachd. No packet goes to any target: lookups send
/// nothing, and the only DNS server is a stub in the test's router namespace.
final class TargetIntegrationTests: DaemonTestCase {
    private var stub: Process?

    override func tearDown() {
        stopStub()
        super.tearDown()
    }

    private func check(_ client: ReachabilityClient, _ text: String) async throws -> TargetPath {
        try await client.checkTarget(try XCTUnwrap(Target(host: text))).path
    }

    /// An address via the gateway, one on-link, one of this host, and host routes of the
    /// three reject types while the host as a whole is fine.
    func testAddressTargets() async throws {
        try topology.configureIPv4()
        try topology.host.ipBatch([
            "route add blackhole 198.51.100.66/32", "route add unreachable 198.51.100.67/32", "route add prohibit 198.51.100.68/32",
        ])
        let (daemon, client) = try startDaemon()
        let hostStatus = try await client.status().path.status
        XCTAssertEqual(hostStatus, .satisfied)

        let viaGateway = try await check(client, "198.51.100.7")
        XCTAssertEqual(viaGateway.status, .satisfied)
        XCTAssertEqual(viaGateway.flags, [.reachable])
        XCTAssertEqual(viaGateway.reachability, .reachableViaWired)
        XCTAssertEqual(viaGateway.addresses.first?.gateway, "10.77.0.1")
        XCTAssertEqual(viaGateway.addresses.first?.interface, "eth0")
        XCTAssertEqual(viaGateway.addresses.first?.source, "10.77.0.2")

        let onLink = try await check(client, "10.77.0.1")
        XCTAssertEqual(onLink.flags, [.reachable, .isDirect])
        XCTAssertNil(onLink.addresses.first?.gateway)

        let local = try await check(client, "10.77.0.2")
        XCTAssertEqual(local.status, .satisfied)
        XCTAssertTrue(local.flags.contains(.isLocalAddress), "\(local)")
        XCTAssertEqual(local.primaryInterface, "lo")

        for (address, reason) in [("198.51.100.66", UnsatisfiedReason.blackholeRoute), ("198.51.100.67", .unreachableRoute), ("198.51.100.68", .prohibitedRoute)] {
            let rejected = try await check(client, address)
            XCTAssertEqual(rejected.status, .unsatisfied, address)
            XCTAssertEqual(rejected.unsatisfiedReason, reason, address)
            XCTAssertEqual(rejected.reachability, .notReachable, address)
            XCTAssertEqual(rejected.flags, [], address)
        }

        // reachctl: verdict, a line per address, exit 0 / 1.
        let reachable = try reachctl(["check", "198.51.100.7", "--socket", daemon.socketPath])
        XCTAssertEqual(reachable.status, 0, reachable.stderr)
        XCTAssertTrue(reachable.stdout.hasPrefix("198.51.100.7: reachable via eth0 (wiredEthernet) [reachable]\nADDRESS"), reachable.stdout)
        XCTAssertTrue(reachable.stdout.contains("198.51.100.7  ipv4    reachable  eth0       10.77.0.1  10.77.0.2"), reachable.stdout)
        let blackholed = try reachctl(["check", "198.51.100.66", "--socket", daemon.socketPath])
        XCTAssertEqual(blackholed.status, 1)
        XCTAssertTrue(blackholed.stdout.hasPrefix("198.51.100.66: not reachable: blackholeRoute\n"), blackholed.stdout)
        let usage = try reachctl(["check", "not a host", "--socket", daemon.socketPath])
        XCTAssertEqual(usage.status, 64, usage.stderr)
    }

    /// A monitored target follows its own route: a blackhole host route added and removed
    /// gives two more replies while the host's path never changes; `reachctl wait --target`
    /// returns once it is reachable again.
    func testSubscribedTargetFollowsItsRoute() async throws {
        try topology.configureIPv4()
        let (daemon, client) = try startDaemon()
        var answers = client.subscribe(target: .address(IPAddress("198.51.100.7")!)).makeAsyncIterator()
        let first = try await answers.next()
        XCTAssertEqual(first?.target, "198.51.100.7")
        XCTAssertEqual(first?.path.status, .satisfied)

        try topology.host.ip("route", "add", "blackhole", "198.51.100.7/32")
        let blocked = try await answers.next()
        XCTAssertEqual(blocked?.path.unsatisfiedReason, .blackholeRoute)
        let hostPath = try await client.status()
        XCTAssertEqual(hostPath.path.status, .satisfied, "the host as a whole is unaffected")
        XCTAssertEqual(hostPath.sequence, 1, "and nothing was published for it")

        let waiter = try launchReachctl(["wait", "--target", "198.51.100.7", "--timeout", "10", "--socket", daemon.socketPath])
        try await Task.sleep(for: .milliseconds(300))
        XCTAssertTrue(waiter.isRunning, "wait --target waits while the target is blackholed")
        try topology.host.ip("route", "del", "blackhole", "198.51.100.7/32")
        let back = try await answers.next()
        XCTAssertEqual(back?.path.status, .satisfied)
        waiter.waitUntilExit()
        XCTAssertEqual(waiter.terminationStatus, 0)

        // A name's stream: the first answer at once, through the same machinery.
        var named = client.subscribe(target: .host("localhost")).makeAsyncIterator()
        let local = try await named.next()
        XCTAssertEqual(local?.path.status, .satisfied)
        XCTAssertTrue(local?.path.flags.contains(.isLocalAddress) == true, "\(String(describing: local))")
        // SubscribeTarget without more is refused like Subscribe.
        let raw = try VarlinkConnection(path: daemon.socketPath)
        try raw.send(rawBytes: Array(#"{"method":"io.reachd.Reachability.SubscribeTarget","parameters":{"address":"198.51.100.7"}}"#.utf8) + [0])
        XCTAssertEqual(raw.next(timeout: 5), .message(#"{"error":"org.varlink.service.ExpectedMore","parameters":{}}"#))
    }

    /// A reload that retypes the target's interface changes its answer at once, without
    /// waiting for the kernel to change anything; ignoring that interface (for the path)
    /// leaves the target reachable.
    func testReloadChangesAWatchedTarget() async throws {
        try topology.configureIPv4()
        let config = try temporaryDirectory("reachd-config") + "/reachd.toml"
        try "[interfaces]\nignore = []\n".write(toFile: config, atomically: true, encoding: .utf8)
        let (daemon, client) = try startDaemon(extraArguments: ["--config", config])
        var answers = client.subscribe(target: .address(IPAddress("198.51.100.7")!)).makeAsyncIterator()
        let first = try await answers.next()
        XCTAssertEqual(first?.path.status, .satisfied)
        try "[interfaces]\nignore = [\"eth*\"]\n[[interfaces.override]]\nmatch = \"eth0\"\ntype = \"cellular\"\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        let reload = try reachctl(["reload", "--socket", daemon.socketPath])
        XCTAssertEqual(reload.status, 0, reload.stderr)
        let retyped = try await answers.next()
        XCTAssertEqual(retyped?.path.status, .satisfied)
        XCTAssertEqual(retyped?.path.reachability, .reachableViaWWAN)
        XCTAssertEqual(retyped?.path.flags, [.reachable, .isWWAN])
    }

    /// One uid may hold 64 target streams; the 65th is refused with LimitReached and its
    /// connection stays usable; closing one stream makes room again.
    func testTargetStreamsPerUserAreCapped() throws {
        try topology.configureIPv4()
        let (daemon, _) = try startDaemon()
        let call = Array(#"{"method":"io.reachd.Reachability.SubscribeTarget","parameters":{"address":"198.51.100.7"},"more":true}"#.utf8) + [0]
        var streams: [VarlinkConnection] = []
        for _ in 0..<64 {
            let connection = try VarlinkConnection(path: daemon.socketPath)
            try connection.send(rawBytes: call)
            guard case let .message(first) = connection.next(timeout: 5) else { return XCTFail("no first answer") }
            XCTAssertTrue(first.contains(#""continues":true"#), first)
            streams.append(connection)
        }
        let refused = try VarlinkConnection(path: daemon.socketPath)
        try refused.send(rawBytes: call)
        XCTAssertEqual(refused.next(timeout: 5), .message(#"{"error":"io.reachd.Reachability.LimitReached","parameters":{"limit":"target streams per user","maximum":64}}"#))
        try refused.send(rawBytes: Array(#"{"method":"io.reachd.Reachability.GetStatus"}"#.utf8) + [0])
        guard case let .message(status) = refused.next(timeout: 5) else { return XCTFail("the refused connection still answers") }
        XCTAssertTrue(status.contains(#""status":"satisfied""#), status)
        streams.removeLast()  // closes it
        usleep(200_000)  // the close reaches reachd
        let again = try VarlinkConnection(path: daemon.socketPath)
        try again.send(rawBytes: call)
        guard case let .message(first) = again.next(timeout: 5) else { return XCTFail("no answer after a stream closed") }
        XCTAssertTrue(first.contains(#""continues":true"#), first)
    }

    /// A target reachable only through a policy rule, and a uid rule that gives two callers
    /// two answers for one target: each is looked up with the caller's own uid.
    func testPolicyRulesAndPerUserAnswers() async throws {
        try topology.configureIPv4(defaultRoute: false)
        try topology.host.ipBatch([
            "route add default via 10.77.0.1 dev eth0 table 100",
            "rule add to 203.0.113.7 lookup 100 priority 100",
            "route add blackhole 198.51.100.9/32 table 101",
            "rule add uidrange 65534-65534 lookup 101 priority 101",
            "route add 198.51.100.0/24 via 10.77.0.1 dev eth0",
        ])
        let (daemon, client) = try startDaemon()
        let hostStatus = try await client.status().path.status
        XCTAssertEqual(hostStatus, .unsatisfied, "no default route in main")
        let ruled = try await check(client, "203.0.113.7")
        XCTAssertEqual(ruled.status, .satisfied, "\(ruled)")
        XCTAssertEqual(ruled.addresses.first?.gateway, "10.77.0.1")
        let unruled = try await check(client, "203.0.113.8")
        XCTAssertEqual(unruled.unsatisfiedReason, .noRoute)

        let asRoot = try await check(client, "198.51.100.9")
        XCTAssertEqual(asRoot.status, .satisfied)
        let asNobody = try Command.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                        Paths.product("reachctl"), "check", "--json", "198.51.100.9", "--socket", daemon.socketPath],
                                       unset: ["REACHD_SOCKET"])
        XCTAssertEqual(asNobody.status, 1, asNobody.stderr)
        let reply = try JSONDecoder().decode(TargetReply.self, from: Data(asNobody.stdout.utf8))
        XCTAssertEqual(reply.path.unsatisfiedReason, .blackholeRoute, "uid 65534's rule sends it to the blackhole")
    }

    /// Names: from the namespace's hosts file; one the DNS server says does not exist
    /// (quickly); one the server never answers (resolutionTimedOut at 5 s, while reachd keeps
    /// answering everything else).
    func testNames() async throws {
        try topology.configureIPv4()
        try topology.hostFiles(
            hosts: "127.0.0.1 localhost\n10.77.0.1 gateway.test\n2001:db8::5 dual.test\n198.51.100.5 dual.test\n",
            nsswitch: "hosts: files dns\n", resolvConf: "nameserver 10.77.0.1\n"
        )
        try startStub(mode: "nxdomain")
        let (daemon, client) = try startDaemon()

        let gateway = try await check(client, "Gateway.TEST")
        XCTAssertEqual(gateway.status, .satisfied)
        XCTAssertEqual(gateway.flags, [.reachable, .isDirect])
        let reply = try await client.checkTarget(.host("gateway.test"))
        XCTAssertEqual(reply.target, "gateway.test")

        // Both families known: IPv6 (no route here) listed first, the IPv4 address carries it.
        let dual = try await check(client, "dual.test")
        XCTAssertEqual(dual.addresses.map(\.address), ["2001:db8::5", "198.51.100.5"])
        XCTAssertEqual(dual.addresses.map(\.reachable), [false, true])
        XCTAssertEqual(dual.status, .satisfied)

        let started = ContinuousClock.now
        let missing = try await check(client, "no-such-host.test")
        XCTAssertEqual(missing.status, .unsatisfied)
        XCTAssertEqual(missing.unsatisfiedReason, .nameNotFound)
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(2), "NXDOMAIN is answered at once")
        let printed = try reachctl(["check", "no-such-host.test", "--socket", daemon.socketPath])
        XCTAssertEqual(printed.status, 1)
        XCTAssertEqual(printed.stdout, "no-such-host.test: not reachable: nameNotFound\n")

        // A server that never answers.
        stopStub()
        try startStub(mode: "silent")
        let slow = Task { [client] in try await client.checkTarget(.host("silent.test")).path }
        try await Task.sleep(for: .milliseconds(500))
        let during = ContinuousClock.now
        let meanwhile = try await client.status().path.status
        XCTAssertEqual(meanwhile, .satisfied)
        XCTAssertLessThan(ContinuousClock.now - during, .milliseconds(500), "GetStatus is not held up by the resolution")
        let timedOut = try await slow.value
        XCTAssertEqual(timedOut.unsatisfiedReason, .resolutionTimedOut)
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .seconds(5))
    }

    /// With systemd-resolved's Varlink socket present, names go through it: a name only it
    /// knows resolves, and its errors keep their meaning (NXDOMAIN, no servers, timeout).
    func testNamesThroughSystemdResolved() async throws {
        try topology.configureIPv4()
        let socket = try temporaryDirectory("reachd-resolved") + "/io.systemd.Resolve"
        let ready = Pipe()
        stub = try Command.launch(["python3", Paths.repository.appendingPathComponent("Tests/Fixtures/resolved_stub.py").path, socket], stdout: ready)
        XCTAssertTrue(String(decoding: ready.fileHandleForReading.availableData, as: UTF8.self).hasPrefix("ready"))
        let (_, client) = try startDaemon(extraArguments: ["--resolved-socket", socket])
        let fake = try await check(client, "fake.test")
        XCTAssertEqual(fake.status, .satisfied)
        XCTAssertEqual(fake.addresses.map(\.address), ["198.51.100.44"])
        for (name, reason) in [("gone.test", UnsatisfiedReason.nameNotFound), ("noservers.test", .noDNSServer), ("late.test", .resolutionTimedOut)] {
            let path = try await check(client, name)
            XCTAssertEqual(path.unsatisfiedReason, reason, name)
        }
    }

    /// SIGKILL: children of the test runner start with SIGTERM blocked.
    private func stopStub() {
        guard let stub else { return }
        kill(stub.processIdentifier, SIGKILL)
        stub.waitUntilExit()
        self.stub = nil
    }

    private func startStub(mode: String) throws {
        let ready = Pipe()
        let process = try Command.launch(
            ["ip", "netns", "exec", topology.router.name, "python3", Paths.repository.appendingPathComponent("Tests/Fixtures/dns_stub.py").path,
             "10.77.0.1", mode], stdout: ready
        )
        stub = process
        let line = ready.fileHandleForReading.availableData
        XCTAssertTrue(String(decoding: line, as: UTF8.self).hasPrefix("ready"), "the DNS stub started")
    }
}
