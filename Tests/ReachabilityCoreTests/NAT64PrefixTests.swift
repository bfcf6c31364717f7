import ReachabilityCore
import XCTest

/// RFC 6052's address synthesis over its own examples (section 2.4), the prefix's text and
/// wire forms, and the per-link store's decisions as tables of timed steps.
final class NAT64PrefixTests: XCTestCase {
    func testSynthesisFollowsRFC6052Examples() {
        // RFC 6052 section 2.4, Table 2: 192.0.2.33 under each prefix length.
        let table: [(prefix: String, synthesized: String)] = [
            ("2001:db8::/32", "2001:db8:c000:221::"),
            ("2001:db8:100::/40", "2001:db8:1c0:2:21::"),
            ("2001:db8:122::/48", "2001:db8:122:c000:2:2100::"),
            ("2001:db8:122:300::/56", "2001:db8:122:3c0:0:221::"),
            ("2001:db8:122:344::/64", "2001:db8:122:344:c0:2:2100:0"),
            ("2001:db8:122:344::/96", "2001:db8:122:344::c000:221"),
            ("64:ff9b::/96", "64:ff9b::c000:221"),
        ]
        let ipv4 = IPAddress("192.0.2.33")!
        for row in table {
            guard let prefix = NAT64Prefix(row.prefix, source: .routerAdvertisement) else {
                XCTFail("\(row.prefix) refused")
                continue
            }
            XCTAssertEqual(prefix.description, row.prefix)
            let synthesized = prefix.synthesize(ipv4)
            XCTAssertEqual(synthesized, IPAddress(row.synthesized), row.prefix)
            XCTAssertEqual(synthesized.flatMap(prefix.extract), ipv4, "\(row.prefix): extract inverts synthesize")
        }
        XCTAssertEqual(NAT64Prefix.wellKnown.description, "64:ff9b::/96")
    }

    func testPrefixesRFC6052DoesNotDefineAreRefused() {
        let table: [(text: String, accepted: Bool)] = [
            ("64:ff9b::/96", true),
            ("64:ff9b::/95", false),  // not a defined length
            ("64:ff9b::/128", false),
            ("64:ff9b::/0", false),
            ("64:ff9b::1/96", false),  // bits past the length
            ("192.0.2.0/96", false),  // IPv4
            ("64:ff9b::", false),
            ("64:ff9b::/+96", false),
            ("64:ff9b::/96/96", false),
            ("2001:db8::/32", true),
        ]
        for row in table {
            XCTAssertEqual(NAT64Prefix(row.text, source: .dns64) != nil, row.accepted, row.text)
        }
        // From an address, the bits past the length are cleared (an RA's option carries 96 bits).
        let cleared = NAT64Prefix(address: IPAddress("2001:db8:ffff:ffff::1")!, length: 32, source: .routerAdvertisement)
        XCTAssertEqual(cleared?.description, "2001:db8::/32")
        XCTAssertNil(NAT64Prefix(address: IPAddress("192.0.2.1")!, length: 32, source: .routerAdvertisement))
    }

    func testExtractRefusesAddressesOutsideThePrefix() {
        let prefix = NAT64Prefix("2001:db8:122::/48", source: .dns64)!
        XCTAssertNil(prefix.extract(IPAddress("2001:db8:123:c000:2:2100::")!), "another prefix")
        XCTAssertNil(prefix.extract(IPAddress("2001:db8:122:c000:ff02:2100::")!), "u octet set")
        XCTAssertNil(prefix.extract(IPAddress("192.0.2.33")!))
        XCTAssertNil(prefix.synthesize(IPAddress("2001:db8::1")!))
    }

