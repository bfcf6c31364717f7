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
        let fe80b = IPAddress("fe80::b")!
        let scoped: [(String, JSONObject, Result<Target, VarlinkError>)] = [
            ("a scoped link-local address", ["address": .string("fe80::b%eth0")], .success(.scopedAddress(fe80b, interface: "eth0"))),
            ("a scoped link-local address as host", ["host": .string("FE80::B%eth0")], .success(.scopedAddress(fe80b, interface: "eth0"))),
            ("a scope by index", ["address": .string("fe80::b%2")], .success(.scopedAddress(fe80b, interface: "2"))),
            ("the longest interface name", ["address": .string("fe80::b%abcdefghijklmno")],
             .success(.scopedAddress(fe80b, interface: "abcdefghijklmno"))),
            ("a name one byte too long", ["address": .string("fe80::b%abcdefghijklmnop")], .failure(.invalidParameter(parameter: "address"))),
            ("an empty scope", ["address": .string("fe80::b%")], .failure(.invalidParameter(parameter: "address"))),
            ("a slash in the name", ["address": .string("fe80::b%a/b")], .failure(.invalidParameter(parameter: "address"))),
            ("a colon in the name", ["address": .string("fe80::b%eth0:1")], .failure(.invalidParameter(parameter: "address"))),
            ("white space in the name", ["address": .string("fe80::b%eth 0")], .failure(.invalidParameter(parameter: "address"))),
            ("a control character in the name", ["address": .string("fe80::b%eth\u{1b}[2J")], .failure(.invalidParameter(parameter: "address"))),
            ("non-ASCII in the name", ["address": .string("fe80::b%ethé")], .failure(.invalidParameter(parameter: "address"))),
            ("dot-dot", ["address": .string("fe80::b%..")], .failure(.invalidParameter(parameter: "address"))),
            ("a scope on a global address", ["address": .string("2001:db8::1%eth0")], .failure(.invalidParameter(parameter: "address"))),
            ("a scope on IPv4 link-local", ["host": .string("169.254.1.1%eth0")], .failure(.invalidParameter(parameter: "host"))),
            ("a scope on a name", ["host": .string("router.local%eth0")], .failure(.invalidParameter(parameter: "host"))),
            ("link-local IPv6 without a scope", ["address": .string("fe80::b")], .failure(.invalidParameter(parameter: "address"))),
            ("link-local IPv6 without a scope as host", ["host": .string("fe80::b")], .failure(.invalidParameter(parameter: "host"))),
            ("IPv4 link-local needs no scope", ["address": .string("169.254.1.1")], .success(.address(.v4(169, 254, 1, 1)))),
        ]
        for (name, parameters, expected) in scoped {
            let result = Result { () throws(VarlinkError) in try TargetParameters.target(validating: parameters) }
            XCTAssertEqual(result, expected, name)
        }
        // The reply and the parameters carry a scoped address as it is written.
        XCTAssertEqual(Target.scopedAddress(fe80b, interface: "eth0").description, "fe80::b%eth0")
        XCTAssertEqual(TargetParameters(.scopedAddress(fe80b, interface: "eth0")).address, "fe80::b%eth0")
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
        XCTAssertEqual(Target.parse(host: "fe80::1"), .failure(.unscopedLinkLocal(IPAddress("fe80::1")!)))
        XCTAssertEqual("\(Target.Problem.unscopedLinkLocal(IPAddress("fe80::1")!))", "a link-local address without an interface: write fe80::1%INTERFACE")
        XCTAssertEqual(Target.parse(host: "2001:db8::1%eth0"), .failure(.invalidScope))
    }
}
