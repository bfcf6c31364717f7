@testable import NetlinkMonitor
import ReachabilityCore
import XCTest

/// What the tracked state does with RA captive-portal announcements, and which kernel
/// messages void them (the same rule tells `AnnouncementLimiter` to drop what it holds).
final class TrackedStateAnnouncementTests: XCTestCase {
    private static func link(up: Bool = true, carrier: Bool = true) -> ParsedMessage {
        .link(Link(index: 2, name: "eth0", flags: up ? [.up, .running] : [], operState: up ? .up : .down, carrier: carrier))
    }

    private static func announce(_ uri: String?) -> ParsedMessage {
        .captivePortal(NDUserOption.CaptivePortal(interfaceIndex: 2, apiURI: uri))
    }

    func testWhatVoidsAnAnnouncement() {
        let cases: [(String, ParsedMessage, (link: Int32, gone: Bool)?)] = [
            ("up with carrier", Self.link(), nil),
            ("down", Self.link(up: false), (2, false)),
            ("carrier lost", Self.link(carrier: false), (2, false)),
            ("removed", .linkRemoved(2), (2, true)),
            ("an announcement", Self.announce("https://a/"), nil),
            ("ignored", .ignored, nil),
        ]
        for (name, message, expected) in cases {
            let voided = TrackedState.announcementsVoided(by: message)
            XCTAssertEqual(voided?.link, expected?.link, name)
            XCTAssertEqual(voided?.gone, expected?.gone, name)
        }
    }

    func testAnnouncementsAppliedAndVoided() {
        let steps: [(String, ParsedMessage, String?)] = [
            ("the link appears", Self.link(), nil),
            ("a URI", Self.announce("https://a/"), "https://a/"),
            ("another", Self.announce("https://b/"), "https://b/"),
            ("the unrestricted URN: none", Self.announce(nil), nil),
            ("a URI again", Self.announce("https://c/"), "https://c/"),
            ("carrier lost: void", Self.link(carrier: false), nil),
            ("back, announced again", Self.announce("https://d/"), "https://d/"),
            ("down: void", Self.link(up: false), nil),
            ("announced", Self.announce("https://e/"), "https://e/"),
            ("removed: void", .linkRemoved(2), nil),
        ]
        var state = TrackedState()
        for (name, message, expected) in steps {
            state.apply(message) { _ in DeviceFacts() }
            XCTAssertEqual(state.announcedCaptivePortals[2], expected, name)
        }
    }
}
