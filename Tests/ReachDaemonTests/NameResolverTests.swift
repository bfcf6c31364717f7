import CLinux
import Glibc
import ReachabilityCore
import ReachProtocol
import XCTest

@testable import ReachDaemon

/// What a resolver's answer means for a target: systemd-resolved's Varlink replies and
/// getaddrinfo's error codes, each to one reason. The integration tests ask real ones.
final class NameResolverTests: XCTestCase {
    func testResolvedReplies() {
        let address: (Int, [Int]) -> JSONValue = { family, bytes in
            .object(["ifindex": .integer(2), "family": .integer(family), "address": .array(bytes.map { .integer($0) })])
        }
        let cases: [(String, VarlinkReply<JSONObject>, NameResolver.Outcome)] = [
            ("two families, a duplicate",
             VarlinkReply(parameters: ["addresses": .array([address(10, [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [5]),
                                                            address(2, [198, 51, 100, 5]), address(2, [198, 51, 100, 5])])]),
             .addresses([IPAddress("2001:db8::5")!, IPAddress("198.51.100.5")!])),
            ("no addresses", VarlinkReply(parameters: ["addresses": .array([])]), .failed(.nameNotFound)),
            ("malformed address bytes", VarlinkReply(parameters: ["addresses": .array([address(2, [1, 2, 300, 4])])]), .failed(.nameNotFound)),
            ("NXDOMAIN", VarlinkReply(parameters: ["rcode": .integer(3)], error: "io.systemd.Resolve.DNSError"), .failed(.nameNotFound)),
            ("SERVFAIL", VarlinkReply(parameters: ["rcode": .integer(2)], error: "io.systemd.Resolve.DNSError"), .failed(.resolutionFailed)),
            ("DNSError without rcode", VarlinkReply(parameters: [:], error: "io.systemd.Resolve.DNSError"), .failed(.resolutionFailed)),
            ("no such record", VarlinkReply(parameters: nil, error: "io.systemd.Resolve.NoSuchResourceRecord"), .failed(.nameNotFound)),
            ("no servers", VarlinkReply(parameters: nil, error: "io.systemd.Resolve.NoNameServers"), .failed(.noDNSServer)),
            ("timed out", VarlinkReply(parameters: nil, error: "io.systemd.Resolve.QueryTimedOut"), .failed(.resolutionTimedOut)),
            ("attempts exhausted", VarlinkReply(parameters: nil, error: "io.systemd.Resolve.MaxAttemptsReached"), .failed(.resolutionTimedOut)),
            ("anything else", VarlinkReply(parameters: nil, error: "io.systemd.Resolve.InvalidReply"), .failed(.resolutionFailed)),
        ]
        for (name, reply, expected) in cases {
            XCTAssertEqual(NameResolver.outcome(ofResolvedReply: reply), expected, name)
        }
    }

    func testGetaddrinfoErrors() {
        let cases: [(Int32, Bool, UnsatisfiedReason)] = [
            (EAI_NONAME, true, .nameNotFound), (reachd_EAI_NODATA, true, .nameNotFound), (EAI_NONAME, false, .nameNotFound),
            (EAI_AGAIN, true, .resolutionTimedOut), (EAI_AGAIN, false, .noDNSServer),
            (EAI_FAIL, true, .resolutionFailed), (EAI_FAIL, false, .noDNSServer), (EAI_SYSTEM, true, .resolutionFailed),
        ]
        for (status, servers, expected) in cases {
            XCTAssertEqual(NameResolver.reason(forError: status, hasNameserver: servers), expected, "\(status) servers: \(servers)")
        }
    }
}
