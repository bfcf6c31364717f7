import NetlinkMonitor
import ReachabilityCore
@testable import ReachDaemon
import XCTest
import ReachTargets

/// When the engine asks an IPv6-only link's resolver for its NAT64 prefix (RFC 7050), as
/// tables of wake-ups: only after a snapshot shows the link qualifies, once, again only
/// after a change of the link, its default route or the resolver files; never on a timer.
final class EngineMachineDNS64Tests: XCTestCase {
    typealias Turn = EngineMachineTests.Turn

    private let start = ContinuousClock.now
    private static let changed = EngineMachineTests.NetlinkRead.drained(DrainOutcome(changed: true, events: 1))
    private static let asleep = EngineAction.sleep(until: nil, pollingNetlink: true)

    private static let eth0 = Link(index: 2, name: "eth0", flags: [.up, .lowerUp, .running], operState: .up, carrier: true)
    private static let ipv6Only = NetworkSnapshot(
        links: [2: eth0], addresses: [InterfaceAddress(interfaceIndex: 2, address: IPAddress("fd77::2")!, prefixLength: 64)],
        defaultRoutes: [DefaultRoute(family: .ipv6, nextHops: [NextHop(interfaceIndex: 2, gateway: IPAddress("fd77::1"))])]
    )
    private static let otherRouter = {
        var snapshot = ipv6Only
        snapshot.defaultRoutes = [DefaultRoute(family: .ipv6, nextHops: [NextHop(interfaceIndex: 2, gateway: IPAddress("fd77::9"))])]
        return snapshot
    }()
    private static let dualStack = {
        var snapshot = ipv6Only
        snapshot.addresses.append(InterfaceAddress(interfaceIndex: 2, address: IPAddress("10.77.0.2")!, prefixLength: 24))
        snapshot.defaultRoutes.append(DefaultRoute(family: .ipv4, nextHops: [NextHop(interfaceIndex: 2, gateway: IPAddress("10.77.0.1"))]))
        return snapshot
    }()
    private static let dns64Answer = EngineCommand.dns64Answered(2, .addresses([IPAddress("64:ff9b::c000:aa")!, IPAddress("64:ff9b::c000:ab")!]))

    private func play(_ name: String, discoverDNS64: Bool = true, _ turns: [Turn]) {
        var machine = EngineMachine(now: start, watchdogInterval: nil, discoverDNS64: discoverDNS64)
        for (index, turn) in turns.enumerated() {
            let actions = EngineMachineTests.take(turn, &machine, at: start + turn.at) { start + $0 }
            XCTAssertEqual(actions, turn.expect, "\(name), wake-up \(index)")
        }
    }

    func testAnIPv6OnlyLinkIsAskedOnce() {
        play("asked once, learnt, not asked again without a change", [
            Turn(netlink: Self.changed, snapshot: Self.ipv6Only, expect: [.evaluate, .askDNS64(2), Self.asleep]),
            Turn(netlink: Self.changed, snapshot: Self.ipv6Only, expect: [.evaluate, Self.asleep]),
            Turn(commands: [Self.dns64Answer], snapshot: Self.ipv6Only, expect: [.learnDNS64(2, [NAT64Prefix.wellKnown]), .evaluate, Self.asleep]),
            Turn(netlink: Self.changed, snapshot: Self.ipv6Only, expect: [.evaluate, Self.asleep]),
        ])
    }

    func testAnAnswerThatChangesNothingIsNotEvaluated() {
        play("no DNS64 on the network", [
            Turn(netlink: Self.changed, snapshot: Self.ipv6Only, expect: [.evaluate, .askDNS64(2), Self.asleep]),
            Turn(commands: [.dns64Answered(2, .failed)], learnChanges: false, expect: [.learnDNS64(2, []), Self.asleep]),
        ])
    }

