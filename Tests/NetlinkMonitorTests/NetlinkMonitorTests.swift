// Over 500 lines because it is one class of real-kernel cases sharing its namespace and
// helpers: each drives a NetlinkMonitor on a thread inside a fresh network namespace.

import CNetlink
import Foundation
import Glibc
import NetlinkMonitor
import ReachabilityCore
import TestSupport
import XCTest

/// Real-kernel tests: each test gets its own network namespace; the monitor is
/// created and driven on a thread inside it.
final class NetlinkMonitorTests: XCTestCase {
    private var ns: NetworkNamespace!

    override func setUpWithError() throws {
        try requireRoot()
        ns = try NetworkNamespace(prefix: "reachd-nm", loopbackUp: false)
    }

    override func tearDown() {
        ns = nil
    }

    // MARK: Helpers

    /// lo up, and a veth pair va <-> vb, both up, with 10.0.0.1/24 and 2001:db8::1/64 on va.
    private func addVethPair() throws {
        try ns.ip("link", "set", "lo", "up")
        try ns.ip("link", "add", "va", "type", "veth", "peer", "name", "vb")
        try ns.ip("link", "set", "va", "up")
        try ns.ip("link", "set", "vb", "up")
        try ns.ip("addr", "add", "10.0.0.1/24", "dev", "va")
        try ns.ip("-6", "addr", "add", "2001:db8::1/64", "dev", "va", "nodad")
    }

    /// Creates and starts a monitor on the namespace thread and runs `body` there.
    private func withMonitor(
        receiveBufferSize: Int = 8 << 20, sysfsRoot: String = "/sys",
        _ body: @escaping (NetlinkMonitor) throws -> Void
    ) throws {
        try ns.inside {
            let monitor = try NetlinkMonitor(sysfsRoot: sysfsRoot, receiveBufferSize: receiveBufferSize)
            try monitor.start()
            try body(monitor)
        }
    }

    private static let v4Target = IPAddress("8.8.8.8")!
    private static let v6Target = IPAddress("2001:4860:4860::8888")!

    // MARK: Tests

    func testADeferredStartKnowsTheMatchedDefaultsThenReadsTheRest() throws {
        try addVethPair()
        try ns.ip("route", "add", "default", "nexthop", "via", "10.0.0.2", "nexthop", "via", "10.0.0.3")
        try ns.ip("route", "add", "default", "via", "10.0.0.4", "metric", "500")
        try ns.ip("route", "add", "default", "via", "10.0.0.5", "table", "100")
        try ns.ip("-6", "route", "add", "default", "via", "2001:db8::2")
        try ns.ip("route", "add", "192.0.2.0/24", "via", "10.0.0.2")
        try ns.inside {
            let monitor = try NetlinkMonitor()
            try monitor.start(deferringRoutes: true)
            let early = monitor.snapshot()
            XCTAssertEqual(early.pendingRouteFamilies, [.ipv4, .ipv6])
            XCTAssertNotNil(early.link(named: "va"), "links and addresses are read at once")
            let v4 = early.defaultRoutes.filter { $0.family == .ipv4 }
            XCTAssertEqual(v4.count, 1, "only the route the lookup matched: \(v4)")
            XCTAssertEqual(Set(v4.first?.nextHops.compactMap(\.gateway) ?? []), [IPAddress("10.0.0.2")!, IPAddress("10.0.0.3")!],
                           "RTM_F_FIB_MATCH names every next hop of the multipath default")
            XCTAssertEqual(v4.first?.table, 254)
            XCTAssertEqual(early.defaultRoutes.filter { $0.family == .ipv6 }.flatMap(\.nextHops).map(\.gateway), [IPAddress("2001:db8::2")!])

            try monitor.readRoutes(of: [.ipv6])
            XCTAssertEqual(monitor.snapshot().pendingRouteFamilies, [.ipv4])

            try monitor.finishStart()
            let complete = monitor.snapshot()
            XCTAssertEqual(complete.pendingRouteFamilies, [])
            XCTAssertEqual(Set(complete.defaultRoutes.filter { $0.family == .ipv4 }.map(\.metric)), [0, 500])
            XCTAssertEqual(complete.defaultRoutes.filter { $0.family == .ipv4 }.map(\.table).sorted(), [100, 254, 254])
            XCTAssertEqual(complete.lookups, early.lookups)
            XCTAssertEqual(monitor.resyncCount, 0, "finishing a start is no resync")
        }
    }

