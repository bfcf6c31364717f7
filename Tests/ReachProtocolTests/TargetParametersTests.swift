import ReachabilityCore
import XCTest

@testable import ReachProtocol

/// CheckTarget / SubscribeTarget parameters, case by case; `::` and `0.0.0.0`
/// name no host (reachd had answered "reachable via eth0" and "via lo").
final class TargetParametersTests: XCTestCase {
    func testParameters() {
        let cases: [(String, JSONObject, Result<Target, VarlinkError>)] = [
            ("a name", ["host": .string("Example.COM.")], .success(.host("example.com"))),
            ("an address as host", ["host": .string("198.51.100.7")], .success(.address(.v4(198, 51, 100, 7)))),
            ("an address", ["address": .string("2001:db8::1")], .success(.address(IPAddress("2001:db8::1")!))),
            ("loopback is a host", ["address": .string("::1")], .success(.address(IPAddress("::1")!))),
            ("unspecified IPv6 as host", ["host": .string("::")], .failure(.invalidParameter(parameter: "host"))),
            ("unspecified IPv4 as host", ["host": .string("0.0.0.0")], .failure(.invalidParameter(parameter: "host"))),
            ("unspecified IPv6, written long", ["host": .string("0:0:0:0:0:0:0:0")], .failure(.invalidParameter(parameter: "host"))),
            ("unspecified IPv6 as address", ["address": .string("::")], .failure(.invalidParameter(parameter: "address"))),
            ("unspecified IPv4 as address", ["address": .string("0.0.0.0")], .failure(.invalidParameter(parameter: "address"))),
            ("0.0.0.1 is not unspecified", ["address": .string("0.0.0.1")], .success(.address(.v4(0, 0, 0, 1)))),
            ("a malformed name", ["host": .string("not a host")], .failure(.invalidParameter(parameter: "host"))),
            ("a name as address", ["address": .string("example.com")], .failure(.invalidParameter(parameter: "address"))),
            ("neither", [:], .failure(.invalidParameter(parameter: "host"))),
            ("both", ["host": .string("a.test"), "address": .string("192.0.2.1")], .failure(.invalidParameter(parameter: "host"))),
            ("an unknown parameter", ["host": .string("a.test"), "port": .integer(80)], .failure(.invalidParameter(parameter: "port"))),
        ]
        for (name, parameters, expected) in cases {
            let result = Result { () throws(VarlinkError) in try TargetParameters.target(validating: parameters) }
            XCTAssertEqual(result, expected, name)
        }
    }

    /// What reachctl prints after "'TEXT' is ".
    func testProblems() {
        XCTAssertEqual(Target.parse(host: "::"), .failure(.unspecifiedAddress(IPAddress("::")!)))
        XCTAssertEqual("\(Target.Problem.unspecifiedAddress(IPAddress("::")!))", "an unspecified address: it names no host")
        XCTAssertEqual(Target.parse(host: "a b"), .failure(.invalid))
        XCTAssertEqual("\(Target.Problem.invalid)", "neither an address nor a valid host name")
        XCTAssertNil(Target(host: "::"))
        XCTAssertNil(Target(host: "0.0.0.0"))
        XCTAssertEqual(Target(host: "::1"), .address(IPAddress("::1")!))
    }
}
