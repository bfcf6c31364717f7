import Foundation
import Glibc
import ReachClient
import ReachProtocol
import ReachabilityCore
import TestSupport
import XCTest

/// The edge cases users of GLib, NetworkManager and Tailscale have been bitten by, each on
/// a real kernel in private namespaces.
final class EdgeCaseIntegrationTests: DaemonTestCase {
    func testLinkLocalOnlyIsNotSatisfiedButListed() async throws {
        try topology.host.ip("addr", "add", "169.254.7.2/16", "dev", "eth0")
        try topology.host.ip("route", "add", "default", "dev", "eth0")
        let (_, client) = try startDaemon()
        let path = try await client.status().path
        XCTAssertEqual(path.status, .unsatisfied)
        XCTAssertEqual(path.unsatisfiedReason, .noAddress)
        XCTAssertEqual(path.connectivity, .local)
        let eth0 = try await interface("eth0", from: client)
        let address = try XCTUnwrap(eth0?.addresses.first { $0.address == "169.254.7.2" })
        XCTAssertFalse(address.usable)
    }

    func testTentativeIPv6CountsOnlyOnceDADCompletes() async throws {
        try topology.host.exec(["sysctl", "-qw", "net.ipv6.conf.eth0.optimistic_dad=0"])
        let (_, client) = try startDaemon()
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "no IPv6 yet") { $0.status == .unsatisfied }
        try topology.host.ip("-6", "addr", "add", "fd77::2/64", "dev", "eth0")  // DAD runs (~1 s)
        try topology.host.ip("-6", "route", "add", "default", "via", "fd77::1", "dev", "eth0")
        _ = await expectPath(recorder, "tentative address does not count") { $0.unsatisfiedReason == .noAddress }
        let ready = await expectPath(recorder, "DAD completed", timeout: 8) { $0.status == .satisfied }
        XCTAssertEqual(ready?.supportsIPv6, true)
    }

    func testDADFailedAddressNeverCounts() async throws {
        try topology.router.ip("-6", "addr", "add", "fd78::5/64", "dev", "eth0", "nodad")
        let (_, client) = try startDaemon()
        try topology.host.ip("-6", "addr", "add", "fd78::5/64", "dev", "eth0")  // duplicate of the router's
        try topology.host.ip("-6", "route", "add", "default", "via", "fd78::1", "dev", "eth0")
        var listed: InterfaceDescription.Address?
        for _ in 0..<100 where listed?.dadFailed != true {
            listed = try await interface("eth0", from: client)?.addresses.first { $0.address == "fd78::5" }
            try await Task.sleep(for: .milliseconds(50))
        }
        XCTAssertEqual(listed?.dadFailed, true, "the kernel flags the duplicate dadfailed")
        XCTAssertEqual(listed?.usable, false)
        let path = try await client.status().path
        XCTAssertEqual(path.status, .unsatisfied)
        XCTAssertEqual(path.unsatisfiedReason, .noAddress)
    }

    func testIPv6DefaultViaLinkLocalGateway() async throws {
        try topology.configureIPv6(defaultRoute: false)
        try topology.host.ip("-6", "route", "add", "default", "via", "fe80::1", "dev", "eth0")
        let (_, client) = try startDaemon()
        let path = try await client.status().path
        XCTAssertEqual(path.status, .satisfied)
        XCTAssertEqual(path.gateways, ["fe80::1"])
        XCTAssertEqual(path.primaryInterface, "eth0")
    }

    func testMultipathDefaultListsEveryGateway() async throws {
        try topology.configureIPv4(defaultRoute: false)
        try topology.addPair(hostName: "eth1", routerName: "eth1", prefix: "10.78.0")
        try topology.host.ip("route", "add", "default", "nexthop", "via", "10.77.0.1", "dev", "eth0",
                             "nexthop", "via", "10.78.0.1", "dev", "eth1")
        let (_, client) = try startDaemon()
        let path = try await client.status().path
        XCTAssertEqual(path.status, .satisfied)
        XCTAssertEqual(Set(path.gateways), ["10.77.0.1", "10.78.0.1"])
        XCTAssertEqual(Set(path.availableInterfaces), ["eth0", "eth1"])
    }

    func testLowerMetricIsPrimaryAndTheOtherTakesOver() async throws {
        try topology.configureIPv4(defaultRoute: false)
        try topology.addPair(hostName: "eth1", routerName: "eth1", prefix: "10.78.0")
        try topology.host.ip("route", "add", "default", "via", "10.78.0.1", "dev", "eth1", "metric", "200")
        try topology.host.ip("route", "add", "default", "via", "10.77.0.1", "dev", "eth0", "metric", "100")
        let (_, client) = try startDaemon()
        let recorder = PathRecorder(client: client)
        let first = await expectPath(recorder, "lower metric primary") { $0.status == .satisfied }
        XCTAssertEqual(first?.primaryInterface, "eth0")
        XCTAssertEqual(first?.availableInterfaces, ["eth0", "eth1"])
        XCTAssertEqual(first?.gateways, ["10.77.0.1"])

        try topology.host.ip("link", "set", "eth0", "down")  // IPv4 routes flushed, no RTM_DELROUTE
        let takeover = await expectPath(recorder, "higher metric takes over") { $0.primaryInterface == "eth1" }
        XCTAssertEqual(takeover?.status, .satisfied)
        XCTAssertEqual(takeover?.gateways, ["10.78.0.1"])
        XCTAssertEqual(takeover?.availableInterfaces, ["eth1"])
    }

    func testCarrierLossFailsOverWhenTheKernelIgnoresLinkdownRoutes() async throws {
        try topology.host.exec(["sysctl", "-qw", "net.ipv4.conf.all.ignore_routes_with_linkdown=1"])
        try topology.configureIPv4(defaultRoute: false)
        try topology.addPair(hostName: "eth1", routerName: "eth1", prefix: "10.78.0")
        try topology.host.ip("route", "add", "default", "via", "10.77.0.1", "dev", "eth0", "metric", "100")
        try topology.host.ip("route", "add", "default", "via", "10.78.0.1", "dev", "eth1", "metric", "200")
        let (_, client) = try startDaemon()
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "eth0 primary") { $0.primaryInterface == "eth0" }
        try topology.router.ip("link", "set", "eth0", "down")  // carrier lost, route kept linkdown
        let failover = await expectPath(recorder, "kernel now routes via eth1") { $0.primaryInterface == "eth1" }
        XCTAssertEqual(failover?.status, .satisfied)
    }

    func testInterfaceRenamed() async throws {
        try topology.configureIPv4()
        let (_, client) = try startDaemon()
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "eth0 primary") { $0.primaryInterface == "eth0" }
        try topology.host.ip("link", "set", "eth0", "down")
        try topology.host.ip("link", "set", "eth0", "name", "wan0")
        try topology.host.ip("link", "set", "wan0", "up")
        try topology.host.ip("route", "add", "default", "via", "10.77.0.1", "dev", "wan0")
        _ = await expectPath(recorder, "renamed primary") { $0.primaryInterface == "wan0" && $0.status == .satisfied }
        let names = try await client.interfaces().map(\.name)
        XCTAssertTrue(names.contains("wan0"))
        XCTAssertFalse(names.contains("eth0"))
    }

    func testInterfaceMovedToAnotherNamespace() async throws {
        try topology.configureIPv4()
        let elsewhere = try NetworkNamespace(prefix: "reachd-away")
        let (_, client) = try startDaemon()
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "eth0 primary") { $0.primaryInterface == "eth0" }
        try topology.host.ip("link", "set", "eth0", "netns", elsewhere.name)
        // Route and link removal may arrive in separate batches; the final answer counts.
        let gone = await expectPath(recorder, "moved away") { $0.unsatisfiedReason == .noInterface }
        XCTAssertEqual(gone?.status, .unsatisfied)
        let names = try await client.interfaces().map(\.name)
        XCTAssertEqual(names, ["lo"])
    }

    func testUnreachableAndProhibitDefaultsHaveTheirReasons() async throws {
        let cases: [(command: [String], reason: UnsatisfiedReason)] = [
            (["route", "add", "unreachable", "default"], .unreachableRoute),
            (["route", "add", "prohibit", "default"], .prohibitedRoute),
            (["-6", "route", "add", "unreachable", "default"], .unreachableRoute),
            (["-6", "route", "add", "prohibit", "default"], .prohibitedRoute),
            (["-6", "route", "add", "blackhole", "default"], .blackholeRoute),
        ]
        let (_, client) = try startDaemon()
        let recorder = PathRecorder(client: client)
        for (command, reason) in cases {
            try topology.host.ip(command)
            let path = await expectPath(recorder, command.joined(separator: " ")) { $0.unsatisfiedReason == reason }
            XCTAssertEqual(path?.status, .unsatisfied)
            try topology.host.ip(command.map { $0 == "add" ? "del" : $0 })
            _ = await expectPath(recorder, "after removing \(command)") { $0.unsatisfiedReason == .noInterface || $0.unsatisfiedReason == .noRoute }
        }
    }

    func testDormantInterfaceRequiresConnection() async throws {
        try topology.configureIPv4(defaultRoute: false)
        let (_, client) = try startDaemon()
        let recorder = PathRecorder(client: client)
        // With link mode dormant the kernel brings the link up as DORMANT (what an 802.1X
        // supplicant sees before it authorises the port); admin down/up applies it, and
        // flushes IPv4 routes, so the default goes in afterwards.
        try topology.host.ip("link", "set", "eth0", "mode", "dormant")
        try topology.host.ip("link", "set", "eth0", "down")
        try topology.host.ip("link", "set", "eth0", "up")
        try topology.host.ip("route", "add", "default", "via", "10.77.0.1", "dev", "eth0")
        let dormant = await expectPath(recorder, "dormant") { $0.status == .requiresConnection }
        XCTAssertEqual(dormant?.unsatisfiedReason, .connectionRequired)
        XCTAssertEqual(dormant?.flags.contains(.reachable), true)
        XCTAssertEqual(dormant?.flags.contains(.connectionRequired), true)
        XCTAssertEqual(dormant?.reachability, .notReachable)
        XCTAssertEqual(dormant?.primaryInterface, "eth0")
        let listed = try await interface("eth0", from: client)
        XCTAssertEqual(listed?.operState, "DORMANT")

        try topology.host.ip("link", "set", "eth0", "mode", "default")
        try topology.host.ip("link", "set", "eth0", "down")
        try topology.host.ip("link", "set", "eth0", "up")
        try topology.host.ip("route", "add", "default", "via", "10.77.0.1", "dev", "eth0")
        _ = await expectPath(recorder, "authorised") { $0.status == .satisfied }
    }

    func testIgnoredVethIsListedButNeverPrimary() async throws {
        try topology.configureIPv4(defaultRoute: false)
        try topology.addPair(hostName: "veth9", routerName: "veth9r", prefix: "10.79.0")
        // The ignored veth even has the better metric: the answer must not use it.
        try topology.host.ip("route", "add", "default", "via", "10.79.0.1", "dev", "veth9", "metric", "50")
        try topology.host.ip("route", "add", "default", "via", "10.77.0.1", "dev", "eth0", "metric", "100")
        let (_, client) = try startDaemon()
        let path = try await client.status().path
        XCTAssertEqual(path.primaryInterface, "eth0")
        XCTAssertFalse(path.availableInterfaces.contains("veth9"))
        let veth = try await interface("veth9", from: client)
        XCTAssertEqual(veth?.ignored, true)
        XCTAssertEqual(veth?.kind, "veth")
    }

    func testChurnThatAltersNothingPublishesNothing() async throws {
        try topology.configureIPv4()
        try topology.addPair(hostName: "veth9", routerName: "veth9r", prefix: "10.79.0")
        let (_, client) = try startDaemon()
        let recorder = PathRecorder(client: client)
        let first = await expectPath(recorder, "satisfied") { $0.status == .satisfied }
        XCTAssertNotNil(first)
        try topology.host.ip("link", "set", "eth0", "mtu", "1400")
        try topology.host.ip("addr", "add", "10.79.0.77/24", "dev", "veth9")   // ignored interface
        try topology.host.ip("addr", "del", "10.79.0.77/24", "dev", "veth9")
        try topology.host.ip("route", "add", "192.0.2.0/24", "via", "10.77.0.1")  // not a default
        try topology.host.ip("neigh", "add", "10.77.0.9", "lladdr", "02:00:00:00:00:09", "dev", "eth0")
        try await Task.sleep(for: .milliseconds(500))
        XCTAssertEqual(recorder.replies.count, 1, "nothing in the answer changed: \(recorder.replies.map(\.path.summary))")
        let status = try await client.status()
        XCTAssertEqual(status.sequence, recorder.replies.first?.sequence)
    }

    func testResolverChangesFlipSupportsDNS() async throws {
        try topology.configureIPv4()
        let (daemon, client) = try startDaemon()
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "DNS configured") { $0.supportsDNS }
        try "# no servers\n".write(toFile: daemon.resolvConf, atomically: true, encoding: .utf8)  // rename into place
        _ = await expectPath(recorder, "DNS removed") { $0.status == .satisfied && !$0.supportsDNS }
        try "nameserver 192.0.2.53\n".write(toFile: daemon.resolvConf, atomically: false, encoding: .utf8)  // in place
        _ = await expectPath(recorder, "DNS back") { $0.supportsDNS }
    }

    /// /etc/resolv.conf as a symlink that NetworkManager or resolved re-point at another
    /// directory, including one that did not exist when reachd started, and a dangling link.
    func testResolvConfSymlinkRetargetsAreFollowed() async throws {
        try topology.configureIPv4()
        let base = try temporaryDirectory("reachd-resolv-link")
        let link = base + "/etc/resolv.conf"
        try FileManager.default.createDirectory(atPath: base + "/etc", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: base + "/run/first", withIntermediateDirectories: true)
        try "# no servers yet\n".write(toFile: base + "/run/first/resolv.conf", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: base + "/run/first/resolv.conf")
        let (_, client) = try startDaemon(extraArguments: ["--resolv-conf", link])
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "no server in the first target") { $0.status == .satisfied && !$0.supportsDNS }

        // Re-point the link (by rename, as the managers do) into a directory made after start,
        // then write a server there.
        try FileManager.default.createDirectory(atPath: base + "/run/second", withIntermediateDirectories: true)
        try "# empty for now\n".write(toFile: base + "/run/second/resolv.conf", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: link + ".new", withDestinationPath: base + "/run/second/resolv.conf")
        _ = rename(link + ".new", link)
        try "nameserver 192.0.2.53\n".write(toFile: base + "/run/second/resolv.conf", atomically: true, encoding: .utf8)
        _ = await expectPath(recorder, "the new target's server") { $0.supportsDNS }

        // A dangling link means no DNS configured.
        try FileManager.default.removeItem(atPath: base + "/run/second/resolv.conf")
        _ = await expectPath(recorder, "the link dangles") { $0.status == .satisfied && !$0.supportsDNS }
    }

    func testResolvedStubCountsOnlyWithUpstreamServers() async throws {
        try topology.configureIPv4()
        // resolv.conf names only the systemd-resolved stub; resolved's own list lives in
        // another directory, which reachd watches too.
        let upstream = try temporaryDirectory("reachd-resolved") + "/resolv.conf"
        try "# No DNS servers known.\n".write(toFile: upstream, atomically: true, encoding: .utf8)
        let (daemon, client) = try startDaemon(extraArguments: ["--resolved-upstream", upstream])
        try "nameserver 127.0.0.53\noptions edns0 trust-ad\n".write(toFile: daemon.resolvConf, atomically: true, encoding: .utf8)
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "stub without upstream servers") { $0.status == .satisfied && !$0.supportsDNS }
        try "nameserver 192.0.2.1\n".write(toFile: upstream, atomically: true, encoding: .utf8)
        _ = await expectPath(recorder, "resolved learned a server") { $0.supportsDNS }
    }

    func testFilteredSubscriberIsNotWokenByChangesElsewhere() async throws {
        try topology.configureIPv4()
        let (_, client) = try startDaemon()
        let everything = PathRecorder(client: client)
        let noWired = PathRecorder(client: client, filter: PathFilter(prohibitedInterfaceTypes: [.wiredEthernet]))
        let wifiOnly = PathRecorder(client: client, filter: PathFilter(requiredInterfaceType: .wifi))
        _ = await expectPath(everything, "wired primary") { $0.primaryInterface == "eth0" }
        let filtered = await expectPath(noWired, "no wired allowed") { $0.status == .unsatisfied }
        XCTAssertNil(filtered?.primaryInterface)
        _ = await expectPath(wifiOnly, "wifi required") { $0.status == .unsatisfied }

        try topology.host.ip("route", "del", "default")
        _ = await expectPath(everything, "route gone") { $0.status == .unsatisfied }
        try await Task.sleep(for: .milliseconds(300))
        XCTAssertEqual(noWired.replies.count, 1, "a wired change is none of this subscriber's business")
        XCTAssertEqual(wifiOnly.replies.count, 1)
    }

    /// A big routing table is read after the first answer when nothing in it can change
    /// that answer (ProvisionalAnswer.swift); a filtered subscriber whose answer does need
    /// the rest is answered once it is read, never before.
    func testFirstAnswerComesBeforeABigRoutingTableIsRead() async throws {
        try topology.configureIPv4(defaultRoute: false)
        try topology.addPair(hostName: "eth1", routerName: "eth1", prefix: "10.78.0")
        try topology.host.ip("route", "add", "default", "via", "10.77.0.1", "dev", "eth0", "metric", "100")
        try topology.host.ip("route", "add", "default", "via", "10.78.0.1", "dev", "eth1", "metric", "200")
        // 200,000 host routes in the benchmark range: a route dump of some 70 ms here.
        try topology.host.ipBatch((0..<200_000).map { "route add 198.\(18 + $0 >> 16).\($0 >> 8 & 255).\($0 & 255)/32 via 10.77.0.1" })
        let config = try Paths.makeTemporaryDirectory("reachd-cold") + "/reachd.toml"
        try "[[interfaces.override]]\nmatch = \"eth1\"\ntype = \"cellular\"\n".write(toFile: config, atomically: true, encoding: .utf8)

        let (daemon, client) = try startDaemon(extraArguments: ["--config", config])
        XCTAssertTrue(daemon.log.contains("the first answer needs no ipv4 routes besides the ones the lookups matched"),
                      "READY=1 came before the route dump")
        let noWired = PathRecorder(client: client, filter: PathFilter(prohibitedInterfaceTypes: [.wiredEthernet]))
        let cellular = await expectPath(noWired, "the cellular default") { _ in true }
        XCTAssertEqual(cellular?.status, .satisfied)
        XCTAssertEqual(cellular?.primaryInterface, "eth1", "the fallback needs the default through eth1, read after READY=1")
        XCTAssertEqual(noWired.replies.first?.path.primaryInterface, "eth1", "no first reply from before the routes were read")

        let path = try await client.status().path
        XCTAssertEqual(path.status, .satisfied)
        XCTAssertEqual(path.primaryInterface, "eth0")
        XCTAssertEqual(path.gateways, ["10.77.0.1"])
        XCTAssertEqual(path.availableInterfaces, ["eth0", "eth1"])
        let deadline = Date().addingTimeInterval(10)
        while !daemon.log.contains("the remaining routes are read"), Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        XCTAssertTrue(daemon.log.contains("the remaining routes are read"))
        XCTAssertFalse(daemon.log.contains("resynchronis"), "finishing the start is no resync")
    }

    func testStateRightAtReady() async throws {
        try topology.configureIPv4(defaultRoute: false)
        try topology.configureIPv6()
        try topology.host.ip("route", "add", "blackhole", "default")
        let (_, client) = try startDaemon()
        let path = try await client.status().path  // the first query after READY=1
        XCTAssertEqual(path.status, .satisfied)
        XCTAssertFalse(path.supportsIPv4, "IPv4 default is a blackhole")
        XCTAssertTrue(path.supportsIPv6)
    }
}

