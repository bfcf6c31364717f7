import Foundation
import Glibc
import ReachClient
import ReachProtocol
import ReachabilityCore
import TestSupport
import XCTest

/// RFC 7050 on a real kernel: an IPv6-only link whose router sends no PREF64, and a DNS64
/// resolver (`dns64_stub.py`) in the router namespace, named by the host namespace's
/// resolv.conf. reachd asks it once for ipv4only.arpa and reports the prefix it gave,
/// asks again only when something changed, and never when `[nat64] discover-dns64 = false`.
final class DNS64DiscoveryTests: DaemonTestCase {
    private var resolver: Process?
    private var queryLog = ""
    /// What the resolver synthesizes under.
    private let prefix = NAT64Prefix("2001:db8:64::/96", source: .dns64)!

    override func setUpWithError() throws {
        try super.setUpWithError()
        let directory = try temporaryDirectory("reachd-dns64")
        queryLog = directory + "/queries"
        _ = FileManager.default.createFile(atPath: queryLog, contents: nil)
        try topology.configureIPv6()
        resolver = try topology.launchRouterServer("dns64_stub.py", ["fd77::1", "2001:db8:64::", queryLog])
        try topology.hostFiles(hosts: "127.0.0.1 localhost\n", nsswitch: "hosts: files dns\n", resolvConf: "nameserver fd77::1\n")
    }

    override func tearDown() {
        if let resolver { kill(resolver.processIdentifier, SIGKILL) }
        resolver?.waitUntilExit()
        super.tearDown()
    }

