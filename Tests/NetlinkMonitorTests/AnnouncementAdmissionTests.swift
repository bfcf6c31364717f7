@testable import NetlinkMonitor
import ReachabilityCore
import XCTest

/// Which RA options change the tracked state when (`AnnouncementAdmission`), without a kernel:
/// PREF64's refresh is free and a change spends its link's budget, a held change is applied
/// when the budget refills, and a link that goes down keeps nothing its old network said.
final class AnnouncementAdmissionTests: XCTestCase {
    private enum Action {
        case pref64(String, lifetime: Int, at: Int)
        case portal(String?, at: Int)
        case release(at: Int)
        case linkDown
    }

    private static let start = ContinuousClock.now
    private static func at(_ seconds: Int) -> ContinuousClock.Instant { start + .seconds(seconds) }

    private static func connected() -> TrackedState {
        var state = TrackedState()
        state.apply(.link(Link(index: 2, name: "eth0", flags: [.up, .running], operState: .up, carrier: true))) { _ in DeviceFacts() }
        return state
    }

    /// Runs `action` as `NetlinkMonitor` does; whether it changed the tracked state.
    private static func run(_ action: Action, _ admission: inout AnnouncementAdmission, _ state: inout TrackedState) -> Bool {
        switch action {
        case let .pref64(prefix, lifetime, time):
            let option = NDUserOption.PREF64(interfaceIndex: 2, prefix: NAT64Prefix(prefix, source: .routerAdvertisement)!, lifetime: .seconds(lifetime))
            return admission.admit(option, to: &state, now: at(time))
        case let .portal(uri, time):
            return admission.admit(NDUserOption.CaptivePortal(interfaceIndex: 2, apiURI: uri), to: &state, now: at(time))
        case let .release(time):
            return admission.release(now: at(time), to: &state)
        case .linkDown:
            let down = ParsedMessage.link(Link(index: 2, name: "eth0", flags: [], operState: .down, carrier: false))
            admission.void(by: down)
            state.apply(down) { _ in DeviceFacts() }
            return true
        }
    }

    func testPREF64() {
        // One change per 10 s; each step: what it did, and the prefixes link 2 carries after it.
        let sequences: [(String, burst: Int, [(Action, changed: Bool, carried: [String])])] = [
            ("a refresh is free, a change over budget is held", 1, [
                (.pref64("64:ff9b::/96", lifetime: 600, at: 0), true, ["64:ff9b::/96"]),
                (.pref64("64:ff9b::/96", lifetime: 600, at: 1), false, ["64:ff9b::/96"]),
                (.pref64("2001:db8:1::/96", lifetime: 600, at: 1), false, ["64:ff9b::/96"]),
                (.release(at: 5), false, ["64:ff9b::/96"]),
                (.release(at: 10), true, ["64:ff9b::/96", "2001:db8:1::/96"]),
            ]),
            ("a held prefix withdrawn never appears", 1, [
                (.pref64("64:ff9b::/96", lifetime: 600, at: 0), true, ["64:ff9b::/96"]),
                (.pref64("2001:db8:1::/96", lifetime: 600, at: 1), false, ["64:ff9b::/96"]),
                (.pref64("2001:db8:1::/96", lifetime: 0, at: 2), false, ["64:ff9b::/96"]),
                (.release(at: 10), false, ["64:ff9b::/96"]),
            ]),
            ("withdrawing what is not held is free", 1, [
                (.pref64("64:ff9b::/96", lifetime: 0, at: 0), false, []),
                (.pref64("64:ff9b::/96", lifetime: 600, at: 0), true, ["64:ff9b::/96"]),
            ]),
            ("a withdrawal spends the budget", 1, [
                (.pref64("64:ff9b::/96", lifetime: 600, at: 0), true, ["64:ff9b::/96"]),
                (.pref64("64:ff9b::/96", lifetime: 0, at: 1), false, ["64:ff9b::/96"]),
                (.release(at: 10), true, []),
            ]),
            ("past the most per source: refused", 10, [
                (.pref64("2001:db8:1::/96", lifetime: 600, at: 0), true, ["2001:db8:1::/96"]),
                (.pref64("2001:db8:2::/96", lifetime: 600, at: 0), true, ["2001:db8:1::/96", "2001:db8:2::/96"]),
                (.pref64("2001:db8:3::/96", lifetime: 600, at: 0), true, ["2001:db8:1::/96", "2001:db8:2::/96", "2001:db8:3::/96"]),
                (.pref64("2001:db8:4::/96", lifetime: 600, at: 0), true, ["2001:db8:1::/96", "2001:db8:2::/96", "2001:db8:3::/96", "2001:db8:4::/96"]),
                (.pref64("2001:db8:5::/96", lifetime: 600, at: 0), false, ["2001:db8:1::/96", "2001:db8:2::/96", "2001:db8:3::/96", "2001:db8:4::/96"]),
            ]),
            ("a prefix lapses", 1, [
                (.pref64("64:ff9b::/96", lifetime: 5, at: 0), true, ["64:ff9b::/96"]),
                (.release(at: 4), false, ["64:ff9b::/96"]),
                (.release(at: 5), true, []),
            ]),
            ("link down: the prefix forgotten, the held one dropped", 1, [
                (.pref64("64:ff9b::/96", lifetime: 600, at: 0), true, ["64:ff9b::/96"]),
                (.pref64("2001:db8:1::/96", lifetime: 600, at: 1), false, ["64:ff9b::/96"]),
                (.linkDown, true, []),
                (.release(at: 10), false, []),
            ]),
        ]
        for (name, burst, steps) in sequences {
            var admission = AnnouncementAdmission(budget: AnnouncementLimiter.Configuration(burst: burst, interval: .seconds(10)))
            var state = Self.connected()
            for (index, (action, changed, carried)) in steps.enumerated() {
                XCTAssertEqual(Self.run(action, &admission, &state), changed, "\(name), step \(index + 1)")
                XCTAssertEqual(state.nat64Prefixes.prefixes(on: 2).map(\.description), carried, "\(name), step \(index + 1)")
            }
        }
    }

