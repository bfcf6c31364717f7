import ReachabilityCore
import XCTest

/// The stall rule as tables: polls of the host's sockets in, the stalled interfaces out.
final class DataStallTests: XCTestCase {
    /// One poll: the sockets as the kernel reports them, and the stalls expected after it.
    struct Poll {
        var at = 0
        var sockets: [TCPSocketSample]
        /// The sockets destroyed since the previous poll, as the destroy watch drained them.
        var destroyed: [TCPSocketSample] = []
        var stalls: [Int32: Int]
    }

    struct Case {
        var name: String
        var rule = DataStallRule()
        var polls: [Poll]
    }

    /// A socket on eth0 (index 2) with these counters, to 198.51.100.1 unless told.
    private static func socket(
        _ cookie: UInt64, on index: Int32 = 2, _ state: TCPSocketState = .other, to destination: IPAddress = .v4(198, 51, 100, 1),
        uid: UInt32 = 1000, sent: UInt32 = 0, received: UInt32 = 0, retransmitted: UInt32 = 0, lost: UInt32 = 0, unacked: UInt32 = 0
    ) -> TCPSocketSample {
        TCPSocketSample(cookie: cookie, interfaceIndex: index, state: state, destination: destination, uid: uid, segmentsSent: sent,
                        segmentsReceived: received, retransmitted: retransmitted, lost: lost, unacknowledged: unacked)
    }

    private func play(_ row: Case, file: StaticString = #filePath, line: UInt = #line) {
        var detector = DataStallDetector(rule: row.rule)
        for (index, poll) in row.polls.enumerated() {
            XCTAssertEqual(detector.poll(poll.sockets, destroyed: poll.destroyed, at: poll.at).mapValues(\.since), poll.stalls, "\(row.name), poll \(index)", file: file, line: line)
        }
    }

    /// Android's rule alone: one destination is enough (`minimum-destinations = 1`), for the
    /// rows about the counters themselves.
    private static let android = { var rule = DataStallRule(); rule.minimumDestinations = 1; return rule }()

    /// After a sleep (`startAfresh` before the poll marked `wake`): sockets opened before it
    /// count only for what they receive; new traffic still stalls, and the same polls without
    /// the wake still do (the rule is not weakened).
    func testAfterASleep() {
        let networks: [IPAddress] = [.v4(198, 51, 100, 1), .v4(203, 0, 113, 1), .v4(192, 0, 2, 1)]
        let old = { (sent: UInt32, received: UInt32, retransmitted: UInt32, lost: UInt32) in
            (1...3).map { Self.socket(UInt64($0), to: networks[$0 - 1], sent: sent, received: received, retransmitted: retransmitted, lost: lost, unacked: 5) }
        }
        let new = { (retransmitted: UInt32) in
            (4...6).map { Self.socket(UInt64($0), .synSent, to: networks[$0 - 4], sent: 1 + retransmitted, retransmitted: retransmitted, unacked: 1) }
        }
        // (name, polls, the poll the wake comes before (nil: no wake), the stalls after each)
        let rows: [(String, [[TCPSocketSample]], Int?, [[Int32: Int]])] = [
            ("without a wake, old connections retransmitting into nothing are a stall",
             [old(100, 100, 0, 0), old(104, 100, 4, 5), old(106, 100, 6, 5)], nil, [[:], [2: 1], [2: 1]]),
            ("after a wake, the same connections are no stall",
             [old(100, 100, 0, 0), old(104, 100, 4, 5), old(106, 100, 6, 5), old(110, 100, 10, 5)], 1, [[:], [:], [:], [:]]),
            ("after a wake, new connections dying in SYN_SENT still are",
             [old(100, 100, 0, 0), old(104, 100, 4, 5), old(106, 100, 6, 5) + new(0), old(108, 100, 8, 5) + new(1)], 1,
             [[:], [:], [:], [2: 3]]),
            ("after a wake, an old connection that receives shows the path works",
             [old(100, 100, 0, 0), old(104, 100, 4, 5), old(106, 100, 6, 5) + new(0), old(108, 101, 8, 5) + new(1)], 1,
             [[:], [:], [:], [:]]),
            ("the old sockets gone, what is seen afterwards counts again",
             [old(100, 100, 0, 0), old(104, 100, 4, 5), [], old(106, 100, 6, 5), old(110, 100, 10, 5)], 1, [[:], [:], [:], [:], [2: 4]]),
        ]
        for (name, polls, wake, stalls) in rows {
            var detector = DataStallDetector()
            for (index, sockets) in polls.enumerated() {
                if index == wake { detector.startAfresh() }
                XCTAssertEqual(detector.poll(sockets, at: index).mapValues(\.since), stalls[index], "\(name), poll \(index)")
            }
        }
    }