    /// The AAAA queries for ipv4only.arpa the resolver received so far.
    private func queries() -> Int {
        let text = (try? String(contentsOfFile: queryLog, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { $0 == "ipv4only.arpa 28" }.count
    }

    /// Polls until `predicate` holds (or `timeout` passes); whether it did.
    private func eventually(timeout: Duration = .seconds(5), _ predicate: () async throws -> Bool) async rethrows -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await predicate() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return try await predicate()
    }

    private func startReachd(configuration: String? = nil) throws -> (DaemonProcess, ReachabilityClient) {
        // No systemd-resolved here: the system resolver (the namespace's resolv.conf) is asked.
        var arguments = ["--resolved-socket", try temporaryDirectory("reachd-no-resolved") + "/io.systemd.Resolve"]
        if let configuration {
            let file = try temporaryDirectory("reachd-dns64-config") + "/reachd.toml"
            try configuration.write(toFile: file, atomically: true, encoding: .utf8)
            arguments += ["--config", file]
        }
        return try startDaemon(extraArguments: arguments)
    }

    func testThePrefixIsLearntFromTheNetworksResolverOnce() async throws {
        let (daemon, client) = try startReachd()
        let learnt = try await eventually { try await client.status().path.nat64Prefixes == [prefix] }
        let path = try await client.status().path
        XCTAssertTrue(learnt, "the DNS64 prefix is reported; path: \(path)")
        XCTAssertEqual(path.ipv4ViaNAT64, prefix)
        XCTAssertFalse(path.supportsIPv4, "native IPv4 stays false")
        let onEth0 = try await interface("eth0", from: client)?.nat64Prefixes
        XCTAssertEqual(onEth0, [prefix])
        XCTAssertEqual(queries(), 1, "one query")
        print("DNS64: reachd learnt \(path.nat64Prefixes ?? []) (source dns64), queries so far: \(queries())")

        // Changes that are not the link's, its default route's or the resolver's: no query.
        try topology.host.ip("addr", "add", "fd77::99/64", "dev", "eth0", "nodad")
        try topology.host.ip("-6", "route", "add", "2001:db8:99::/48", "via", "fd77::1", "dev", "eth0")
        try await Task.sleep(for: .seconds(1))
        XCTAssertEqual(queries(), 1, "not asked again without a change")

        // Another server in the resolver files reachd watches: asked again, once.
        try "nameserver fd77::1\nnameserver fd77::53\n".write(toFile: daemon.resolvConf, atomically: true, encoding: .utf8)
        let askedAgain = await eventually { queries() == 2 }
        XCTAssertTrue(askedAgain, "asked again after the resolver configuration changed: \(queries()) queries")
        // Another default route: asked again.
        try topology.host.ip("-6", "route", "replace", "default", "via", "fe80::1", "dev", "eth0")
        let askedThird = await eventually { queries() == 3 }
        XCTAssertTrue(askedThird, "asked again after the default route changed: \(queries()) queries")
        try await Task.sleep(for: .milliseconds(500))
        XCTAssertEqual(queries(), 3)
        print("DNS64: queries after a resolver change and a default-route change: \(queries())")

        let status = try reachctl(["status", "--socket", daemon.socketPath])
        for line in status.stdout.split(separator: "\n") where line.hasPrefix("IPv4") || line.hasPrefix("NAT64") || line.hasPrefix("Primary") {
            print("reachctl status: \(line)")
        }
        XCTAssertTrue(status.stdout.contains("NAT64") && status.stdout.contains("2001:db8:64::/96 (dns64)"), status.stdout)

        // Ground truth: the network's resolver answers the host with what reachd reported.
        let answer = try Command.run(["ip", "netns", "exec", topology.host.name, "getent", "ahostsv6", "ipv4only.arpa"])
        XCTAssertTrue(answer.stdout.contains(prefix.synthesize(IPAddress("192.0.0.170")!)!.description), answer.stdout)
    }

    /// RFC 7050 is the fallback: while the router announces PREF64 its prefix is the link's
    /// and DNS64's is withdrawn; once the router withdraws it, DNS64 is asked again.
    func testARoutersPREF64WinsAndItsWithdrawalAsksAgain() async throws {
        try await topology.waitForLinkLocal()
        let (_, client) = try startReachd()
        let learnt = try await eventually { try await client.status().path.nat64Prefixes == [prefix] }
        XCTAssertTrue(learnt, "DNS64's prefix first")
        let announced = NAT64Prefix("64:ff9b::/96", source: .routerAdvertisement)!
        try sendPREF64(lifetime: 600)
        let routers = try await eventually { try await client.status().path.nat64Prefixes == [announced] }
        XCTAssertTrue(routers, "the router's prefix replaces DNS64's")
        try await Task.sleep(for: .milliseconds(500))
        XCTAssertEqual(queries(), 1, "no query while the router announces a prefix")

        try sendPREF64(lifetime: 0)
        let back = try await eventually { try await client.status().path.nat64Prefixes == [prefix] }
        XCTAssertTrue(back, "DNS64 is asked again once the router withdrew its prefix")
        XCTAssertEqual(queries(), 2)
        print("DNS64 with PREF64: queries \(queries()) (at start, after the router withdrew 64:ff9b::/96)")
    }

    private func sendPREF64(lifetime: Int) throws {
        _ = try Command.run(["ip", "netns", "exec", topology.router.name, "python3",
                             Paths.repository.appendingPathComponent("Tests/Fixtures/send_ra.py").path, "eth0", "--pref64", "64:ff9b::/96", "\(lifetime)"])
    }

    /// With systemd-resolved (a stand-in speaking its Varlink API), the query is its, for
    /// the link's index and IPv6 only; the system resolver is not asked.
    func testSystemdResolvedIsAskedOnTheLink() async throws {
        let directory = try temporaryDirectory("reachd-dns64-resolved")
        let socket = directory + "/io.systemd.Resolve"
        let calls = directory + "/calls"
        let ready = Pipe()
        let stub = try Command.launch(
            ["python3", Paths.repository.appendingPathComponent("Tests/Fixtures/resolved_stub.py").path, socket, calls], stdout: ready
        )
        // SIGKILL: the stub inherits the test runner's blocked SIGTERM.
        defer { kill(stub.processIdentifier, SIGKILL); stub.waitUntilExit() }
        XCTAssertTrue(String(decoding: ready.fileHandleForReading.availableData, as: UTF8.self).hasPrefix("ready"))
        let (_, client) = try startDaemon(extraArguments: ["--resolved-socket", socket])

        let wellKnown = NAT64Prefix("64:ff9b::/96", source: .dns64)!
        let learnt = try await eventually { try await client.status().path.nat64Prefixes == [wellKnown] }
        XCTAssertTrue(learnt, "the prefix resolved's answer holds")
        let index = try XCTUnwrap(topology.host.ip("-o", "link", "show", "eth0").split(separator: ":").first.map(String.init))
        let logged = (try? String(contentsOfFile: calls, encoding: .utf8)) ?? ""
        XCTAssertEqual(logged, "{\"family\": 10, \"ifindex\": \(index), \"name\": \"ipv4only.arpa\"}\n", "one call, on eth0, AAAA only")
        XCTAssertEqual(queries(), 0, "the system resolver is not asked when resolved answers")
        print("DNS64 through resolved: \(logged.trimmingCharacters(in: .newlines)) -> \(wellKnown) (dns64)")
    }

    func testOffNothingIsAsked() async throws {
        let (_, client) = try startReachd(configuration: "[nat64]\ndiscover-dns64 = false\n")
        let supportsIPv6 = try await client.status().path.supportsIPv6
        XCTAssertTrue(supportsIPv6)
        try await Task.sleep(for: .seconds(1))
        XCTAssertEqual(queries(), 0, "no query with discover-dns64 = false")
        let prefixes = try await client.status().path.nat64Prefixes
        XCTAssertNil(prefixes)
        // The resolver was there to answer: a query from the host reaches it.
        let answer = try Command.run(["ip", "netns", "exec", topology.host.name, "getent", "ahostsv6", "ipv4only.arpa"])
        XCTAssertEqual(answer.status, 0, answer.stderr)
        XCTAssertEqual(queries(), 1, "the host's own query was seen")
    }
}