    func testCaptivePortals() {
        let sequences: [(String, [(Action, changed: Bool, portal: String?)])] = [
            ("a repeat is free, a change over budget is held", [
                (.portal("https://a/", at: 0), true, "https://a/"),
                (.portal("https://a/", at: 1), false, "https://a/"),
                (.portal("https://b/", at: 1), false, "https://a/"),
                (.release(at: 10), true, "https://b/"),
            ]),
            ("the latest held one wins", [
                (.portal("https://a/", at: 0), true, "https://a/"),
                (.portal("https://b/", at: 1), false, "https://a/"),
                (.portal(nil, at: 2), false, "https://a/"),
                (.release(at: 10), true, nil),
            ]),
            ("link down: the held one dropped", [
                (.portal("https://a/", at: 0), true, "https://a/"),
                (.portal("https://b/", at: 1), false, "https://a/"),
                (.linkDown, true, nil),
                (.release(at: 10), false, nil),
            ]),
        ]
        for (name, steps) in sequences {
            var admission = AnnouncementAdmission(budget: AnnouncementLimiter.Configuration(burst: 1, interval: .seconds(10)))
            var state = Self.connected()
            for (index, (action, changed, portal)) in steps.enumerated() {
                XCTAssertEqual(Self.run(action, &admission, &state), changed, "\(name), step \(index + 1)")
                XCTAssertEqual(state.announcedCaptivePortals[2], portal, "\(name), step \(index + 1)")
            }
        }
    }

    func testNextRelease() {
        var admission = AnnouncementAdmission(budget: AnnouncementLimiter.Configuration(burst: 1, interval: .seconds(10)))
        var state = Self.connected()
        XCTAssertNil(admission.nextRelease(in: state), "nothing held, nothing lapses")
        _ = Self.run(.pref64("64:ff9b::/96", lifetime: 600, at: 0), &admission, &state)
        XCTAssertEqual(admission.nextRelease(in: state), Self.at(600), "the prefix lapses")
        _ = Self.run(.portal("https://a/", at: 0), &admission, &state)
        _ = Self.run(.portal("https://b/", at: 1), &admission, &state)
        XCTAssertEqual(admission.nextRelease(in: state), Self.at(10), "the held portal first")
    }
}
