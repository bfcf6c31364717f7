@testable import ReachMetrics
import XCTest

/// Who may hold how many connections to the metrics endpoint, and who gives way: slow
/// connections (even from the scraper's own address) must not keep a scraper out, and a
/// connection being answered is never cut for a newcomer.
final class MetricsAdmissionTests: XCTestCase {
    private typealias Peer = MetricsAdmission.Peer
    private typealias Decision = MetricsAdmission.Decision

    /// One step of a table: what happens, and for an admission what the books decide.
    private enum Step {
        case admit(Peer, Decision)
        /// The connection's request arrived whole.
        case complete(Int)
        case release(Int)
    }

    private static func connection(_ id: Int) -> MetricsAdmission.Connection { .init(id: id) }

    private static func evicting(_ id: Int, _ evicted: Int, of peer: Peer, _ limit: MetricsAdmission.Refusal) -> Decision {
        .admitEvicting(connection(id), .init(connection: connection(evicted), peer: peer, limit: limit))
    }

    /// Runs `steps`, checking each decision and the connections open after it (in all, and of each peer).
    private func run(
        _ limits: MetricsAdmission.Limits, _ steps: [(step: Step, open: Int, byPeer: [Peer: Int])],
        file: StaticString = #filePath, line: UInt = #line
    ) {
        var books = MetricsAdmission(limits: limits)
        for (index, row) in steps.enumerated() {
            switch row.step {
            case let .admit(peer, expected):
                XCTAssertEqual(books.admit(peer), expected, "step \(index): \(peer)", file: file, line: line)
            case let .complete(id):
                books.requestComplete(Self.connection(id))
            case let .release(id):
                books.release(Self.connection(id))
            }
            XCTAssertEqual(books.connections, row.open, "step \(index): open", file: file, line: line)
            XCTAssertLessThanOrEqual(books.connections, limits.connections, "step \(index)", file: file, line: line)
            for (peer, held) in row.byPeer {
                XCTAssertEqual(books.connections(of: peer), held, "step \(index): \(peer)", file: file, line: line)
            }
        }
    }

    func testAtThePerPeerCapTheOldestIncompleteOfThatPeerGivesWay() {
        let slow = Peer.address("127.0.0.2"), other = Peer.user(65534)
        run(.init(connections: 6, connectionsPerPeer: 2), [
            (.admit(slow, .admit(Self.connection(1))), 1, [slow: 1]),
            (.admit(slow, .admit(Self.connection(2))), 2, [slow: 2]),
            (.admit(other, .admit(Self.connection(3))), 3, [slow: 2, other: 1]),
            // At the cap: the oldest of that peer still sending its head goes, not another peer's.
            (.admit(slow, Self.evicting(4, 1, of: slow, .connectionsPerPeer)), 3, [slow: 2, other: 1]),
            (.complete(2), 3, [slow: 2]),
            // 2 is being answered, so 4 (newer, still sending) is the one that goes.
            (.admit(slow, Self.evicting(5, 4, of: slow, .connectionsPerPeer)), 3, [slow: 2]),
            (.complete(5), 3, [slow: 2]),
            // Every connection of the peer is being answered: refused, nobody is cut.
            (.admit(slow, .refuse(.connectionsPerPeer)), 3, [slow: 2, other: 1]),
            // Releasing an evicted connection (its close comes later) frees nothing twice.
            (.release(1), 3, [slow: 2, other: 1]),
            (.release(4), 3, [slow: 2, other: 1]),
            (.release(99), 3, [slow: 2, other: 1]),
            (.release(2), 2, [slow: 1, other: 1]),
            (.admit(slow, .admit(Self.connection(6))), 3, [slow: 2, other: 1]),
        ])
    }

    func testSlowConnectionsFromTheScrapersAddressGiveWayToIt() {
        // 127.0.0.1 is every local program's: the slow connections and the scraper are one peer.
        let local = Peer.address("127.0.0.1")
        run(.init(connections: 32, connectionsPerPeer: 4), [
            (.admit(local, .admit(Self.connection(1))), 1, [local: 1]),
            (.admit(local, .admit(Self.connection(2))), 2, [local: 2]),
            (.admit(local, .admit(Self.connection(3))), 3, [local: 3]),
            (.admit(local, .admit(Self.connection(4))), 4, [local: 4]),
            (.admit(local, Self.evicting(5, 1, of: local, .connectionsPerPeer)), 4, [local: 4]),  // the scraper
            (.complete(5), 4, [local: 4]),
            // More slow ones keep coming: each evicts the oldest slow one, never the scraper.
            (.admit(local, Self.evicting(6, 2, of: local, .connectionsPerPeer)), 4, [local: 4]),
            (.admit(local, Self.evicting(7, 3, of: local, .connectionsPerPeer)), 4, [local: 4]),
            (.admit(local, Self.evicting(8, 4, of: local, .connectionsPerPeer)), 4, [local: 4]),
            (.admit(local, Self.evicting(9, 6, of: local, .connectionsPerPeer)), 4, [local: 4]),
            (.release(5), 3, [local: 3]),  // answered
        ])
    }