    func testEventsLostBeforeADeferredStartFinishesAreReported() throws {
        try addVethPair()
        try ns.ip("route", "add", "default", "via", "10.0.0.2")
        try ns.inside { [ns = ns!] in
            let monitor = try NetlinkMonitor(receiveBufferSize: 65536)
            try monitor.start(deferringRoutes: true)
            // The answer is out; 2,000 events about 8.8.8.8 (one per table) pass the route
            // filter and overflow the 64 KiB buffer before the rest of the routes are read.
            try ns.ipBatch((0..<2_000).map { "route add 8.8.8.8/32 via 10.0.0.2 table \(1000 + $0)" })
            let outcome = try monitor.finishStart()
            XCTAssertTrue(outcome.resynchronizedAfterLostEvents, "lost events after the answer are reported, as drain() reports them")
            XCTAssertEqual(monitor.resyncCount, 1)
            XCTAssertEqual(monitor.snapshot().pendingRouteFamilies, [])
            XCTAssertEqual(monitor.snapshot().defaultRoutes.filter { $0.family == .ipv4 }.count, 1)
        }
    }

    func testInitialDumpSeesLoopbackAndVethWithAddresses() throws {
        try addVethPair()
        try withMonitor { monitor in
            let snapshot = monitor.snapshot()
            let lo = try XCTUnwrap(snapshot.links[1])
            XCTAssertEqual(lo.name, "lo")
            XCTAssertTrue(lo.flags.contains(.loopback))
            XCTAssertEqual(lo.hardwareType, ARPHardwareType.loopback)
            let va = try XCTUnwrap(snapshot.link(named: "va"))
            let vb = try XCTUnwrap(snapshot.link(named: "vb"))
            XCTAssertEqual(va.kind, "veth")
            XCTAssertEqual(va.hardwareType, ARPHardwareType.ether)
            XCTAssertTrue(va.isUp)
            XCTAssertTrue(va.carrier)
            XCTAssertEqual(va.operState, .up)
            XCTAssertTrue(vb.isUp)
            let addresses = snapshot.addresses(of: va.index)
            XCTAssertTrue(addresses.contains { $0.address == IPAddress("10.0.0.1") && $0.prefixLength == 24 && $0.scope == .global })
            XCTAssertTrue(addresses.contains { $0.address == IPAddress("2001:db8::1") && $0.prefixLength == 64 })
            XCTAssertTrue(snapshot.addresses(of: 1).contains { $0.address == IPAddress("127.0.0.1") && $0.scope == .host })
            XCTAssertTrue(snapshot.defaultRoutes.isEmpty)
            XCTAssertFalse(snapshot.hasNameserver)
            // Device facts of a veth in /sys of another namespace: simply empty.
            XCTAssertFalse(va.device.isWireless)
        }
    }

    func testDefaultRouteViaVethIsTrackedAndLookedUp() throws {
        try addVethPair()
        try ns.ip("route", "add", "default", "via", "10.0.0.2")
        try withMonitor { [ns = ns!] monitor in
            let va = try XCTUnwrap(monitor.snapshot().link(named: "va"))
            var snapshot = monitor.snapshot()
            XCTAssertEqual(snapshot.defaults(.ipv4), [DefaultRoute(
                family: .ipv4, table: 254, type: .unicast, metric: 0,
                nextHops: [NextHop(interfaceIndex: va.index, gateway: IPAddress("10.0.0.2"))]
            )])
            XCTAssertEqual(snapshot.lookups[.ipv4], .route(RouteLookupResult(
                type: .unicast, outputInterface: va.index, gateway: IPAddress("10.0.0.2"),
                preferredSource: IPAddress("10.0.0.1"), isLinkDown: false, table: 254
            )))
            // Added after start: arrives as an event.
            try ns.ip("-6", "route", "add", "default", "via", "2001:db8::2", "metric", "100")
            snapshot = try waitFor(monitor, "IPv6 default") { !$0.defaults(.ipv6).isEmpty }
            XCTAssertEqual(snapshot.defaults(.ipv6), [DefaultRoute(
                family: .ipv6, table: 254, type: .unicast, metric: 100,
                nextHops: [NextHop(interfaceIndex: va.index, gateway: IPAddress("2001:db8::2"))]
            )])
            guard case .route(let result) = monitor.lookup(Self.v6Target) else {
                return XCTFail("IPv6 lookup failed: \(monitor.lookup(Self.v6Target))")
            }
            XCTAssertEqual(result.outputInterface, va.index)
            XCTAssertEqual(result.gateway, IPAddress("2001:db8::2"))
            XCTAssertEqual(result.preferredSource, IPAddress("2001:db8::1"))
            // And gone again on RTM_DELROUTE.
            try ns.ip("route", "del", "default")
            try ns.ip("-6", "route", "del", "default")
            snapshot = try waitFor(monitor, "defaults removed") { $0.defaultRoutes.isEmpty }
            XCTAssertEqual(snapshot.lookups[.ipv4], .failure(.noRoute))
        }
    }

