import Foundation
import ReachabilityCore
import XCTest

final class ReachabilityFlagsTests: XCTestCase {
    func testBitValuesAndNamesInAppleOrder() {
        let cases: [(name: String, flag: ReachabilityFlags, bit: UInt32)] = [
            ("transientConnection", .transientConnection, 0),
            ("reachable", .reachable, 1),
            ("connectionRequired", .connectionRequired, 2),
            ("connectionOnTraffic", .connectionOnTraffic, 3),
            ("interventionRequired", .interventionRequired, 4),
            ("connectionOnDemand", .connectionOnDemand, 5),
            ("isLocalAddress", .isLocalAddress, 16),
            ("isDirect", .isDirect, 17),
            ("isWWAN", .isWWAN, 18),
        ]
        for c in cases {
            XCTAssertEqual(c.flag.rawValue, 1 << c.bit, "\(c.name): Apple's bit")
            XCTAssertEqual(c.flag.names, [c.name], "\(c.name): wire name")
        }
        XCTAssertEqual(ReachabilityFlags.named.map(\.1), cases.map(\.name), "named table in Apple's bit order")
        let all = ReachabilityFlags(cases.map(\.flag))
        XCTAssertEqual(all.names, cases.map(\.name), "every flag, in bit order")
        XCTAssertEqual(ReachabilityFlags([.isWWAN, .reachable, .transientConnection]).names,
                       ["transientConnection", "reachable", "isWWAN"], "set order does not matter")
        XCTAssertEqual(ReachabilityFlags([]).names, [], "no flags")
    }

    func testInitFromNames() {
        let cases: [(name: String, names: [String], expected: ReachabilityFlags?)] = [
            ("empty", [], []),
            ("one", ["reachable"], .reachable),
            ("several, any order", ["isWWAN", "reachable"], [.reachable, .isWWAN]),
            ("duplicates", ["isDirect", "isDirect"], .isDirect),
            ("unknown name", ["reachable", "isVPN"], nil),
            ("wrong case", ["Reachable"], nil),
            ("empty name", [""], nil),
        ]
        for c in cases {
            XCTAssertEqual(ReachabilityFlags(names: c.names), c.expected, c.name)
        }
    }

    func testFlagsCodable() throws {
        let cases: [(name: String, flags: ReachabilityFlags, json: String)] = [
            ("none", [], "[]"),
            ("reachable direct", [.isDirect, .reachable], "[\"reachable\",\"isDirect\"]"),
            ("dormant wwan", [.isWWAN, .connectionRequired, .reachable], "[\"reachable\",\"connectionRequired\",\"isWWAN\"]"),
        ]
        for c in cases {
            let data = try JSONEncoder().encode(c.flags)
            XCTAssertEqual(String(decoding: data, as: UTF8.self), c.json, c.name)
            XCTAssertEqual(try JSONDecoder().decode(ReachabilityFlags.self, from: data), c.flags, c.name)
        }
        XCTAssertThrowsError(try JSONDecoder().decode(ReachabilityFlags.self, from: Data("[\"reachable\",\"bogus\"]".utf8)),
                             "unknown flag name is rejected")
        XCTAssertThrowsError(try JSONDecoder().decode(ReachabilityFlags.self, from: Data("6".utf8)), "raw bits are not the wire form")
    }
}

final class PathCodableTests: XCTestCase {
    /// Field names of `type Path` in io.reachd.Reachability.varlink.
    static let wireKeys: Set<String> = [
        "status", "unsatisfiedReason", "reachability", "flags", "primaryInterface", "primaryInterfaceType",
        "availableInterfaces", "gateways", "supportsIPv4", "supportsIPv6", "supportsDNS", "isExpensive",
        "isConstrained", "connectivity",
    ]

