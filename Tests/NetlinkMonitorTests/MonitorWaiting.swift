import Foundation
import Glibc
import NetlinkMonitor
import ReachabilityCore
import XCTest

/// Polls the monitor's fd and drains until `condition` holds for a snapshot.
func waitFor(
    _ monitor: NetlinkMonitor, timeout: Double = 5, file: StaticString = #filePath, line: UInt = #line,
    _ what: String, _ condition: (NetworkSnapshot) -> Bool
) throws -> NetworkSnapshot {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        _ = try monitor.drain()
        let snapshot = monitor.snapshot()
        if condition(snapshot) { return snapshot }
        if Date() > deadline {
            XCTFail("timed out waiting for: \(what)\n\(snapshot)", file: file, line: line)
            return snapshot
        }
        var descriptor = pollfd(fd: monitor.eventDescriptor.rawValue, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, 50)
    }
}

/// Drains until the event socket stays quiet for `quiet` seconds. Returns what the
/// drains did together: whether any reported a change, whether any resynchronized
/// after lost events, which default routes they removed.
@discardableResult
func drainUntilQuiet(_ monitor: NetlinkMonitor, quiet: Double = 0.3, timeout: Double = 60) throws -> DrainOutcome {
    let deadline = Date().addingTimeInterval(timeout)
    var total = DrainOutcome()
    while Date() < deadline {
        var descriptor = pollfd(fd: monitor.eventDescriptor.rawValue, events: Int16(POLLIN), revents: 0)
        if poll(&descriptor, 1, Int32(quiet * 1000)) == 0 { return total }
        let outcome = try monitor.drain()
        total.changed = total.changed || outcome.changed
        total.resynchronizedAfterLostEvents = total.resynchronizedAfterLostEvents || outcome.resynchronizedAfterLostEvents
        total.removedDefaultRoutes.formUnion(outcome.removedDefaultRoutes)
        total.events += outcome.events
    }
    return total
}

extension NetworkSnapshot {
    func link(named name: String) -> Link? { links.values.first { $0.name == name } }

    func defaults(_ family: AddressFamily) -> [DefaultRoute] { defaultRoutes.filter { $0.family == family } }
}
