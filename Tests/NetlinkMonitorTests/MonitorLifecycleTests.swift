@testable import NetlinkMonitor
import ReachabilityCore
import XCTest

/// The monitor's lifecycle (`MonitorLifecycle`): when it subscribes, which starts are
/// resyncs, and which families' routes a deferred start leaves to read.
final class MonitorLifecycleTests: XCTestCase {
    private enum Event {
        case subscribed, starting, started(Set<AddressFamily>), routesRead(AddressFamily), synchronizing, resynchronizing
    }

    func testSequences() {
        typealias Phase = MonitorLifecycle.Phase
        let cases: [(String, [Event], Phase, resyncs: Int)] = [
            ("new", [], .unsubscribed, 0),
            ("a first start", [.subscribed, .starting, .synchronizing, .started([])], .started(pendingRoutes: []), 0),
            ("a first start that failed after subscribing", [.subscribed, .starting, .synchronizing], .subscribed, 0),
            ("its retry is no resync", [.subscribed, .starting, .synchronizing, .starting, .synchronizing, .started([])],
             .started(pendingRoutes: []), 0),
            ("a second start is a resync", [.subscribed, .starting, .started([]), .starting, .started([])], .started(pendingRoutes: []), 1),
            ("a deferred start", [.subscribed, .starting, .started([.ipv4, .ipv6])], .started(pendingRoutes: [.ipv4, .ipv6]), 0),
            ("one family read", [.subscribed, .starting, .started([.ipv4, .ipv6]), .routesRead(.ipv6)], .started(pendingRoutes: [.ipv4]), 0),
            ("a resync reads every family", [.subscribed, .starting, .started([.ipv4, .ipv6]), .resynchronizing, .synchronizing],
             .started(pendingRoutes: []), 1),
            ("a resync before any start", [.resynchronizing, .synchronizing], .unsubscribed, 1),
            ("subscribed once", [.subscribed, .starting, .started([]), .subscribed], .started(pendingRoutes: []), 0),
        ]
        for (name, events, phase, resyncs) in cases {
            var lifecycle = MonitorLifecycle()
            for event in events {
                switch event {
                case .subscribed: lifecycle.subscribed()
                case .starting: lifecycle.starting()
                case let .started(pending): lifecycle.started(pendingRoutes: pending)
                case let .routesRead(family): lifecycle.routesRead(family)
                case .synchronizing: lifecycle.synchronizing()
                case .resynchronizing: lifecycle.resynchronizing()
                }
            }
            XCTAssertEqual(lifecycle.phase, phase, name)
            XCTAssertEqual(lifecycle.resyncCount, resyncs, name)
            let pending: Set<AddressFamily> = if case let .started(pending) = phase { pending } else { [] }
            XCTAssertEqual(lifecycle.pendingRouteFamilies, pending, name)
        }
    }
}