    func testTheSnapshotTakenAtStartIsAsked() {
        var machine = EngineMachine(now: start, watchdogInterval: nil, discoverDNS64: true)
        XCTAssertEqual(machine.handle(.evaluated(Self.ipv6Only), at: start), [.askDNS64(2), Self.asleep])
        // The first wake-up's snapshot shows the same: no second query.
        let first = EngineMachineTests.take(Turn(netlink: Self.changed, snapshot: Self.ipv6Only, expect: []), &machine, at: start) { start + $0 }
        XCTAssertEqual(first, [.evaluate, Self.asleep])
        var off = EngineMachine(now: start, watchdogInterval: nil, discoverDNS64: false)
        XCTAssertEqual(off.handle(.evaluated(Self.ipv6Only), at: start), [Self.asleep])
    }

    func testOffNothingIsAsked() {
        play("discover-dns64 = false", discoverDNS64: false, [
            Turn(netlink: Self.changed, snapshot: Self.ipv6Only, expect: [.evaluate, Self.asleep]),
            Turn(commands: [Self.dns64Answer], expect: [Self.asleep]),
        ])
    }

    func testDualStackIsNotAsked() {
        play("native IPv4", [Turn(netlink: Self.changed, snapshot: Self.dualStack, expect: [.evaluate, Self.asleep])])
    }

    func testChangesAskAgain() {
        play("the resolver files changed", [
            Turn(netlink: Self.changed, snapshot: Self.ipv6Only, expect: [.evaluate, .askDNS64(2), Self.asleep]),
            Turn(commands: [Self.dns64Answer], snapshot: Self.ipv6Only, expect: [.learnDNS64(2, [NAT64Prefix.wellKnown]), .evaluate, Self.asleep]),
            Turn(at: .seconds(1), resolverFiles: .unchanged, snapshot: Self.ipv6Only,
                 expect: [.sleep(until: start + .seconds(1) + .milliseconds(100), pollingNetlink: true, pollingResolverFiles: false)]),
            Turn(at: .seconds(2), resolverFiles: .changed, snapshot: Self.ipv6Only,
                 expect: [.askDNS64(2), .evaluate, .sleep(until: start + .seconds(2) + .milliseconds(100), pollingNetlink: true, pollingResolverFiles: false)]),
        ])
        play("another server in the resolver files (whether one is configured did not change): asked again, nothing evaluated", [
            Turn(netlink: Self.changed, snapshot: Self.ipv6Only, expect: [.evaluate, .askDNS64(2), Self.asleep]),
            Turn(commands: [Self.dns64Answer], snapshot: Self.ipv6Only, expect: [.learnDNS64(2, [NAT64Prefix.wellKnown]), .evaluate, Self.asleep]),
            Turn(at: .seconds(1), resolverFiles: .rewritten,
                 expect: [.askDNS64(2), .sleep(until: start + .seconds(1) + .milliseconds(100), pollingNetlink: true, pollingResolverFiles: false)]),
        ])
        play("another router", [
            Turn(netlink: Self.changed, snapshot: Self.ipv6Only, expect: [.evaluate, .askDNS64(2), Self.asleep]),
            Turn(commands: [Self.dns64Answer], snapshot: Self.ipv6Only, expect: [.learnDNS64(2, [NAT64Prefix.wellKnown]), .evaluate, Self.asleep]),
            Turn(netlink: Self.changed, snapshot: Self.otherRouter, expect: [.evaluate, .askDNS64(2), Self.asleep]),
        ])
    }

    func testALinkThatNoLongerQualifiesIsWithdrawnAndEvaluatedAgain() {
        play("native IPv4 arrives", [
            Turn(netlink: Self.changed, snapshot: Self.ipv6Only, expect: [.evaluate, .askDNS64(2), Self.asleep]),
            Turn(commands: [Self.dns64Answer], snapshot: Self.ipv6Only, expect: [.learnDNS64(2, [NAT64Prefix.wellKnown]), .evaluate, Self.asleep]),
            Turn(at: .seconds(1), netlink: Self.changed, snapshot: Self.dualStack,
                 expect: [.evaluate, .withdrawDNS64(2), .sleep(until: start + .seconds(1), pollingNetlink: true)]),
            // The snapshot taken before the withdrawal still showed the prefix: one more.
            Turn(at: .seconds(1), snapshot: Self.dualStack, expect: [.evaluate, Self.asleep]),
            Turn(at: .seconds(2), netlink: Self.changed, snapshot: Self.dualStack, expect: [.evaluate, Self.asleep]),
        ])
    }
}