    /// Sockets destroyed between two polls (the kernel's destroy broadcast, watched while a
    /// stall stands): one that received since the previous poll saw it clears its interface's
    /// stall at that poll, as a living one would; one that received nothing, one that received
    /// nothing new and one on another interface leave it standing.
    func testDestroyedSockets() {
        let networks: [IPAddress] = [.v4(198, 51, 100, 1), .v4(203, 0, 113, 1), .v4(192, 0, 2, 1)]
        /// Three SYNs retrying to three networks, `retries` times so far.
        let retrying = { (retries: UInt32) in
            (1...3).map { Self.socket(UInt64($0), .synSent, to: networks[$0 - 1], sent: 1 + retries, retransmitted: retries, unacked: 1) }
        }
        /// The stall on eth0 found at 10, then `last` at 20.
        let stalled = { (last: Poll) in
            [Poll(at: 0, sockets: retrying(0), stalls: [:]), Poll(at: 10, sockets: retrying(1), stalls: [2: 10]), last]
        }
        let rows: [Case] = [
            Case(name: "a GET that connected, was answered and closed between two polls clears the stall", polls: stalled(
                Poll(at: 20, sockets: retrying(2), destroyed: [Self.socket(9, to: networks[0], uid: 0, sent: 4, received: 4)], stalls: [:]))),
            Case(name: "the same after its SYN-ACK alone (a new connection reset at once)", polls: stalled(
                Poll(at: 20, sockets: retrying(2), destroyed: [Self.socket(9, to: networks[1], sent: 2, received: 1)], stalls: [:]))),
            Case(name: "a SYN_SENT given up (destroyed, nothing received): the stall stands", polls: stalled(
                Poll(at: 20, sockets: Array(retrying(2).dropFirst()),
                     destroyed: [Self.socket(1, .synSent, to: networks[0], sent: 3, retransmitted: 2, unacked: 1)], stalls: [2: 10]))),
            Case(name: "a socket destroyed on another interface after receiving: eth0's stall stands", polls: stalled(
                Poll(at: 20, sockets: retrying(2), destroyed: [Self.socket(9, on: 3, to: networks[0], sent: 4, received: 4)], stalls: [2: 10]))),
            Case(name: "a socket destroyed having received nothing since the last poll: the stall stands", polls: [
                Poll(at: 0, sockets: retrying(0) + [Self.socket(4, to: networks[0], sent: 9, received: 9)], stalls: [:]),
                Poll(at: 10, sockets: retrying(1) + [Self.socket(4, to: networks[0], sent: 9, received: 9)], stalls: [2: 10]),
                Poll(at: 20, sockets: retrying(2), destroyed: [Self.socket(4, to: networks[0], sent: 10, received: 9)], stalls: [2: 10]),
            ]),
            Case(name: "one the dump still caught, destroyed before the drain: what it received since the poll before counts", polls: [
                Poll(at: 0, sockets: retrying(0), stalls: [:]),
                Poll(at: 10, sockets: retrying(1) + [Self.socket(4, .synSent, to: networks[0], sent: 1, unacked: 1)], stalls: [2: 10]),
                Poll(at: 20, sockets: retrying(2) + [Self.socket(4, .synSent, to: networks[0], sent: 1, unacked: 1)],
                     destroyed: [Self.socket(4, to: networks[0], sent: 3, received: 2)], stalls: [:]),
            ]),
            Case(name: "without a stall, a destroyed socket that received changes nothing", polls: [
                Poll(at: 0, sockets: [Self.socket(1, sent: 5, received: 5)], destroyed: [Self.socket(9, sent: 4, received: 4)], stalls: [:]),
            ]),
        ]
        for row in rows { play(row) }

        // After a sleep (`startAfresh` before poll 1, the census): new SYNs stall at 30; an old
        // socket destroyed after receiving clears it, one destroyed after receiving nothing new does not.
        let old = { (received: UInt32) in Self.socket(7, to: networks[0], sent: 100, received: received, retransmitted: 5, lost: 5, unacked: 5) }
        for (name, destroyed, stalls) in [("an old socket destroyed after receiving clears the stall", old(101), [Int32: Int]()),
                                          ("an old socket destroyed having received nothing new: it stands", old(100), [2: 30])] {
            var detector = DataStallDetector()
            detector.poll([old(100)], at: 0)
            detector.startAfresh()
            detector.poll([old(100)], at: 10)
            detector.poll([old(100)] + retrying(0), at: 20)
            XCTAssertEqual(detector.poll([old(100)] + retrying(1), at: 30).mapValues(\.since), [2: 30], name)
            XCTAssertEqual(detector.poll(retrying(2), destroyed: [destroyed], at: 40).mapValues(\.since), stalls, name)
        }
    }

