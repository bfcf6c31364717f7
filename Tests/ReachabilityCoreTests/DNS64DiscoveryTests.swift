import ReachabilityCore
import XCTest

/// RFC 7050 discovery: what an answer for ipv4only.arpa says, which links are asked, and when again.
final class DNS64DiscoveryTests: XCTestCase {
    // MARK: The prefix in the answer

    /// Each RFC 6052 length, with 192.0.0.170 and .171 synthesized under it (RFC 6052
    /// section 2.4's layout: the u octet skipped, the suffix zero).
    func testEveryRFC6052LengthIsFound() throws {
        let cases: [(prefix: String, records: [String])] = [
            ("2001:db8::/32", ["2001:db8:c000:aa::", "2001:db8:c000:ab::"]),
            ("2001:db8:100::/40", ["2001:db8:1c0:0:aa::", "2001:db8:1c0:0:ab::"]),
            ("2001:db8:122::/48", ["2001:db8:122:c000:0:aa00::", "2001:db8:122:c000:0:ab00::"]),
            ("2001:db8:122:300::/56", ["2001:db8:122:3c0:0:aa::", "2001:db8:122:3c0:0:ab::"]),
            ("2001:db8:122:344::/64", ["2001:db8:122:344:c0:0:aa00:0", "2001:db8:122:344:c0:0:ab00:0"]),
            ("2001:db8:122:344::/96", ["2001:db8:122:344::c000:aa", "2001:db8:122:344::c000:ab"]),
            ("64:ff9b::/96", ["64:ff9b::c000:aa"]),
            ("64:ff9b::/96", ["64:ff9b::c000:ab"]),
        ]
        for (prefix, records) in cases {
            let expected = try XCTUnwrap(NAT64Prefix(prefix, source: .dns64), prefix)
            XCTAssertEqual(DNS64Discovery.prefixes(in: records.map { ip($0) }), [expected], prefix)
            // Each record is what synthesizing a well-known address under the prefix gives.
            let synthesized = DNS64Discovery.wellKnownAddresses.compactMap(expected.synthesize)
            for record in records { XCTAssertTrue(synthesized.contains(ip(record)), record) }
        }
    }

    func testAnswersWithoutTheWellKnownAddressesAreIgnored() {
        let cases: [(name: String, records: [String], expected: [String])] = [
            ("no records", [], []),
            ("a real AAAA record: no DNS64", ["2001:db8::1"], []),
            ("another IPv4 address under the prefix", ["64:ff9b::c000:2ac"], []),
            ("IPv4 records only", ["192.0.0.170", "192.0.0.171"], []),
            ("a u octet that is not zero: not RFC 6052's layout", ["2001:db8:122:344:ffc0:0:aa00:0"], []),
            ("one good among junk", ["2001:db8::1", "64:ff9b::c000:aa", "192.0.0.170"], ["64:ff9b::/96"]),
            ("the pair gives one prefix", ["64:ff9b::c000:aa", "64:ff9b::c000:ab"], ["64:ff9b::/96"]),
            ("two prefixes, in the answer's order", ["2001:db8:64::c000:aa", "64:ff9b::c000:aa"], ["2001:db8:64::/96", "64:ff9b::/96"]),
        ]
        for testCase in cases {
            XCTAssertEqual(
                DNS64Discovery.prefixes(in: testCase.records.map { ip($0) }),
                testCase.expected.compactMap { NAT64Prefix($0, source: .dns64) }, testCase.name
            )
        }
    }

    /// A prefix whose own bits read as a well-known address puts 192.0.0.170 at two
    /// positions: the sibling record (.171) tells which is the embedding.
    func testAWellKnownAddressAtTwoPositionsIsSettledByItsSibling() {
        // 2001:db8:c000:aa::/96: bytes 4-7 are c0 00 00 aa (the /32 position) and the u octet is zero.
        let seventy = ip("2001:db8:c000:aa::c000:aa")
        let seventyOne = ip("2001:db8:c000:aa::c000:ab")
        let expected = NAT64Prefix("2001:db8:c000:aa::/96", source: .dns64)!
        XCTAssertEqual(DNS64Discovery.prefixes(in: [seventy, seventyOne]), [expected])
        XCTAssertEqual(DNS64Discovery.prefixes(in: [seventyOne, seventy]), [expected])
        // Alone, the record is ambiguous and says nothing.
        XCTAssertEqual(DNS64Discovery.prefixes(in: [seventy]), [])
    }

