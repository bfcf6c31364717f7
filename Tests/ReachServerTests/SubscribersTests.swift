import ReachabilityCore
@testable import ReachServer
import XCTest

/// Whose handler an update goes to, and who waits for the routes read at start.
final class SubscribersTests: XCTestCase {
    private let wifi = PathFilter(requiredInterfaceType: .wifi)

    func testHandlersComeAndGoByConnection() {
        var subscribers = Subscribers<String>()
        subscribers.add("a", id: 1)
        subscribers.add("b", id: 2)
        XCTAssertEqual(subscribers[1], "a")
        XCTAssertEqual(subscribers[2], "b")
        XCTAssertNil(subscribers[3], "never subscribed")
        subscribers.remove(1)
        XCTAssertNil(subscribers[1], "gone with its connection")
        XCTAssertEqual(subscribers[2], "b", "the others stay")
        subscribers.remove(1)
        XCTAssertEqual(subscribers[2], "b", "removing twice is a no-op")
    }

    func testHeldSubscribersAreReleasedOnceTheirAnswerIsReadyOrForgottenWhenTheyLeave() {
        var subscribers = Subscribers<String>()
        subscribers.hold(.init(member: "w", ticket: ConnectionTicket(id: 1, uid: 0), subscription: .path(wifi)))
        subscribers.hold(.init(member: "n", ticket: ConnectionTicket(id: 2, uid: 0), subscription: .summary))
        subscribers.hold(.init(member: "gone", ticket: ConnectionTicket(id: 3, uid: 0), subscription: .path(.none)))
        XCTAssertNil(subscribers[1], "held subscribers are not members yet")
        subscribers.remove(3)

        XCTAssertEqual(subscribers.release { $0 == .none }.map(\.member), ["n"], "a summary follows the unfiltered answer; one that left is not released")
        XCTAssertEqual(subscribers.release { $0 == .none }.map(\.member), [], "released once")
        XCTAssertEqual(subscribers.release { _ in true }.map(\.member), ["w"])
        XCTAssertEqual(subscribers.release { _ in true }.count, 0)
    }
}