    func testStalls() {
        let rows: [Case] = [
            Case(name: "the router stops forwarding under an upload", rule: Self.android, polls: [
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
            Case(name: "too few segments for the percentage to mean anything, then enough", rule: Self.android, polls: [
                Poll(at: 0, sockets: [Self.socket(1, sent: 10, received: 10, unacked: 1)], stalls: [:]),
                Poll(at: 1, sockets: [Self.socket(1, sent: 14, received: 10, retransmitted: 2, lost: 2, unacked: 4)], stalls: [:]),
                // Counted since anything was received: 4 + 6 sent, 4 + 6 failed.
                Poll(at: 5, sockets: [Self.socket(1, sent: 20, received: 10, retransmitted: 8, lost: 2, unacked: 4)], stalls: [2: 5]),
            ]),
            Case(name: "connections die in SYN_SENT", rule: Self.android, polls: [
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
            Case(name: "a stall clears when no socket is left with anything in flight", rule: Self.android, polls: [
                Poll(at: 0, sockets: [Self.socket(1, .synSent, sent: 20, retransmitted: 10, lost: 10, unacked: 10)], stalls: [2: 0]),
                Poll(at: 1, sockets: [Self.socket(1, .synSent, sent: 21, retransmitted: 11, lost: 10, unacked: 10)], stalls: [2: 0]),
                Poll(at: 2, sockets: [], stalls: [:]),
            ]),
            Case(name: "each interface on its own: loss on another interface leaves eth0 alone", rule: Self.android, polls: [
                Poll(at: 0, sockets: [Self.socket(1, sent: 100, received: 100, unacked: 5), Self.socket(2, on: 3, sent: 100, received: 100, unacked: 5)], stalls: [:]),
                Poll(at: 1, sockets: [
                    Self.socket(1, sent: 200, received: 200, unacked: 5), Self.socket(2, on: 3, sent: 120, received: 100, retransmitted: 10, lost: 10, unacked: 5),
                ], stalls: [3: 1]),
            ]),
            Case(name: "a configured rule: 50 % of 4", rule: { var rule = Self.android; rule.failPercent = 50; rule.minimumSegments = 4; return rule }(), polls: [
                Poll(at: 0, sockets: [Self.socket(1, sent: 4, retransmitted: 2, unacked: 2)], stalls: [2: 0]),
            ]),
        ]
        for row in rows { play(row) }
    }

    func testNoFalseAlarms() {
        let rows: [Case] = [
            Case(name: "an idle host", rule: Self.android, polls: [
                Poll(at: 0, sockets: [], stalls: [:]),
                Poll(at: 10, sockets: [Self.socket(1, sent: 5, received: 5)], stalls: [:]),
                Poll(at: 20, sockets: [Self.socket(1, sent: 5, received: 5)], stalls: [:]),
            ]),
            Case(name: "a refused connection (its RST is received, the socket gone)", rule: Self.android, polls: [
                Poll(at: 0, sockets: [Self.socket(1, .synSent, sent: 1, unacked: 1)], stalls: [:]),
                Poll(at: 1, sockets: [], stalls: [:]),
            ]),
            Case(name: "one slow download: few segments, each answered", rule: Self.android, polls: [
                Poll(at: 0, sockets: [Self.socket(1, sent: 3, received: 3)], stalls: [:]),
                Poll(at: 10, sockets: [Self.socket(1, sent: 13, received: 40, unacked: 1)], stalls: [:]),
                Poll(at: 20, sockets: [Self.socket(1, sent: 23, received: 80, retransmitted: 1, unacked: 1)], stalls: [:]),
            ]),
            Case(name: "a timeout under random loss, caught at a poll: answered within the window", rule: Self.android, polls: [
                Poll(at: 0, sockets: [Self.socket(1, sent: 1000, received: 500, unacked: 40)], stalls: [:]),
                Poll(at: 1, sockets: [Self.socket(1, sent: 2000, received: 1000, retransmitted: 41, lost: 40, unacked: 40)], stalls: [:]),
                Poll(at: 2, sockets: [Self.socket(1, sent: 3000, received: 1500, retransmitted: 45, lost: 0, unacked: 40)], stalls: [:]),
            ]),
            Case(name: "2 % random loss under a busy upload", rule: Self.android, polls: [
                Poll(at: 0, sockets: [Self.socket(1, sent: 1000, received: 500, retransmitted: 20, unacked: 40)], stalls: [:]),
                Poll(at: 1, sockets: [Self.socket(1, sent: 2000, received: 1000, retransmitted: 40, lost: 3, unacked: 40)], stalls: [:]),
                Poll(at: 2, sockets: [Self.socket(1, sent: 3000, received: 1500, retransmitted: 60, lost: 1, unacked: 40)], stalls: [:]),
            ]),
            Case(name: "one SYN_SENT retrying is not several", rule: Self.android, polls: [
                Poll(at: 0, sockets: [Self.socket(1, .synSent, sent: 1, unacked: 1)], stalls: [:]),
                Poll(at: 3, sockets: [Self.socket(1, .synSent, sent: 3, retransmitted: 2, unacked: 1)], stalls: [:]),
            ]),
            Case(name: "failures long ago do not add up with later ones once nothing is in flight", rule: Self.android, polls: [
                Poll(at: 0, sockets: [Self.socket(1, sent: 8, retransmitted: 7, unacked: 1)], stalls: [:]),
                Poll(at: 1, sockets: [Self.socket(1, sent: 8, retransmitted: 7)], stalls: [:]),
                Poll(at: 2, sockets: [Self.socket(1, sent: 11, retransmitted: 9, unacked: 1)], stalls: [:]),
            ]),
            Case(name: "a socket seen for the first time with old counters of a live connection", rule: Self.android, polls: [
                Poll(at: 0, sockets: [Self.socket(7, sent: 90_000, received: 90_000, retransmitted: 80_000, unacked: 3)], stalls: [:]),
            ]),
        ]
        for row in rows { play(row) }
    }

    /// The breadth rule (the default: three destinations): what fails must be the path, not
    /// one host or network. Addresses in one IPv4 /24 or IPv6 /64 are one destination.
    func testBreadth() {
        let a: IPAddress = .v4(198, 51, 100, 80), b: IPAddress = .v4(203, 0, 113, 7), c: IPAddress = .v4(192, 0, 2, 9)
        let v6a = IPAddress(bytes: [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0] + [0, 0, 0, 0, 0, 0, 0, 1])!
        let v6b = IPAddress(bytes: [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0] + [0xff, 0, 0, 0, 0, 0, 0, 2])!
        let v6c = IPAddress(bytes: [0x20, 0x01, 0x0d, 0xb8, 0, 2, 0, 0] + [0, 0, 0, 0, 0, 0, 0, 1])!
        /// Three SYNs retrying to `destinations` (by the users in `uids`), silent since the first poll.
        func retryingSYNs(_ destinations: [IPAddress], uids: [UInt32] = [65534, 65534, 65534]) -> [Poll] {
            let first = destinations.enumerated().map { Self.socket(UInt64($0.offset + 1), .synSent, to: $0.element, uid: uids[$0.offset], sent: 1, unacked: 1) }
            let later = destinations.enumerated().map { Self.socket(UInt64($0.offset + 1), .synSent, to: $0.element, uid: uids[$0.offset], sent: 3, retransmitted: 2, unacked: 1) }
            return [Poll(at: 0, sockets: first, stalls: [:]), Poll(at: 10, sockets: later, stalls: [:])]
        }
        var stalled = retryingSYNs([a, b, c])
        stalled[1].stalls = [2: 10]
        var v6Stalled = retryingSYNs([v6a, v6c, c])
        v6Stalled[1].stalls = [2: 10]
        let rows: [Case] = [
            Case(name: "three connections by one user to one firewalled host (its SYNs dropped)", polls: retryingSYNs([a, a, a])),
            Case(name: "connections to ten hosts of one firewalled /24", polls: retryingSYNs(
                (1...10).map { .v4(198, 51, 100, UInt8($0)) }, uids: Array(repeating: 65534, count: 10))),
            Case(name: "any number of users towards one host", polls: retryingSYNs([a, a, a], uids: [0, 1000, 65534])),
            Case(name: "two addresses of one IPv6 /64 and one IPv4 host are two destinations", polls: retryingSYNs([v6a, v6b, a])),
            Case(name: "one established connection whose server vanished mid-stream, retransmitting", polls: [
                Poll(at: 0, sockets: [Self.socket(1, to: a, sent: 500, received: 400, unacked: 10)], stalls: [:]),
                Poll(at: 10, sockets: [Self.socket(1, to: a, sent: 520, received: 400, retransmitted: 20, lost: 10, unacked: 10)], stalls: [:]),
                Poll(at: 20, sockets: [Self.socket(1, to: a, sent: 530, received: 400, retransmitted: 30, lost: 10, unacked: 10)], stalls: [:]),
            ]),
            Case(name: "SYNs retrying to three networks: the path", polls: stalled),
            Case(name: "SYNs retrying to two IPv6 /64s and an IPv4 /24: the path", polls: v6Stalled),
            Case(name: "a dead path under ordinary traffic: uploads to three networks stop being answered", polls: [
                Poll(at: 0, sockets: [Self.socket(1, to: a, sent: 500, received: 400, unacked: 10), Self.socket(2, to: b, sent: 50, received: 40, unacked: 2),
                                      Self.socket(3, to: c, sent: 90, received: 80, unacked: 1)], stalls: [:]),
                // Silence: one host has retransmitted so far; not yet three destinations.
                Poll(at: 10, sockets: [Self.socket(1, to: a, sent: 560, received: 400, retransmitted: 60, unacked: 10),
                                       Self.socket(2, to: b, sent: 50, received: 40, unacked: 2), Self.socket(3, to: c, sent: 90, received: 80, unacked: 1)], stalls: [:]),
                // Then the others' timers fire too: what has failed since the silence began adds up.
                Poll(at: 20, sockets: [Self.socket(1, to: a, sent: 561, received: 400, retransmitted: 61, unacked: 10),
                                       Self.socket(2, to: b, sent: 52, received: 40, retransmitted: 2, unacked: 2),
                                       Self.socket(3, to: c, sent: 91, received: 80, retransmitted: 1, unacked: 1)], stalls: [2: 20]),
            ]),
            Case(name: "one host firewalled while others answer: something is received, no stall", polls: [
                Poll(at: 0, sockets: [Self.socket(1, .synSent, to: a, sent: 1, unacked: 1), Self.socket(2, .synSent, to: a, sent: 1, unacked: 1),
                                      Self.socket(3, .synSent, to: a, sent: 1, unacked: 1), Self.socket(4, to: b, sent: 5, received: 5, unacked: 1)], stalls: [:]),
                Poll(at: 10, sockets: [Self.socket(1, .synSent, to: a, sent: 3, retransmitted: 2, unacked: 1), Self.socket(2, .synSent, to: a, sent: 3, retransmitted: 2, unacked: 1),
                                       Self.socket(3, .synSent, to: a, sent: 3, retransmitted: 2, unacked: 1), Self.socket(4, to: b, sent: 9, received: 9, unacked: 1)], stalls: [:]),
            ]),
            Case(name: "a configured breadth of one: one firewalled host is a stall again", rule: { var rule = DataStallRule(); rule.minimumDestinations = 1; return rule }(),
                 polls: { var polls = retryingSYNs([a, a, a]); polls[1].stalls = [2: 10]; return polls }()),
        ]
        for row in rows { play(row) }
    }

    /// A stall names what it rests on: the unanswered sockets, their destinations, their users.
    func testAStallSaysWhatItRestsOn() {
        var detector = DataStallDetector()
        let destinations: [IPAddress] = [.v4(198, 51, 100, 80), .v4(198, 51, 100, 81), .v4(203, 0, 113, 7), .v4(192, 0, 2, 9)]
        let uids: [UInt32] = [1000, 1000, 0, 1000]
        func sockets(sent: UInt32, retransmitted: UInt32) -> [TCPSocketSample] {
            destinations.enumerated().map {
                Self.socket(UInt64($0.offset + 1), .synSent, to: $0.element, uid: uids[$0.offset], sent: sent, retransmitted: retransmitted, unacked: 1)
            }
        }
        detector.poll(sockets(sent: 1, retransmitted: 0), at: 0)
        let stall = detector.poll(sockets(sent: 2, retransmitted: 1), at: 10)[2]
        XCTAssertEqual(stall, DataStall(since: 10, sockets: 4, destinations: 3, users: 2))
        // Found again, the verdict keeps the evidence it was found on.
        XCTAssertEqual(detector.poll(sockets(sent: 3, retransmitted: 2), at: 20)[2], stall)
    }

    func testAResetDetectorStartsOver() {
        var detector = DataStallDetector(rule: Self.android)
        detector.poll([Self.socket(1, sent: 20, retransmitted: 10, lost: 10, unacked: 10)], at: 0)
        XCTAssertEqual(detector.stalls.mapValues(\.since), [2: 0])
        detector.reset()
        XCTAssertEqual(detector.stalls, [:])
        // The same counters again count from zero: a stall again, since now.
        XCTAssertEqual(detector.poll([Self.socket(1, sent: 20, retransmitted: 10, lost: 10, unacked: 10)], at: 5).mapValues(\.since), [2: 5])
    }

    func testAStallMakesConnectivityLimitedUntilAProbeSinceSaysBetter() {
        var facts = InterfaceConnectivity(ipv4: .full, lastChecked: 100)
        XCTAssertEqual(facts.combined, .full)
        facts.dataStall = DataStall(since: 200, sockets: 3, destinations: 3, users: 1)
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
