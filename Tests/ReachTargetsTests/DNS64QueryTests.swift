import ReachabilityCore
import ReachProtocol
import ReachTargets
import XCTest

/// What systemd-resolved's answer for ipv4only.arpa hands `DNS64Discovery`.
final class DNS64QueryTests: XCTestCase {
    private func record(_ bytes: [UInt8]) -> JSONValue {
        .object(["ifindex": .integer(2), "family": .integer(10), "address": .array(bytes.map { .integer(Int($0)) })])
    }

    func testResolvedAnswers() {
        let seventy: [UInt8] = [0, 0x64, 0xFF, 0x9B] + Array(repeating: 0, count: 8) + [192, 0, 0, 170]
        let many = (0..<40).map { [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [UInt8($0)] }
        let cases: [(String, VarlinkReply<JSONObject>, DNS64Discovery.Answer)] = [
            ("a DNS64 answer", VarlinkReply(parameters: ["addresses": .array([record(seventy)])]), .addresses([IPAddress(bytes: seventy)!])),
            ("no such record", VarlinkReply(parameters: [:], error: "io.systemd.Resolve.NoSuchResourceRecord"), .failed),
            ("no servers", VarlinkReply(parameters: [:], error: "io.systemd.Resolve.NoNameServers"), .failed),
            ("NXDOMAIN", VarlinkReply(parameters: ["rcode": .integer(3)], error: "io.systemd.Resolve.DNSError"), .failed),
            ("malformed bytes", VarlinkReply(parameters: ["addresses": .array([record([1, 2, 3])])]), .failed),
            ("many records: only the first are kept", VarlinkReply(parameters: ["addresses": .array(many.map(record))]),
             .addresses(many.prefix(DNS64Discovery.maximumAnswers).map { IPAddress(bytes: $0)! })),
        ]
        for (name, reply, expected) in cases {
            XCTAssertEqual(DNS64Query.answer(ofResolvedReply: reply), expected, name)
        }
    }
}