    func testDefaultOnlyInTable100SelectedByRule() throws {
        try addVethPair()
        try withMonitor { [ns = ns!] monitor in
            XCTAssertEqual(monitor.lookup(Self.v4Target), .failure(.noRoute))
            try ns.ip("route", "add", "default", "via", "10.0.0.2", "table", "100")
            try ns.ip("-6", "route", "add", "default", "via", "2001:db8::2", "table", "100")
            var snapshot = try waitFor(monitor, "table 100 defaults") { $0.defaultRoutes.count == 2 }
            XCTAssertTrue(snapshot.defaultRoutes.allSatisfy { $0.table == 100 })
            // Without a rule, table 100 is not consulted.
            XCTAssertEqual(snapshot.lookups[.ipv4], .failure(.noRoute))
            XCTAssertEqual(snapshot.lookups[.ipv6], .failure(.noRoute))
            try ns.ip("rule", "add", "from", "all", "lookup", "100")
            try ns.ip("-6", "rule", "add", "from", "all", "lookup", "100")
            XCTAssertTrue(try drainUntilQuiet(monitor).changed, "rule events report a change")
            snapshot = monitor.snapshot()
            let va = try XCTUnwrap(snapshot.link(named: "va"))
            guard case .route(let v4) = snapshot.lookups[.ipv4], case .route(let v6) = snapshot.lookups[.ipv6] else {
                return XCTFail("lookups failed: \(snapshot.lookups)")
            }
            XCTAssertEqual(v4.table, 100)
            XCTAssertEqual(v4.outputInterface, va.index)
            XCTAssertEqual(v4.gateway, IPAddress("10.0.0.2"))
            XCTAssertEqual(v6.table, 100)
            XCTAssertEqual(v6.gateway, IPAddress("2001:db8::2"))
        }
    }

    func testRejectDefaultsMapToFailures() throws {
        try addVethPair()
        try withMonitor { [ns = ns!] monitor in
            let cases: [(String, RouteType, RouteLookupFailure)] = [
                ("blackhole", .blackhole, .blackholeRoute),
                ("unreachable", .unreachable, .unreachableRoute),
                ("prohibit", .prohibit, .prohibitedRoute),
            ]
            for (keyword, type, failure) in cases {
                try ns.ip("route", "replace", keyword, "default")
                try ns.ip("-6", "route", "replace", keyword, "default")
                let snapshot = try waitFor(monitor, "\(keyword) defaults") {
                    $0.defaults(.ipv4).map(\.type) == [type] && $0.defaults(.ipv6).map(\.type) == [type]
                }
                XCTAssertEqual(snapshot.lookups[.ipv4], .failure(failure), keyword)
                XCTAssertEqual(snapshot.lookups[.ipv6], .failure(failure), keyword)
            }
            try ns.ip("route", "del", "default")
            try ns.ip("-6", "route", "del", "default")
            let snapshot = try waitFor(monitor, "no defaults") { $0.defaultRoutes.isEmpty }
            XCTAssertEqual(snapshot.lookups[.ipv4], .failure(.noRoute))
            XCTAssertEqual(snapshot.lookups[.ipv6], .failure(.noRoute))
        }
    }

    func testNoRouteAtAll() throws {
        try withMonitor { monitor in
            let snapshot = monitor.snapshot()
            XCTAssertEqual(snapshot.lookups[.ipv4], .failure(.noRoute))
            XCTAssertEqual(snapshot.lookups[.ipv6], .failure(.noRoute))
            XCTAssertEqual(monitor.lookup(IPAddress("127.0.0.1")!), .failure(.noRoute), "lo is down in a fresh namespace")
        }
    }

    func testLocalAddressLooksUpAsLocal() throws {
        try addVethPair()
        try withMonitor { monitor in
            guard case .route(let result) = monitor.lookup(IPAddress("10.0.0.1")!) else {
                return XCTFail("lookup of own address failed")
            }
            XCTAssertEqual(result.type, .local)
            // Without custom rules the kernel merges local into main and reports 254.
            XCTAssertNotNil(result.table)
            XCTAssertEqual(result.outputInterface, 1, "own addresses go out via lo")
        }
    }

