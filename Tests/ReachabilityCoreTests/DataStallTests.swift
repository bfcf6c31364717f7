import ReachabilityCore
import XCTest

/// The stall rule as tables: polls of the host's sockets in, the stalled interfaces out.
final class DataStallTests: XCTestCase {
    /// One poll: the sockets as the kernel reports them, and the stalls expected after it.
    struct Poll {
        var at = 0
        var sockets: [TCPSocketSample]
        var stalls: [Int32: Int]
    }

    struct Case {
        var name: String
        var rule = DataStallRule()
        var polls: [Poll]
    }

    /// A socket on eth0 (index 2) with these counters.
    private static func socket(
        _ cookie: UInt64, on index: Int32 = 2, _ state: TCPSocketState = .other, sent: UInt32 = 0, received: UInt32 = 0,
        retransmitted: UInt32 = 0, lost: UInt32 = 0, unacked: UInt32 = 0
    ) -> TCPSocketSample {
        TCPSocketSample(cookie: cookie, interfaceIndex: index, state: state, segmentsSent: sent, segmentsReceived: received,
                        retransmitted: retransmitted, lost: lost, unacknowledged: unacked)
    }

    private func play(_ row: Case, file: StaticString = #filePath, line: UInt = #line) {
        var detector = DataStallDetector(rule: row.rule)
        for (index, poll) in row.polls.enumerated() {
            XCTAssertEqual(detector.poll(poll.sockets, at: poll.at), poll.stalls, "\(row.name), poll \(index)", file: file, line: line)
        }
    }

    func testStalls() {
        let rows: [Case] = [
            Case(name: "the router stops forwarding under an upload", polls: [
                Poll(at: 0, sockets: [Self.socket(1, sent: 500, received: 400, unacked: 10)], stalls: [:]),
                // Cut after some acknowledgements came: what is in flight is presumed lost at the
                // timeout and retransmitted. Not judged yet: something was received in the window.
                Poll(at: 1, sockets: [Self.socket(1, sent: 900, received: 700, retransmitted: 1, lost: 12, unacked: 12)], stalls: [:]),
                // Silence: 12 + 2 sent since, 12 + 2 failed.
                Poll(at: 2, sockets: [Self.socket(1, sent: 902, received: 700, retransmitted: 3, lost: 12, unacked: 12)], stalls: [2: 2]),
                Poll(at: 3, sockets: [Self.socket(1, sent: 903, received: 700, retransmitted: 4, lost: 12, unacked: 12)], stalls: [2: 2]),
                // Acknowledged again: cleared.
                Poll(at: 4, sockets: [Self.socket(1, sent: 930, received: 710, retransmitted: 4, lost: 0, unacked: 3)], stalls: [:]),
            ]),
            Case(name: "too few segments for the percentage to mean anything, then enough", polls: [
                Poll(at: 0, sockets: [Self.socket(1, sent: 10, received: 10, unacked: 1)], stalls: [:]),
                Poll(at: 1, sockets: [Self.socket(1, sent: 14, received: 10, retransmitted: 2, lost: 2, unacked: 4)], stalls: [:]),
                // Counted since anything was received: 4 + 6 sent, 4 + 6 failed.
                Poll(at: 5, sockets: [Self.socket(1, sent: 20, received: 10, retransmitted: 8, lost: 2, unacked: 4)], stalls: [2: 5]),
            ]),
            Case(name: "connections die in SYN_SENT", polls: [
                Poll(at: 0, sockets: [Self.socket(1, .synSent, sent: 1, unacked: 1), Self.socket(2, .synSent, sent: 1, unacked: 1)], stalls: [:]),
                Poll(at: 1, sockets: [
                    Self.socket(1, .synSent, sent: 2, retransmitted: 1, unacked: 1), Self.socket(2, .synSent, sent: 2, retransmitted: 1, unacked: 1),
                    Self.socket(3, .synSent, sent: 2, retransmitted: 1, unacked: 1),
                ], stalls: [2: 1]),
                // One connects (its SYN-ACK came back): the path carries traffic.
                Poll(at: 2, sockets: [
                    Self.socket(1, .synSent, sent: 3, retransmitted: 2, unacked: 1), Self.socket(3, sent: 3, received: 1, retransmitted: 1),
                ], stalls: [:]),
            ]),
            Case(name: "a stall clears when no socket is left with anything in flight", polls: [
                Poll(at: 0, sockets: [Self.socket(1, .synSent, sent: 20, retransmitted: 10, lost: 10, unacked: 10)], stalls: [2: 0]),
                Poll(at: 1, sockets: [Self.socket(1, .synSent, sent: 21, retransmitted: 11, lost: 10, unacked: 10)], stalls: [2: 0]),
                Poll(at: 2, sockets: [], stalls: [:]),
            ]),
            Case(name: "each interface on its own: loss on another interface leaves eth0 alone", polls: [
                Poll(at: 0, sockets: [Self.socket(1, sent: 100, received: 100, unacked: 5), Self.socket(2, on: 3, sent: 100, received: 100, unacked: 5)], stalls: [:]),
                Poll(at: 1, sockets: [
                    Self.socket(1, sent: 200, received: 200, unacked: 5), Self.socket(2, on: 3, sent: 120, received: 100, retransmitted: 10, lost: 10, unacked: 5),
                ], stalls: [3: 1]),
            ]),
            Case(name: "a configured rule: 50 % of 4", rule: { var rule = DataStallRule(); rule.failPercent = 50; rule.minimumSegments = 4; return rule }(), polls: [
                Poll(at: 0, sockets: [Self.socket(1, sent: 4, retransmitted: 2, unacked: 2)], stalls: [2: 0]),
            ]),
        ]
        for row in rows { play(row) }
    }

