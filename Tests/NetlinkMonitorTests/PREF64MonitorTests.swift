import Foundation
import Glibc
import NetlinkMonitor
import ReachabilityCore
import TestSupport
import XCTest

/// PREF64 through a real kernel: an RA sent from one end of a veth pair to the other (the
/// kernel relays its option 38 on RTNLGRP_ND_USEROPT), and what the monitor does with it:
/// a new prefix is news, a refresh is not (it only moves the expiry, which is the next
/// deadline), another source's prefix hides behind the router's, link down forgets it, and a
/// flood of distinct prefixes is held to the announcement budget (a held one withdrawn never
/// appears).
final class PREF64MonitorTests: XCTestCase {
    private var ns: NetworkNamespace!

    override func setUpWithError() throws {
        try requireRoot()
        ns = try NetworkNamespace(prefix: "reachd-pref64")
        // No DAD: the sender's link-local address is usable at once.
        _ = try ns.exec(["sysctl", "-qw", "net.ipv6.conf.default.accept_dad=0"])
        try ns.ip("link", "add", "va", "type", "veth", "peer", "name", "vb")
        try ns.ip("link", "set", "va", "up")
        try ns.ip("link", "set", "vb", "up")
    }

    override func tearDown() {
        ns = nil
    }

    private func announce(_ prefix: String, lifetime: Int) throws {
        _ = try ns.exec(["python3", Paths.repository.appendingPathComponent("Tests/Fixtures/send_ra.py").path, "va", "--pref64", prefix, "\(lifetime)"])
    }

    func testPrefixesFromRouterAdvertisements() throws {
        try ns.inside { [self] in
            let monitor = try NetlinkMonitor()
            try monitor.start()
            let vb = try XCTUnwrap(monitor.snapshot().links.values.first { $0.name == "vb" }?.index)
            let start = ContinuousClock.now

            try announce("64:ff9b::/96", lifetime: 600)
            let learnt = try waitFor(monitor, "the prefix") { $0.nat64Prefixes[vb] != nil }
            XCTAssertEqual(learnt.nat64Prefixes[vb], [NAT64Prefix("64:ff9b::/96", source: .routerAdvertisement)!])
            let expiry = try XCTUnwrap(monitor.nextAnnouncementRelease)
            XCTAssertEqual((expiry - start) / .seconds(1), 600, accuracy: 5)

            // A refresh: the expiry moves, nothing anyone sees changes.
            Thread.sleep(forTimeInterval: 1.1)
            try announce("64:ff9b::/96", lifetime: 600)
            let refresh = try drainUntilQuiet(monitor)
            XCTAssertGreaterThan(refresh.events, 0, "the RA arrived")
            XCTAssertFalse(refresh.changed, "a refresh is no news")
            XCTAssertGreaterThan(try XCTUnwrap(monitor.nextAnnouncementRelease), expiry)

            // DNS64's prefix hides behind the router's.
            let dns64 = NAT64Prefix("2001:db8:64::/96", source: .dns64)!
            XCTAssertFalse(monitor.learnNAT64Prefix(dns64, lifetime: nil, on: vb, now: .now))
            XCTAssertEqual(monitor.snapshot().nat64Prefixes[vb]?.map(\.description), ["64:ff9b::/96"])

            // A lifetime of zero withdraws the router's: DNS64's shows.
            try announce("64:ff9b::/96", lifetime: 0)
            let withdrawn = try waitFor(monitor, "withdrawn") { $0.nat64Prefixes[vb]?.first?.source == .dns64 }
            XCTAssertEqual(withdrawn.nat64Prefixes[vb], [dns64])
            XCTAssertNil(monitor.nextAnnouncementRelease, "nothing expires: no deadline")

            // Link down forgets every source.
            try ns.ip("link", "set", "vb", "down")
            _ = try waitFor(monitor, "forgotten") { $0.nat64Prefixes.isEmpty }
            try ns.ip("link", "set", "vb", "up")

            // A flood of distinct prefixes: the budget's burst at once, the latest held.
            for index in 1...6 { try announce("2001:db8:\(index)::/48", lifetime: 600) }
            let flooded = try drainUntilQuiet(monitor)
            XCTAssertTrue(flooded.changed)
            let carried = monitor.snapshot().nat64Prefixes[vb] ?? []
            XCTAssertLessThanOrEqual(carried.count, 3, "\(carried)")
            XCTAssertFalse(carried.contains { $0.description == "2001:db8:6::/48" }, "the latest is held: \(carried)")
            XCTAssertNotNil(monitor.nextAnnouncementRelease)

            // Withdrawn while held: the withdrawal replaces it, so it never appears.
            try announce("2001:db8:6::/48", lifetime: 0)
            try drainUntilQuiet(monitor)
            let release = try XCTUnwrap(monitor.nextAnnouncementRelease)
            // A held change is due within the budget's interval; a later instant is a prefix's
            // expiry (minutes), left when a slow machine let the budget refill first.
            if release - .now < .seconds(5) { Thread.sleep(until: Date() + (release - .now) / .seconds(1) + 0.05) }
            _ = monitor.releaseHeldAnnouncements(now: .now)
            XCTAssertFalse(monitor.snapshot().nat64Prefixes[vb]?.contains { $0.description == "2001:db8:6::/48" } ?? false)
        }
    }
}