    func testPeerDownMarksLinkDown() throws {
        try addVethPair()
        try ns.ip("route", "add", "default", "via", "10.0.0.2")
        try ns.ip("-6", "route", "add", "default", "via", "2001:db8::2")
        try withMonitor { [ns = ns!] monitor in
            try ns.ip("link", "set", "vb", "down")
            let snapshot = try waitFor(monitor, "va loses carrier") { $0.link(named: "va")?.carrier == false }
            let va = try XCTUnwrap(snapshot.link(named: "va"))
            XCTAssertTrue(va.isUp)
            XCTAssertEqual(va.operState, .lowerLayerDown)
            for family in AddressFamily.allCases {
                let route = try XCTUnwrap(snapshot.defaults(family).first, "\(family) default survives carrier loss")
                XCTAssertEqual(route.nextHops.map(\.isLinkDown), [true])
                guard case .route(let result) = snapshot.lookups[family] else {
                    return XCTFail("\(family) lookup fails on a linkdown route: \(String(describing: snapshot.lookups[family]))")
                }
                XCTAssertEqual(result.outputInterface, va.index)
                XCTAssertTrue(result.isLinkDown, "\(family)")
            }
            try ns.ip("link", "set", "vb", "up")
            let back = try waitFor(monitor, "carrier back") { $0.link(named: "va")?.carrier == true }
            XCTAssertEqual(back.defaultRoutes.flatMap(\.nextHops).map(\.isLinkDown), [false, false])
        }
    }

    func testAdminDownDropsIPv4Default() throws {
        try addVethPair()
        try ns.ip("route", "add", "default", "via", "10.0.0.2")
        try withMonitor { [ns = ns!] monitor in
            XCTAssertEqual(monitor.snapshot().defaults(.ipv4).count, 1)
            try ns.ip("link", "set", "va", "down")
            let snapshot = try waitFor(monitor, "va down") { $0.link(named: "va")?.isUp == false }
            XCTAssertEqual(snapshot.defaults(.ipv4), [], "the kernel flushed it without RTM_DELROUTE")
            XCTAssertEqual(snapshot.lookups[.ipv4], .failure(.noRoute))
            // A fresh dump agrees.
            try monitor.start()
            XCTAssertEqual(monitor.snapshot().defaults(.ipv4), [])
        }
    }

    func testRemovingLastIPv4AddressDropsIPv4Default() throws {
        try addVethPair()
        try ns.ip("route", "add", "default", "via", "10.0.0.2")
        try withMonitor { [ns = ns!] monitor in
            try ns.ip("addr", "del", "10.0.0.1/24", "dev", "va")
            let snapshot = try waitFor(monitor, "address gone") { !$0.addresses.contains { $0.address == IPAddress("10.0.0.1") } }
            XCTAssertEqual(snapshot.defaults(.ipv4), [])
            XCTAssertEqual(snapshot.lookups[.ipv4], .failure(.noRoute))
        }
    }

    func testAddressAddAndDeleteAfterDrain() throws {
        try addVethPair()
        try withMonitor { [ns = ns!] monitor in
            let va = try XCTUnwrap(monitor.snapshot().link(named: "va"))
            try ns.ip("addr", "add", "192.0.2.7/28", "dev", "va")
            try ns.ip("-6", "addr", "add", "2001:db8:1::7/64", "dev", "va")  // with DAD: tentative first
            var snapshot = try waitFor(monitor, "addresses added") { snapshot in
                snapshot.addresses(of: va.index).contains { $0.address == IPAddress("192.0.2.7") && $0.prefixLength == 28 }
                    && snapshot.addresses(of: va.index).contains { $0.address == IPAddress("2001:db8:1::7") }
            }
            let added = try XCTUnwrap(snapshot.addresses.first { $0.address == IPAddress("2001:db8:1::7") })
            XCTAssertTrue(added.flags.contains(.tentative) || added.flags.contains(.permanent), "\(added.flags)")
            // Point-to-point style: IFA_LOCAL is ours, IFA_ADDRESS the peer.
            try ns.ip("addr", "add", "198.51.100.1", "peer", "198.51.100.2", "dev", "va")
            snapshot = try waitFor(monitor, "peer address") { $0.addresses.contains { $0.address == IPAddress("198.51.100.1") } }
            XCTAssertFalse(snapshot.addresses.contains { $0.address == IPAddress("198.51.100.2") })
            try ns.ip("addr", "del", "192.0.2.7/28", "dev", "va")
            try ns.ip("-6", "addr", "del", "2001:db8:1::7/64", "dev", "va")
            snapshot = try waitFor(monitor, "addresses removed") { snapshot in
                !snapshot.addresses.contains { $0.address == IPAddress("192.0.2.7") || $0.address == IPAddress("2001:db8:1::7") }
            }
            XCTAssertTrue(snapshot.addresses.contains { $0.address == IPAddress("10.0.0.1") })
        }
    }