    func testAtTheTotalCapTheOldestIncompleteOfAnyoneGivesWay() {
        let a = Peer.address("127.0.0.2"), b = Peer.address("127.0.0.3"), c = Peer.user(0)
        run(.init(connections: 4, connectionsPerPeer: 3), [
            (.admit(a, .admit(Self.connection(1))), 1, [a: 1]),
            (.admit(a, .admit(Self.connection(2))), 2, [a: 2]),
            (.admit(b, .admit(Self.connection(3))), 3, [b: 1]),
            (.complete(1), 3, [a: 2]),
            (.admit(b, .admit(Self.connection(4))), 4, [a: 2, b: 2]),
            // 1 is being answered; 2 is the oldest still sending, whoever's it is.
            (.admit(c, Self.evicting(5, 2, of: a, .connections)), 4, [a: 1, b: 2, c: 1]),
            (.admit(c, Self.evicting(6, 3, of: b, .connections)), 4, [a: 1, b: 1, c: 2]),
            (.complete(4), 4, [a: 1, b: 1, c: 2]),
            (.complete(5), 4, [a: 1, b: 1, c: 2]),
            (.complete(6), 4, [a: 1, b: 1, c: 2]),
            // Every connection is being answered: refused.
            (.admit(c, .refuse(.connections)), 4, [a: 1, b: 1, c: 2]),
            (.admit(a, .refuse(.connections)), 4, [a: 1, b: 1, c: 2]),
            (.release(2), 4, [a: 1, b: 1, c: 2]),
            (.release(5), 3, [a: 1, b: 1, c: 1]),
            (.admit(.unknown, .admit(Self.connection(7))), 4, [c: 1, .unknown: 1]),
        ])
    }

    func testAtBothCapsThePeerGivesWayToItself() {
        let a = Peer.address("127.0.0.2"), b = Peer.address("127.0.0.3")
        run(.init(connections: 4, connectionsPerPeer: 2), [
            (.admit(b, .admit(Self.connection(1))), 1, [b: 1]),
            (.admit(a, .admit(Self.connection(2))), 2, [a: 1]),
            (.admit(b, .admit(Self.connection(3))), 3, [b: 2]),
            (.admit(a, .admit(Self.connection(4))), 4, [a: 2, b: 2]),
            // b's 1 is older, but a is at its own cap: a's oldest goes, b keeps its slots.
            (.admit(a, Self.evicting(5, 2, of: a, .connectionsPerPeer)), 4, [a: 2, b: 2]),
            (.complete(4), 4, [a: 2]),
            (.complete(5), 4, [a: 2]),
            // a is at its cap with both answered: refused, even though b's are evictable.
            (.admit(a, .refuse(.connectionsPerPeer)), 4, [a: 2, b: 2]),
        ])
    }

    /// Any mix of admissions, completions and closes: the books never pass a cap, never cut a
    /// connection being answered, and count what is open.
    func testTheCapsHoldAndAnsweredConnectionsStayWhateverHappens() {
        let limits = MetricsAdmission.Limits(connections: 6, connectionsPerPeer: 3)
        let peers: [Peer] = [.address("127.0.0.1"), .address("127.0.0.2"), .user(0), .unknown]
        var books = MetricsAdmission(limits: limits)
        var open: [MetricsAdmission.Connection: (peer: Peer, complete: Bool)] = [:]
        var random = SplitMix64(seed: 35)
        for step in 0..<5000 {
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                let peer = peers.randomElement(using: &random)!
                switch books.admit(peer) {
                case let .admit(connection):
                    open[connection] = (peer, false)
                case let .admitEvicting(connection, eviction):
                    let evicted = open.removeValue(forKey: eviction.connection)
                    XCTAssertEqual(evicted?.complete, false, "step \(step): only a connection still sending is evicted")
                    XCTAssertEqual(evicted?.peer, eviction.peer, "step \(step)")
                    if eviction.limit == .connectionsPerPeer { XCTAssertEqual(eviction.peer, peer, "step \(step)") }
                    open[connection] = (peer, false)
                case let .refuse(limit):
                    let counted = open.values.filter { limit == .connections || $0.peer == peer }
                    XCTAssertTrue(counted.allSatisfy(\.complete), "step \(step): refused while one could give way")
                }
            case 1:
                if let connection = open.keys.randomElement(using: &random) {
                    books.requestComplete(connection)
                    open[connection]?.complete = true
                }
            default:
                if let connection = open.keys.randomElement(using: &random) {
                    books.release(connection)
                    open[connection] = nil
                }
            }
            XCTAssertEqual(books.connections, open.count, "step \(step)")
            XCTAssertLessThanOrEqual(books.connections, limits.connections, "step \(step)")
            for peer in peers {
                let held = open.values.filter { $0.peer == peer }.count
                XCTAssertEqual(books.connections(of: peer), held, "step \(step): \(peer)")
                XCTAssertLessThanOrEqual(held, limits.connectionsPerPeer, "step \(step): \(peer)")
            }
        }
    }

    func testBuiltInLimits() {
        let limits = MetricsAdmission.Limits()
        XCTAssertLessThan(limits.connectionsPerPeer, limits.connections, "one peer never holds every slot")
        XCTAssertLessThanOrEqual(limits.headDeadline, .seconds(5), "a scraper sends its request at once")
        XCTAssertLessThanOrEqual(limits.connectionDeadline, .seconds(10))
        XCTAssertLessThanOrEqual(limits.requestBytes, 16 << 10)
    }
}

/// A seeded generator, so a failing mix runs again the same way.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
