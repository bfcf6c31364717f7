import ReachabilityCore
@testable import ReachServer
import XCTest

/// Who is told about which group's changes, and who waits for the routes read at start.
final class SubscribersTests: XCTestCase {
    private let wifi = PathFilter(requiredInterfaceType: .wifi)

    private func members(_ subscribers: Subscribers<String>, _ filter: PathFilter) -> [String] {
        subscribers.group(.path(filter)).map { $0.sorted() } ?? []
    }

    func testGroupsFollowSubscribersInAndOut() {
        var subscribers = Subscribers<String>()
        subscribers.add("a", id: 1, to: .path(.none))
        subscribers.add("b", id: 2, to: .path(wifi))
        subscribers.add("c", id: 3, to: .path(wifi))
        subscribers.add("s", id: 4, to: .summary)
        XCTAssertEqual(subscribers.count, 4)
        XCTAssertEqual(members(subscribers, .none), ["a"])
        XCTAssertEqual(members(subscribers, wifi), ["b", "c"])
        XCTAssertEqual(subscribers.group(.summary).map { $0.sorted() }, ["s"])

        XCTAssertEqual(subscribers.remove(2), .path(wifi), "what to unsubscribe from in the publication")
        XCTAssertEqual(members(subscribers, wifi), ["c"])
        XCTAssertNil(subscribers.remove(2), "only once")
        XCTAssertEqual(subscribers.remove(1), .path(.none))
        XCTAssertNil(subscribers.group(.path(.none)), "an empty group is gone")
        XCTAssertEqual(subscribers.remove(4), .summary)
        XCTAssertNil(subscribers.group(.summary))
        XCTAssertNil(subscribers.remove(9), "never subscribed")
        XCTAssertEqual(subscribers.count, 1)
    }

    func testHeldSubscribersAreReleasedOnceTheirAnswerIsReadyOrForgottenWhenTheyLeave() {
        var subscribers = Subscribers<String>()
        subscribers.hold(.init(member: "w", ticket: ConnectionTicket(id: 1, uid: 0), subscription: .path(wifi)))
        subscribers.hold(.init(member: "n", ticket: ConnectionTicket(id: 2, uid: 0), subscription: .summary))
        subscribers.hold(.init(member: "gone", ticket: ConnectionTicket(id: 3, uid: 0), subscription: .path(.none)))
        XCTAssertEqual(subscribers.count, 0, "held subscribers are not members yet")
        XCTAssertNil(subscribers.remove(3), "a held subscriber that leaves was never subscribed")

        XCTAssertEqual(subscribers.release { $0 == .none }.map(\.member), ["n"], "a summary follows the unfiltered answer")
        XCTAssertEqual(subscribers.release { $0 == .none }.map(\.member), [], "released once")
        XCTAssertEqual(subscribers.release { _ in true }.map(\.member), ["w"])
        XCTAssertEqual(subscribers.release { _ in true }.count, 0)
    }
}