/// Each published change says what changed, so an app can decide whether to reconnect.
final class ChangeDetailIntegrationTests: DaemonTestCase {
    func testEachReplySaysWhatChanged() async throws {
        try topology.configureIPv4()
        let (_, client) = try startDaemon()
        let recorder = PathRecorder(client: client)
        _ = await expectPath(recorder, "initial") { $0.status == .satisfied }
        XCTAssertEqual(recorder.replies.first?.changes, [], "the first reply is the state, not a change")

        // A second address on the primary: the path's fields stay, the addresses changed.
        try topology.host.ip("addr", "add", "10.77.0.3/24", "dev", "eth0")
        let deadline = Date().addingTimeInterval(5)
        while recorder.replies.count < 2 && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        XCTAssertEqual(recorder.replies.last?.changes, [.addresses])

        try topology.host.ip("route", "del", "default")
        _ = await expectPath(recorder, "offline") { $0.status == .unsatisfied }
        let changes = try XCTUnwrap(recorder.replies.last?.changes)
        for expected: PathChange in [.status, .reachability, .primaryInterface, .gateways, .ipv4, .addresses] {
            XCTAssertTrue(changes.contains(expected), "\(expected) missing from \(changes)")
        }
        let sequences = recorder.replies.map(\.sequence)
        XCTAssertEqual(sequences, Array(sequences[0]..<(sequences[0] + sequences.count)), "one sequence step per published change")
    }
}
