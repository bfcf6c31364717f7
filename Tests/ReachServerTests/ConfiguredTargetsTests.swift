import ReachabilityCore
import ReachConfiguration
import ReachProtocol
@testable import ReachServer
import XCTest

/// What a new `[targets] watch` list starts and stops, and what `GetStatus` then lists.
final class ConfiguredTargetsTests: XCTestCase {
    private let db = WatchedTarget(.host("db.internal"))
    private let dbAs1000 = WatchedTarget(.host("db.internal"), uid: 1000)
    private let address = WatchedTarget(.address(IPAddress("10.0.0.5")!))
    private let answer = TargetPath(status: .satisfied, reachability: .reachableViaWired)

    func testReplacements() {
        var configured = ConfiguredTargets()
        XCTAssertNil(configured.statuses, "nothing configured: GetStatus has no targets")

        let first = configured.replace(with: [db, address])
        XCTAssertEqual(first.start.map(\.target), [db, address])
        XCTAssertEqual(first.start.map(\.id), [-1, -2], "negative: never a connection's id")
        XCTAssertEqual(first.stop, [])
        XCTAssertEqual(configured.record(answer, id: -1), db)
        XCTAssertEqual(configured.statuses, [WatchedTargetStatus(target: "db.internal", path: answer), WatchedTargetStatus(target: "10.0.0.5")])

        // The same list again: nothing starts or stops, the answer is kept.
        let same = configured.replace(with: [db, address])
        XCTAssertTrue(same.start.isEmpty && same.stop.isEmpty)
        XCTAssertEqual(configured.statuses?.first?.path, answer)

        // One kept (its id and answer too), one dropped, one added with a fresh id; the new order.
        let next = configured.replace(with: [dbAs1000, db])
        XCTAssertEqual(next.start.map(\.target), [dbAs1000])
        XCTAssertEqual(next.start.map(\.id), [-3])
        XCTAssertEqual(next.stop, [-2])
        XCTAssertEqual(configured.statuses, [WatchedTargetStatus(target: "db.internal", uid: 1000), WatchedTargetStatus(target: "db.internal", path: answer)])
        XCTAssertNil(configured.record(answer, id: -2), "a dropped target's late answer is not recorded")
        XCTAssertEqual(configured.count, 2)

        let none = configured.replace(with: [])
        XCTAssertEqual(none.stop, [-3, -1])
        XCTAssertNil(configured.statuses)
    }

    /// GetStatus with targets carries the status reply's fields and `targets` in one object,
    /// and reads back the same.
    func testStatusWithTargetsOnTheWire() throws {
        let status = StatusReply(sequence: 3, instance: "run", path: Path(status: .unsatisfied, reachability: .notReachable))
        let reply = StatusWithTargets(status: status, targets: [WatchedTargetStatus(target: "db.internal", uid: 1000, path: answer)])
        let object = try VarlinkCoding.decode(JSONObject.self, from: VarlinkCoding.encode(reply))
        XCTAssertEqual(Set(object.keys), ["sequence", "instance", "path", "targets"])
        XCTAssertEqual(try VarlinkCoding.decode(StatusWithTargets.self, from: VarlinkCoding.encode(reply)), reply)
        XCTAssertEqual(try VarlinkCoding.decode(StatusReply.self, from: VarlinkCoding.encode(reply)), status, "a StatusReply client ignores targets")
        let without = try VarlinkCoding.decode(StatusWithTargets.self, from: VarlinkCoding.encode(status))
        XCTAssertNil(without.targets)
    }
}