    func testNoFalseAlarms() {
        let rows: [Case] = [
            Case(name: "an idle host", polls: [
                Poll(at: 0, sockets: [], stalls: [:]),
                Poll(at: 10, sockets: [Self.socket(1, sent: 5, received: 5)], stalls: [:]),
                Poll(at: 20, sockets: [Self.socket(1, sent: 5, received: 5)], stalls: [:]),
            ]),
            Case(name: "a refused connection (its RST is received, the socket gone)", polls: [
                Poll(at: 0, sockets: [Self.socket(1, .synSent, sent: 1, unacked: 1)], stalls: [:]),
                Poll(at: 1, sockets: [], stalls: [:]),
            ]),
            Case(name: "one slow download: few segments, each answered", polls: [
                Poll(at: 0, sockets: [Self.socket(1, sent: 3, received: 3)], stalls: [:]),
                Poll(at: 10, sockets: [Self.socket(1, sent: 13, received: 40, unacked: 1)], stalls: [:]),
                Poll(at: 20, sockets: [Self.socket(1, sent: 23, received: 80, retransmitted: 1, unacked: 1)], stalls: [:]),
            ]),
            Case(name: "a timeout under random loss, caught at a poll: answered within the window", polls: [
                Poll(at: 0, sockets: [Self.socket(1, sent: 1000, received: 500, unacked: 40)], stalls: [:]),
                Poll(at: 1, sockets: [Self.socket(1, sent: 2000, received: 1000, retransmitted: 41, lost: 40, unacked: 40)], stalls: [:]),
                Poll(at: 2, sockets: [Self.socket(1, sent: 3000, received: 1500, retransmitted: 45, lost: 0, unacked: 40)], stalls: [:]),
            ]),
            Case(name: "2 % random loss under a busy upload", polls: [
                Poll(at: 0, sockets: [Self.socket(1, sent: 1000, received: 500, retransmitted: 20, unacked: 40)], stalls: [:]),
                Poll(at: 1, sockets: [Self.socket(1, sent: 2000, received: 1000, retransmitted: 40, lost: 3, unacked: 40)], stalls: [:]),
                Poll(at: 2, sockets: [Self.socket(1, sent: 3000, received: 1500, retransmitted: 60, lost: 1, unacked: 40)], stalls: [:]),
            ]),
            Case(name: "one SYN_SENT retrying is not several", polls: [
                Poll(at: 0, sockets: [Self.socket(1, .synSent, sent: 1, unacked: 1)], stalls: [:]),
                Poll(at: 3, sockets: [Self.socket(1, .synSent, sent: 3, retransmitted: 2, unacked: 1)], stalls: [:]),
            ]),
            Case(name: "failures long ago do not add up with later ones once nothing is in flight", polls: [
                Poll(at: 0, sockets: [Self.socket(1, sent: 8, retransmitted: 7, unacked: 1)], stalls: [:]),
                Poll(at: 1, sockets: [Self.socket(1, sent: 8, retransmitted: 7)], stalls: [:]),
                Poll(at: 2, sockets: [Self.socket(1, sent: 11, retransmitted: 9, unacked: 1)], stalls: [:]),
            ]),
            Case(name: "a socket seen for the first time with old counters of a live connection", polls: [
                Poll(at: 0, sockets: [Self.socket(7, sent: 90_000, received: 90_000, retransmitted: 80_000, unacked: 3)], stalls: [:]),
            ]),
        ]
        for row in rows { play(row) }
    }

    func testAResetDetectorStartsOver() {
        var detector = DataStallDetector()
        detector.poll([Self.socket(1, sent: 20, retransmitted: 10, lost: 10, unacked: 10)], at: 0)
        XCTAssertEqual(detector.stalls, [2: 0])
        detector.reset()
        XCTAssertEqual(detector.stalls, [:])
        // The same counters again count from zero: a stall again, since now.
        XCTAssertEqual(detector.poll([Self.socket(1, sent: 20, retransmitted: 10, lost: 10, unacked: 10)], at: 5), [2: 5])
    }

    func testAStallMakesConnectivityLimitedUntilAProbeSinceSaysBetter() {
        var facts = InterfaceConnectivity(ipv4: .full, lastChecked: 100)
        XCTAssertEqual(facts.combined, .full)
        facts.dataStallSince = 200
        XCTAssertEqual(facts.combined, .limited)
        XCTAssertEqual(facts.cause, .dataStall)
        facts.lastChecked = 201
        facts.ipv4 = .limited
        XCTAssertEqual(facts.combined, .limited)
        XCTAssertEqual(facts.cause, .dataStall)
        facts.ipv4 = .full
        XCTAssertEqual(facts.combined, .full, "a probe round since the stall reached the server")
        XCTAssertNil(facts.cause)
        facts.captivePortal = CaptivePortal(captive: true)
        facts.lastChecked = 100
        XCTAssertEqual(facts.combined, .portal)
        XCTAssertNil(facts.cause)
    }
}