    func testOnlyTheFirstRecordsAreRead() {
        let junk = (0..<DNS64Discovery.maximumAnswers).map { ip("2001:db8::\(String($0 + 1, radix: 16))") }
        XCTAssertEqual(DNS64Discovery.prefixes(in: junk + [ip("64:ff9b::c000:aa")]), [])
        XCTAssertEqual(DNS64Discovery.prefixes(in: junk.dropLast() + [ip("64:ff9b::c000:aa")]), [NAT64Prefix.wellKnown])
    }

    // MARK: Which links are asked

    func testEligibleLinks() {
        let v6Only = [addr(2, "fd77::2"), addr(2, "fe80::2")]
        let routerPrefix = NAT64Prefix("64:ff9b::/96", source: .routerAdvertisement)!
        var withPREF64 = snapshot(links: [eth0], addresses: v6Only, defaults: [defaultRoute(.ipv6, dev: 2, via: "fe80::1")])
        withPREF64.nat64Prefixes = [2: [routerPrefix]]
        var withDNS64 = withPREF64
        withDNS64.nat64Prefixes = [2: [NAT64Prefix.wellKnown]]
        let cases: [(name: String, snapshot: NetworkSnapshot, expected: [Int32: [String?]])] = [
            ("IPv6-only link", snapshot(links: [eth0], addresses: v6Only, defaults: [defaultRoute(.ipv6, dev: 2, via: "fe80::1")]), [2: ["fe80::1"]]),
            ("on-link default", snapshot(links: [eth0], addresses: v6Only, defaults: [defaultRoute(.ipv6, dev: 2)]), [2: [nil]]),
            ("dual stack: native IPv4", snapshot(links: [eth0], addresses: v6Only + [addr(2, "10.0.0.2")],
                                                 defaults: [defaultRoute(.ipv6, dev: 2, via: "fe80::1"), defaultRoute(.ipv4, dev: 2, via: "10.0.0.1")]), [:]),
            ("IPv4 default on another link (a CLAT's tun): the uplink is still asked",
             snapshot(links: [eth0, tun0], addresses: v6Only + [addr(5, "192.0.0.1", 29)],
                      defaults: [defaultRoute(.ipv6, dev: 2, via: "fe80::1"), defaultRoute(.ipv4, dev: 5)]), [2: ["fe80::1"]]),
            ("no IPv6 default", snapshot(links: [eth0], addresses: v6Only), [:]),
            ("unreachable IPv6 default", snapshot(links: [eth0], addresses: v6Only, defaults: [defaultRoute(.ipv6, dev: 2, type: .unreachable)]), [:]),
            ("link-local only", snapshot(links: [eth0], addresses: [addr(2, "fe80::2")], defaults: [defaultRoute(.ipv6, dev: 2, via: "fe80::1")]), [:]),
            ("tentative address", snapshot(links: [eth0], addresses: [addr(2, "fd77::2", flags: .tentative)], defaults: [defaultRoute(.ipv6, dev: 2, via: "fe80::1")]), [:]),
            ("down", snapshot(links: [link(2, "eth0", up: false)], addresses: v6Only, defaults: [defaultRoute(.ipv6, dev: 2, via: "fe80::1")]), [:]),
            ("no carrier", snapshot(links: [link(2, "eth0", carrier: false)], addresses: v6Only, defaults: [defaultRoute(.ipv6, dev: 2, via: "fe80::1")]), [:]),
            ("PREF64 from the router: no fallback", withPREF64, [:]),
            ("its own DNS64 prefix keeps it asked-for", withDNS64, [2: ["fe80::1"]]),
            ("two routers, sorted", snapshot(links: [eth0], addresses: v6Only,
                                             defaults: [defaultRoute(.ipv6, dev: 2, via: "fe80::2", metric: 5), defaultRoute(.ipv6, dev: 2, via: "fe80::1")]),
             [2: ["fe80::1", "fe80::2"]]),
        ]
        for testCase in cases {
            let expected = testCase.expected.mapValues { DNS64Discovery.Conditions(gateways: $0.map { $0.map { ip($0) } }, resolverGeneration: 3) }
            XCTAssertEqual(DNS64Discovery.eligibleLinks(in: testCase.snapshot, resolverGeneration: 3), expected, testCase.name)
        }
    }

