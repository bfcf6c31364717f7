@testable import ReachMetrics
import XCTest


/// Who may hold how many connections to the metrics endpoint (slow connections from one peer must not keep a scraper out).
final class MetricsAdmissionTests: XCTestCase {
    private typealias Peer = MetricsAdmission.Peer

    func testOnePeerCannotTakeEverySlot() {
        var books = MetricsAdmission(limits: .init(connections: 5, connectionsPerPeer: 2))
        let slow = Peer.address("127.0.0.2"), scraper = Peer.address("127.0.0.1")
        let steps: [(event: String, peer: Peer, expected: MetricsAdmission.Refusal?)] = [
            ("admit", slow, nil),
            ("admit", slow, nil),
            ("admit", slow, .connectionsPerPeer),       // the third of one peer
            ("admit", slow, .connectionsPerPeer),
            ("admit", scraper, nil),                    // another peer still gets in
            ("admit", .user(65534), nil),
            ("admit", .user(65534), nil),
            ("admit", .user(0), .connections),          // 5 in all
            ("release", slow, nil),
            ("admit", .user(0), nil),                   // a freed slot goes to anyone
            ("admit", slow, .connections),
            ("release", .unknown, nil),                 // a peer holding nothing frees nothing
            ("admit", .unknown, .connections),
        ]
        for (index, step) in steps.enumerated() {
            if step.event == "release" {
                books.release(step.peer)
            } else {
                XCTAssertEqual(books.admit(step.peer), step.expected, "step \(index): \(step.peer)")
            }
        }
        XCTAssertEqual(books.connections, 5)
        XCTAssertEqual(books.connections(of: slow), 1)
        XCTAssertEqual(books.connections(of: .user(65534)), 2)
    }

    func testBuiltInLimits() {
        let limits = MetricsAdmission.Limits()
        XCTAssertLessThan(limits.connectionsPerPeer, limits.connections, "one peer never holds every slot")
        XCTAssertLessThanOrEqual(limits.headDeadline, .seconds(5), "a scraper sends its request at once")
        XCTAssertLessThanOrEqual(limits.connectionDeadline, .seconds(10))
        XCTAssertLessThanOrEqual(limits.requestBytes, 16 << 10)
    }
}