    func testWireFormRoundTrips() throws {
        let prefix = NAT64Prefix("64:ff9b::/96", source: .routerAdvertisement)!
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = try encoder.encode(prefix)
        XCTAssertEqual(String(decoding: data, as: UTF8.self), #"{"prefix":"64:ff9b::\/96","source":"routerAdvertisement"}"#)
        XCTAssertEqual(try JSONDecoder().decode(NAT64Prefix.self, from: data), prefix)
        XCTAssertThrowsError(try JSONDecoder().decode(NAT64Prefix.self, from: Data(#"{"prefix":"64:ff9b::1/96","source":"dns64"}"#.utf8)))
    }

    // MARK: The store

    private enum Step {
        /// At `at` seconds, announce `prefix` on `link` with `lifetime` seconds (nil: none); expect `outcome`.
        case learn(Double, link: Int32 = 2, String, NAT64Prefix.Source = .routerAdvertisement, lifetime: Double?, NAT64PrefixStore.Outcome)
        /// At `at` seconds, expire; expect whether anything went.
        case expire(Double, Bool)
        /// The link went down.
        case forget(Int32, Bool)
        /// DNS64 no longer applies on the link.
        case withdraw(Int32, NAT64Prefix.Source, Bool)
    }

    private struct Case {
        var name: String
        var steps: [Step]
        /// What each link carries at the end.
        var carried: [Int32: [String]]
        /// Seconds of the earliest expiry left, nil when none.
        var nextExpiry: Double?
    }

    func testStoreDecisions() {
        let cases: [Case] = [
            Case(name: "an announcement is carried until it expires", steps: [
                .learn(0, "64:ff9b::/96", lifetime: 600, .added),
                .expire(599, false),
            ], carried: [2: ["64:ff9b::/96"]], nextExpiry: 600),
            Case(name: "it lapses at its expiry", steps: [
                .learn(0, "64:ff9b::/96", lifetime: 600, .added),
                .expire(600, true),
            ], carried: [:], nextExpiry: nil),
            Case(name: "a repeat refreshes the expiry and changes nothing seen", steps: [
                .learn(0, "64:ff9b::/96", lifetime: 600, .added),
                .learn(300, "64:ff9b::/96", lifetime: 600, .refreshed),
                .expire(600, false),
            ], carried: [2: ["64:ff9b::/96"]], nextExpiry: 900),
            Case(name: "lifetime zero withdraws", steps: [
                .learn(0, "64:ff9b::/96", lifetime: 600, .added),
                .learn(1, "64:ff9b::/96", lifetime: 0, .withdrawn),
            ], carried: [:], nextExpiry: nil),
            Case(name: "withdrawing a prefix not held does nothing", steps: [
                .learn(0, "64:ff9b::/96", lifetime: 0, .unchanged),
            ], carried: [:], nextExpiry: nil),
            Case(name: "link down forgets every source", steps: [
                .learn(0, "64:ff9b::/96", lifetime: 600, .added),
                .learn(0, "2001:db8::/32", .dns64, lifetime: nil, .added),
                .learn(0, link: 3, "2001:db8:1::/48", lifetime: 600, .added),
                .forget(2, true),
                .forget(2, false),
            ], carried: [3: ["2001:db8:1::/48"]], nextExpiry: 600),
            Case(name: "the router's word wins over DNS64, which shows once the RA's lapses", steps: [
                .learn(0, "2001:db8::/32", .dns64, lifetime: nil, .added),
                .learn(0, "64:ff9b::/96", lifetime: 60, .added),
            ], carried: [2: ["64:ff9b::/96"]], nextExpiry: 60),
            Case(name: "DNS64's prefix without an expiry stays after the RA's lapses", steps: [
                .learn(0, "2001:db8::/32", .dns64, lifetime: nil, .added),
                .learn(0, "64:ff9b::/96", lifetime: 60, .added),
                .expire(60, true),
            ], carried: [2: ["2001:db8::/32"]], nextExpiry: nil),
            Case(name: "the same prefix from both sources is held once each", steps: [
                .learn(0, "64:ff9b::/96", .dns64, lifetime: nil, .added),
                .learn(0, "64:ff9b::/96", lifetime: 60, .added),
                .withdraw(2, .dns64, true),
                .withdraw(2, .dns64, false),
            ], carried: [2: ["64:ff9b::/96"]], nextExpiry: 60),
            Case(name: "a flood of distinct prefixes is bounded per source", steps: [
                .learn(0, "2001:db8:1::/48", lifetime: 60, .added),
                .learn(0, "2001:db8:2::/48", lifetime: 60, .added),
                .learn(0, "2001:db8:3::/48", lifetime: 60, .added),
                .learn(0, "2001:db8:4::/48", lifetime: 60, .added),
                .learn(0, "2001:db8:5::/48", lifetime: 60, .refused),
                .learn(0, "2001:db8:6::/48", .dns64, lifetime: nil, .added),
            ], carried: [2: ["2001:db8:1::/48", "2001:db8:2::/48", "2001:db8:3::/48", "2001:db8:4::/48"]], nextExpiry: 60),
            Case(name: "the earliest of several expiries is next", steps: [
                .learn(0, "2001:db8:1::/48", lifetime: 60, .added),
                .learn(10, link: 5, "2001:db8:2::/48", lifetime: 20, .added),
                .expire(30, true),
            ], carried: [2: ["2001:db8:1::/48"]], nextExpiry: 60),
        ]
        let origin = ContinuousClock.now
        func at(_ seconds: Double) -> ContinuousClock.Instant { origin + .milliseconds(Int(seconds * 1000)) }
        for testCase in cases {
            var store = NAT64PrefixStore()
            for (index, step) in testCase.steps.enumerated() {
                let label = "\(testCase.name), step \(index)"
                switch step {
                case let .learn(time, link, text, source, lifetime, outcome):
                    let prefix = NAT64Prefix(text, source: source)!
                    let got = store.learn(prefix, lifetime: lifetime.map { .milliseconds(Int($0 * 1000)) }, on: link, now: at(time))
                    XCTAssertEqual(got, outcome, label)
                case let .expire(time, changed):
                    XCTAssertEqual(store.expire(now: at(time)), changed, label)
                case let .forget(link, held):
                    XCTAssertEqual(store.forget(link), held, label)
                case let .withdraw(link, source, held):
                    XCTAssertEqual(store.withdraw(source, on: link), held, label)
                }
            }
            XCTAssertEqual(store.prefixesByLink.mapValues { $0.map(\.description) }, testCase.carried, testCase.name)
            XCTAssertEqual(store.nextExpiry, testCase.nextExpiry.map(at), testCase.name)
        }
    }
}