    // MARK: When a link is asked

    private enum Step {
        case update([Int32: DNS64Discovery.Conditions])
        case answer(Int32, DNS64Discovery.Answer)
    }

    private static let here = DNS64Discovery.Conditions(gateways: [ip("fe80::1")], resolverGeneration: 0)
    private static let otherRouter = DNS64Discovery.Conditions(gateways: [ip("fe80::9")], resolverGeneration: 0)
    private static let newResolver = DNS64Discovery.Conditions(gateways: [ip("fe80::1")], resolverGeneration: 1)
    private static let dns64 = DNS64Discovery.Answer.addresses([ip("64:ff9b::c000:aa")])

    func testWhenALinkIsAsked() {
        let learnt = DNS64Discovery.Action.learn(2, [NAT64Prefix.wellKnown])
        let cases: [(name: String, steps: [Step], expected: [[DNS64Discovery.Action]])] = [
            ("a new link is asked once", [.update([2: Self.here]), .update([2: Self.here])], [[.ask(2)], []]),
            ("the answer is learnt", [.update([2: Self.here]), .answer(2, Self.dns64)], [[.ask(2)], [learnt]]),
            ("no DNS64: nothing learnt, not asked again", [.update([2: Self.here]), .answer(2, .failed), .update([2: Self.here])],
             [[.ask(2)], [.learn(2, [])], []]),
            ("answered: not asked again without a change", [.update([2: Self.here]), .answer(2, Self.dns64), .update([2: Self.here]), .update([2: Self.here])],
             [[.ask(2)], [learnt], [], []]),
            ("another default route: asked again", [.update([2: Self.here]), .answer(2, Self.dns64), .update([2: Self.otherRouter])],
             [[.ask(2)], [learnt], [.ask(2)]]),
            ("the resolver configuration changed: asked again", [.update([2: Self.here]), .answer(2, Self.dns64), .update([2: Self.newResolver])],
             [[.ask(2)], [learnt], [.ask(2)]]),
            ("the link went and came back: withdrawn, asked again", [.update([2: Self.here]), .answer(2, Self.dns64), .update([:]), .update([2: Self.here])],
             [[.ask(2)], [learnt], [.withdraw(2)], [.ask(2)]]),
            ("a change while asking: no second query; the stale answer is dropped and the link asked again",
             [.update([2: Self.here]), .update([2: Self.newResolver]), .answer(2, Self.dns64), .answer(2, Self.dns64)],
             [[.ask(2)], [], [.ask(2)], [learnt]]),
            ("gone while asking, back before the answer: still one query, asked again after it",
             [.update([2: Self.here]), .update([:]), .update([2: Self.otherRouter]), .answer(2, .failed)],
             [[.ask(2)], [.withdraw(2)], [], [.ask(2)]]),
            ("gone while asking: the answer is dropped", [.update([2: Self.here]), .update([:]), .answer(2, Self.dns64), .update([:])],
             [[.ask(2)], [.withdraw(2)], [], []]),
            ("an answer nobody asked for", [.answer(2, Self.dns64)], [[]]),
            ("links apart", [.update([2: Self.here, 3: Self.here]), .answer(3, Self.dns64), .update([2: Self.here])],
             [[.ask(2), .ask(3)], [.learn(3, [NAT64Prefix.wellKnown])], [.withdraw(3)]]),
        ]
        for testCase in cases {
            var discovery = DNS64Discovery()
            let actions = testCase.steps.map { step -> [DNS64Discovery.Action] in
                switch step {
                case let .update(eligible): return discovery.update(eligible: eligible)
                case let .answer(link, answer): return discovery.answered(link, answer)
                }
            }
            XCTAssertEqual(actions, testCase.expected, testCase.name)
        }
    }

    func testOneQueryPerLinkIsOut() {
        var discovery = DNS64Discovery()
        _ = discovery.update(eligible: [2: Self.here])
        XCTAssertTrue(discovery.isAsking(2))
        XCTAssertFalse(discovery.isAsking(3))
        _ = discovery.answered(2, .failed)
        XCTAssertFalse(discovery.isAsking(2))
    }
}