    func testLinkRenameAndDeletion() throws {
        try addVethPair()
        try ns.ip("route", "add", "default", "via", "10.0.0.2")
        try ns.ip("-6", "route", "add", "default", "via", "2001:db8::2")
        try withMonitor { [ns = ns!] monitor in
            let index = try XCTUnwrap(monitor.snapshot().link(named: "va")).index
            try ns.ip("link", "set", "va", "down")
            try ns.ip("link", "set", "va", "name", "wan0")
            try ns.ip("link", "set", "wan0", "up")
            var snapshot = try waitFor(monitor, "renamed") { $0.links[index]?.name == "wan0" && $0.links[index]?.isUp == true }
            XCTAssertNil(snapshot.link(named: "va"))
            try ns.ip("link", "del", "wan0")
            snapshot = try waitFor(monitor, "deleted") { $0.links[index] == nil && $0.link(named: "vb") == nil }
            XCTAssertTrue(snapshot.addresses(of: index).isEmpty)
            XCTAssertTrue(snapshot.defaultRoutes.isEmpty, "\(snapshot.defaultRoutes)")
            XCTAssertEqual(Set(snapshot.links.values.map(\.name)), ["lo"])
        }
    }

    /// A datagram another process sends to the monitor's port is not the kernel speaking:
    /// a forged RTM_DELLINK must not remove a link.
    func testForgedMessagesFromAnotherSocketAreIgnored() throws {
        try addVethPair()
        try withMonitor { monitor in
            let va = try XCTUnwrap(monitor.snapshot().link(named: "va")).index
            // The monitor's port id, from its event socket's address.
            var own = sockaddr_nl()
            var length = socklen_t(MemoryLayout<sockaddr_nl>.size)
            _ = withUnsafeMutablePointer(to: &own) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(monitor.eventDescriptor.rawValue, $0, &length) }
            }
            let forger = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue), 0 /* NETLINK_ROUTE */)
            defer { close(forger) }
            // nlmsghdr (16 bytes) + ifinfomsg (16 bytes): RTM_DELLINK for va.
            var message = [UInt8](repeating: 0, count: 32)
            message.withUnsafeMutableBytes { raw in
                raw.storeBytes(of: UInt32(32), toByteOffset: 0, as: UInt32.self)
                raw.storeBytes(of: UInt16(17 /* RTM_DELLINK */), toByteOffset: 4, as: UInt16.self)
                raw.storeBytes(of: va, toByteOffset: 20, as: Int32.self)
            }
            var target = sockaddr_nl()
            target.nl_family = sa_family_t(AF_NETLINK)
            target.nl_pid = own.nl_pid
            let sent = message.withUnsafeBytes { bytes in
                withUnsafePointer(to: &target) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(forger, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_nl>.size))
                    }
                }
            }
            XCTAssertEqual(sent, 32, "as root the forged datagram is delivered")
            try drainUntilQuiet(monitor, quiet: 0.2)
            XCTAssertNotNil(monitor.snapshot().links[va], "a forged RTM_DELLINK removed the link")
        }
    }

    func testLinkMovedToAnotherNamespaceDisappears() throws {
        try addVethPair()
        let other = try NetworkNamespace(prefix: "reachd-nm-b", loopbackUp: false)
        try withMonitor { [ns = ns!] monitor in
            let vb = try XCTUnwrap(monitor.snapshot().link(named: "vb")).index
            try ns.ip("link", "set", "vb", "netns", other.name)
            // va's carrier change comes through the kernel's link watch, which may run after
            // vb's RTM_DELLINK: each is waited for.
            let snapshot = try waitFor(monitor, "vb gone") { $0.links[vb] == nil }
            XCTAssertTrue(snapshot.addresses(of: vb).isEmpty)
            let after = try waitFor(monitor, "va without carrier") { $0.link(named: "va")?.carrier == false }
            XCTAssertNil(after.links[vb], "vb stays gone")
        }
        withExtendedLifetime(other) {}  // vb must leave for a live namespace, not one being deleted
    }

    func testMultipathDefault() throws {
        try addVethPair()
        try ns.ip("link", "add", "vc", "type", "veth", "peer", "name", "vd")
        try ns.ip("link", "set", "vc", "up")
        try ns.ip("link", "set", "vd", "up")
        try ns.ip("addr", "add", "10.0.1.1/24", "dev", "vc")
        try ns.ip("-6", "addr", "add", "2001:db8:2::1/64", "dev", "vc", "nodad")
        try withMonitor { [ns = ns!] monitor in
            let va = try XCTUnwrap(monitor.snapshot().link(named: "va")).index
            let vc = try XCTUnwrap(monitor.snapshot().link(named: "vc")).index
            try ns.ip("route", "add", "default", "nexthop", "via", "10.0.0.2", "dev", "va", "nexthop", "via", "10.0.1.2", "dev", "vc")
            try ns.ip("-6", "route", "add", "default", "nexthop", "via", "2001:db8::2", "dev", "va", "nexthop", "via", "2001:db8:2::2", "dev", "vc")
            let snapshot = try waitFor(monitor, "multipath defaults") {
                $0.defaults(.ipv4).first?.nextHops.count == 2 && $0.defaults(.ipv6).first?.nextHops.count == 2
            }
            XCTAssertEqual(snapshot.defaults(.ipv4).count, 1)
            XCTAssertEqual(snapshot.defaults(.ipv6).count, 1)
            XCTAssertEqual(Set(snapshot.defaults(.ipv4)[0].nextHops.map(\.interfaceIndex)), [va, vc])
            XCTAssertEqual(Set(snapshot.defaults(.ipv6)[0].nextHops.map(\.gateway)), [IPAddress("2001:db8::2"), IPAddress("2001:db8:2::2")])
            // vc admin-down: IPv4 keeps the route through va only.
            try ns.ip("link", "set", "vc", "down")
            let after = try waitFor(monitor, "vc down") { $0.links[vc]?.isUp == false }
            XCTAssertEqual(after.defaults(.ipv4).first?.nextHops.map(\.interfaceIndex), [va])
        }
    }

    func testARouteFloodElsewhereIsDroppedInTheKernel() throws {
        // No IPv6 link-local addresses (their DAD would end in address events mid-test).
        try ns.exec(["sysctl", "-qw", "net.ipv6.conf.default.addr_gen_mode=1"])
        try addVethPair()
        try ns.ip("route", "add", "default", "via", "10.0.0.2")
        // The carrier comes up later (linkwatch): its link events must be out before counting.
        let deadline = Date().addingTimeInterval(10)
        while try ns.ip("-o", "link", "show", "up").components(separatedBy: "state UP").count < 3, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        try withMonitor { [ns = ns!] monitor in
            try drainUntilQuiet(monitor)
            let before = monitor.snapshot()
            let lines = (0..<20_000).map { "route add 10.\(100 + $0 / 65536).\($0 / 256 % 256).\($0 % 256)/32 via 10.0.0.2" }
            try ns.ipBatch(lines)
            let flood = try drainUntilQuiet(monitor)
            XCTAssertEqual(flood.events, 0, "20,000 routes covering no looked-up address never reach the socket")
            XCTAssertFalse(flood.changed)
            XCTAssertEqual(monitor.resyncCount, 0)
            let after = monitor.snapshot()
            XCTAssertEqual(after.defaultRoutes, before.defaultRoutes)
            XCTAssertEqual(after.lookups, before.lookups)
            XCTAssertEqual(monitor.lookup(IPAddress("10.100.1.1")!), before.lookups[.ipv4], "/32 via the same gateway")

            // A route around a looked-up address arrives, and so does a default route.
            try ns.ip("route", "add", "8.8.0.0/16", "via", "10.0.0.2")
            XCTAssertEqual(try drainUntilQuiet(monitor).events, 1, "8.8.0.0/16 covers 8.8.8.8")
            try ns.ip("-6", "route", "add", "2001:4860::/32", "via", "2001:db8::2")
            XCTAssertEqual(try drainUntilQuiet(monitor).events, 1, "2001:4860::/32 covers the IPv6 lookup target")
            try ns.ip("route", "add", "default", "via", "10.0.0.3", "metric", "50")
            let defaultRoute = try drainUntilQuiet(monitor)
            XCTAssertEqual(defaultRoute.events, 1)
            XCTAssertTrue(defaultRoute.changed)

            // Watching an address lets the routes around it through, and only those.
            try monitor.watch([IPAddress("10.100.0.5")!])
            try ns.ip("route", "del", "10.100.0.5/32")
            XCTAssertEqual(try drainUntilQuiet(monitor).events, 1, "the watched address's route")
            try ns.ip("route", "del", "10.100.0.6/32")
            XCTAssertEqual(try drainUntilQuiet(monitor).events, 0, "its neighbour's")
            try monitor.watch([])
            try ns.ip("route", "add", "10.100.0.5/32", "via", "10.0.0.2")
            XCTAssertEqual(try drainUntilQuiet(monitor).events, 0, "no longer watched")
        }
    }

    func testReceiveBufferOverflowResyncs() throws {
        try addVethPair()
        try withMonitor(receiveBufferSize: 4096) { [ns = ns!] monitor in
            XCTAssertEqual(monitor.resyncCount, 0)
            // Routes to the looked-up 8.8.8.8, one per table: the filter lets each through.
            let lines = (0..<20_000).map { "route add 8.8.8.8/32 via 10.0.0.2 table \(1000 + $0)" }
                + ["route add default via 10.0.0.2", "address add 192.0.2.9/24 dev va"]
            try ns.ipBatch(lines)
            // Nothing is read while the batch runs, so the 4 KiB buffer overflows.
            let outcome = try drainUntilQuiet(monitor)
            XCTAssertTrue(outcome.changed)
            XCTAssertTrue(outcome.resynchronizedAfterLostEvents, "lost events are reported")
            XCTAssertGreaterThan(monitor.resyncCount, 0)
            let snapshot = monitor.snapshot()
            let va = try XCTUnwrap(snapshot.link(named: "va"))
            XCTAssertEqual(snapshot.defaults(.ipv4), [DefaultRoute(
                family: .ipv4, nextHops: [NextHop(interfaceIndex: va.index, gateway: IPAddress("10.0.0.2"))]
            )])
            XCTAssertTrue(snapshot.addresses.contains { $0.address == IPAddress("192.0.2.9") })
            guard case .route(let result) = snapshot.lookups[.ipv4] else { return XCTFail("lookup failed") }
            XCTAssertEqual(result.gateway, IPAddress("10.0.0.2"))
        }
    }

    func testDeviceFactsFromSysfs() throws {
        try addVethPair()
        let root = NSTemporaryDirectory() + "reachd-sysfs-\(UInt32.random(in: 0...UInt32.max))"
        defer { _ = try? FileManager.default.removeItem(atPath: root) }
        let fm = FileManager.default
        try fm.createDirectory(atPath: "\(root)/class/net/va/wireless", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: "\(root)/class/net/va/device", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: "\(root)/bus/pci/drivers/iwlwifi", withIntermediateDirectories: true)
        try "INTERFACE=va\nIFINDEX=3\nDEVTYPE=wlan\n".write(toFile: "\(root)/class/net/va/uevent", atomically: true, encoding: .utf8)
        try fm.createSymbolicLink(atPath: "\(root)/class/net/va/device/driver", withDestinationPath: "../../../../bus/pci/drivers/iwlwifi")
        try fm.createDirectory(atPath: "\(root)/class/net/wwan0", withIntermediateDirectories: true)
        try "DEVTYPE=wwan\n".write(toFile: "\(root)/class/net/wwan0/uevent", atomically: true, encoding: .utf8)
        try withMonitor(sysfsRoot: root) { [ns = ns!] monitor in
            let snapshot = monitor.snapshot()
            let va = try XCTUnwrap(snapshot.link(named: "va"))
            XCTAssertEqual(va.device, DeviceFacts(isWireless: true, deviceType: "wlan", driver: "iwlwifi"))
            XCTAssertEqual(InterfaceClassifier.classify(va), .wifi)
            XCTAssertEqual(try XCTUnwrap(snapshot.link(named: "vb")).device, DeviceFacts())
            // Renaming re-reads the facts under the new name.
            try ns.ip("link", "set", "vb", "name", "wwan0")
            let renamed = try waitFor(monitor, "renamed") { $0.link(named: "wwan0") != nil }
            XCTAssertEqual(renamed.link(named: "wwan0")?.device.deviceType, "wwan")
        }
    }

    func testResynchronizeIsCountedAndKeepsTheState() throws {
        try addVethPair()
        try ns.ip("route", "add", "default", "via", "10.0.0.2")
        try withMonitor { monitor in
            XCTAssertEqual(monitor.resyncCount, 0, "the initial sync is not counted")
            let before = monitor.snapshot()
            try monitor.resynchronize()
            XCTAssertEqual(monitor.resyncCount, 1)
            try monitor.start()
            XCTAssertEqual(monitor.resyncCount, 2, "a repeated start() is a resync")
            let after = monitor.snapshot()
            XCTAssertEqual(after.links, before.links)
            XCTAssertEqual(after.defaultRoutes, before.defaultRoutes)
            XCTAssertEqual(after.lookups, before.lookups)
        }
    }

    func testDrainWithNothingPendingReturnsFalseWithoutBlocking() throws {
        try withMonitor { monitor in
            _ = try drainUntilQuiet(monitor)
            let start = Date()
            XCTAssertFalse(try monitor.drain().changed)
            XCTAssertLessThan(Date().timeIntervalSince(start), 0.5)
        }
    }

    // MARK: Removals reported for lookup rechecks (docs/DESIGN.md rule 6)

    /// The IPv4 default via 10.0.0.2 on va, as the kernel describes it.
    private static func defaultViaPeer(_ monitor: NetlinkMonitor, gateway: String = "10.0.0.2") throws -> DefaultRoute {
        let va = try XCTUnwrap(monitor.snapshot().link(named: "va"))
        return DefaultRoute(family: .ipv4, nextHops: [NextHop(interfaceIndex: va.index, gateway: IPAddress(gateway))])
    }

    func testDeletedDefaultRouteIsReportedRemoved() throws {
        try addVethPair()
        try ns.ip("route", "add", "default", "via", "10.0.0.2")
        try ns.ip("-6", "route", "add", "default", "via", "2001:db8::2")
        try withMonitor { [ns = ns!] monitor in
            let route = try Self.defaultViaPeer(monitor)
            try ns.ip("route", "del", "default")
            let outcome = try drainUntilQuiet(monitor)
            XCTAssertEqual(outcome.removedDefaultRoutes, [route])
            XCTAssertEqual(monitor.snapshot().defaults(.ipv4), [])
            XCTAssertEqual(try drainUntilQuiet(monitor).removedDefaultRoutes, [], "reported once")
        }
    }

    func testReplacedDefaultRouteIsReportedRemoved() throws {
        try addVethPair()
        try ns.ip("route", "add", "default", "via", "10.0.0.2")
        try withMonitor { [ns = ns!] monitor in
            let old = try Self.defaultViaPeer(monitor)
            try ns.ip("route", "replace", "default", "via", "10.0.0.3")
            let outcome = try drainUntilQuiet(monitor)
            XCTAssertEqual(outcome.removedDefaultRoutes, [old], "the displaced route, not the new one")
            XCTAssertEqual(monitor.snapshot().defaults(.ipv4), [try Self.defaultViaPeer(monitor, gateway: "10.0.0.3")])
        }
    }

    func testDeletedAndReaddedInOneBatchIsReportedAndTracked() throws {
        try addVethPair()
        try ns.ip("route", "add", "default", "via", "10.0.0.2")
        try withMonitor { [ns = ns!] monitor in
            let route = try Self.defaultViaPeer(monitor)
            try ns.ipBatch(["route del default", "route add default via 10.0.0.2"])
            let outcome = try drainUntilQuiet(monitor)
            XCTAssertEqual(outcome.removedDefaultRoutes, [route])
            XCTAssertEqual(monitor.snapshot().defaults(.ipv4), [route], "tracked again: the lookup is explained")
        }
    }

    func testDefaultRouteFlushedByAdminDownIsReportedRemoved() throws {
        try addVethPair()
        try ns.ip("route", "add", "default", "via", "10.0.0.2")
        try withMonitor { [ns = ns!] monitor in
            let route = try Self.defaultViaPeer(monitor)
            try ns.ip("link", "set", "va", "down")
            let outcome = try drainUntilQuiet(monitor)
            XCTAssertTrue(outcome.removedDefaultRoutes.contains(route), "\(outcome.removedDefaultRoutes)")
        }
    }

    func testResyncReportsDefaultRoutesNoLongerThere() throws {
        try addVethPair()
        try ns.ip("route", "add", "default", "via", "10.0.0.2")
        try withMonitor { [ns = ns!] monitor in
            let route = try Self.defaultViaPeer(monitor)
            XCTAssertEqual(try monitor.resynchronize(), [], "nothing gone")
            try ns.ip("route", "del", "default")
            // Not drained: the resync finds the route gone (and the queued event with it).
            XCTAssertEqual(try monitor.resynchronize(), [route])
        }
    }
}