    static let satisfied = Path(
        status: .satisfied, reachability: .reachableViaWWAN, flags: [.reachable, .isWWAN], primaryInterface: "wwan0",
        primaryInterfaceType: .cellular, availableInterfaces: ["wwan0", "wlan0"], gateways: ["100.64.0.1", "fe80::1"],
        supportsIPv4: true, supportsIPv6: true, supportsDNS: true, isExpensive: true, isConstrained: true, connectivity: .full
    )
    static let unsatisfied = Path(status: .unsatisfied, unsatisfiedReason: .noCarrier, reachability: .notReachable, connectivity: .none)

    func testRoundTrip() throws {
        let cases: [(name: String, path: Path)] = [
            ("satisfied, every field set", Self.satisfied),
            ("unsatisfied, optionals nil", Self.unsatisfied),
            ("requires connection", Path(status: .requiresConnection, unsatisfiedReason: .connectionRequired, reachability: .notReachable,
                                         flags: [.reachable, .connectionRequired], primaryInterface: "wlan0", primaryInterfaceType: .wifi,
                                         availableInterfaces: ["wlan0"], connectivity: .local)),
        ]
        for c in cases {
            let data = try JSONEncoder().encode(c.path)
            XCTAssertEqual(try JSONDecoder().decode(Path.self, from: data), c.path, c.name)
        }
    }

    func testWireKeysAndValues() throws {
        let data = try JSONEncoder().encode(Self.satisfied)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(Set(object.keys), Self.wireKeys.subtracting(["unsatisfiedReason"]), "keys of a satisfied path (reason omitted)")
        let strings: [(key: String, value: String)] = [
            ("status", "satisfied"), ("reachability", "reachableViaWWAN"), ("primaryInterface", "wwan0"),
            ("primaryInterfaceType", "cellular"), ("connectivity", "full"),
        ]
        for c in strings {
            XCTAssertEqual(object[c.key] as? String, c.value, c.key)
        }
        XCTAssertEqual(object["flags"] as? [String], ["reachable", "isWWAN"], "flags by name")
        XCTAssertEqual(object["gateways"] as? [String], ["100.64.0.1", "fe80::1"], "gateways")
        XCTAssertEqual(object["isExpensive"] as? Bool, true, "isExpensive")

        let unsatisfied = try JSONEncoder().encode(Self.unsatisfied)
        let unsatisfiedObject = try XCTUnwrap(JSONSerialization.jsonObject(with: unsatisfied) as? [String: Any])
        XCTAssertEqual(unsatisfiedObject["unsatisfiedReason"] as? String, "noCarrier", "reason by name")
        XCTAssertTrue(Set(unsatisfiedObject.keys).isSubset(of: Self.wireKeys), "no key outside the IDL")
        XCTAssertEqual(Self.wireKeys.subtracting(unsatisfiedObject.keys), ["primaryInterface", "primaryInterfaceType"],
                       "only the nullable fields may be absent")
    }

    func testDecodesVarlinkNullsAndRejectsUnknownEnums() throws {
        let json = """
        {"status":"unsatisfied","unsatisfiedReason":"noRoute","reachability":"notReachable","flags":[],
         "primaryInterface":null,"primaryInterfaceType":null,"availableInterfaces":["eth0"],"gateways":[],
         "supportsIPv4":false,"supportsIPv6":false,"supportsDNS":false,"isExpensive":false,"isConstrained":false,
         "connectivity":"local"}
        """
        let path = try JSONDecoder().decode(Path.self, from: Data(json.utf8))
        XCTAssertEqual(path, Path(status: .unsatisfied, unsatisfiedReason: .noRoute, reachability: .notReachable,
                                  availableInterfaces: ["eth0"], connectivity: .local), "explicit nulls decode as nil")
        let bad = json.replacingOccurrences(of: "\"noRoute\"", with: "\"noSuchReason\"")
        XCTAssertThrowsError(try JSONDecoder().decode(Path.self, from: Data(bad.utf8)), "unknown reason is rejected")
    }
}
