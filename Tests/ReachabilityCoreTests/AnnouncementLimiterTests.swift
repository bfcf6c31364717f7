import ReachabilityCore
import XCTest

/// The RA option limiter as tables of timed steps: each step offers a value on a link (the
/// test applies what the limiter lets through, as the monitor does) or asks for held values
/// at a time, and says what the limiter must answer.
final class AnnouncementLimiterTests: XCTestCase {
    private typealias Limiter = AnnouncementLimiter<String?>

    private enum Step {
        /// Offer `value` on `link` at `at` seconds; expect this decision (`hold` seconds, or nil).
        case offer(Double, link: Int32 = 2, String?, Expect)
        /// At `at` seconds, expect these held values back.
        case release(Double, [Int32: String?])
        /// The link went down (held dropped) or away (forgotten).
        case down(Int32), gone(Int32)
    }

    private enum Expect: Equatable {
        case apply, unchanged
        case hold(until: Double)
    }

    private struct Case {
        var name: String
        var configuration = Limiter.Configuration(burst: 3, interval: .seconds(2))
        var steps: [Step]
        /// What is in force on each link at the end.
        var final: [Int32: String?]
    }

    private let cases: [Case] = [
        Case(name: "a first announcement applies", steps: [.offer(0, "https://a/", .apply)], final: [2: "https://a/"]),
        Case(name: "repeats of the value in force cost nothing, whatever the rate",
             steps: [.offer(0, "https://a/", .apply)] + (1...50).map { .offer(Double($0) / 1000, "https://a/", .unchanged) },
             final: [2: "https://a/"]),
        Case(name: "the unrestricted URN with nothing announced changes nothing",
             steps: [.offer(0, nil, .unchanged)], final: [:]),
        Case(name: "a burst of three changes, the fourth held until a token comes",
             steps: [.offer(0, "https://1/", .apply), .offer(0.1, "https://2/", .apply), .offer(0.2, "https://3/", .apply),
                     .offer(0.3, "https://4/", .hold(until: 2)), .release(1.9, [:]), .release(2, [2: "https://4/"])],
             final: [2: "https://4/"]),
        Case(name: "a flood keeps only the latest held value, applied when the bucket refills",
             steps: [.offer(0, "https://1/", .apply), .offer(0, "https://2/", .apply), .offer(0, "https://3/", .apply)]
                + (4...100).map { .offer(Double($0) / 100, "https://\($0)/", .hold(until: 2)) }
                + [.release(2.5, [2: "https://100/"]), .release(3, [:])],
             final: [2: "https://100/"]),
        Case(name: "the value in force announced again cancels the held change",
             steps: [.offer(0, "https://1/", .apply), .offer(0, "https://2/", .apply), .offer(0, "https://3/", .apply),
                     .offer(0.5, "https://4/", .hold(until: 2)), .offer(0.6, "https://3/", .unchanged), .release(5, [:])],
             final: [2: "https://3/"]),
        Case(name: "after a held value is released, the next change waits a whole interval",
             steps: [.offer(0, "https://1/", .apply), .offer(0, "https://2/", .apply), .offer(0, "https://3/", .apply),
                     .offer(1, "https://4/", .hold(until: 2)), .release(2, [2: "https://4/"]),
                     .offer(2.5, "https://5/", .hold(until: 4)), .release(4, [2: "https://5/"])],
             final: [2: "https://5/"]),
        Case(name: "the budget refills one change per interval, up to the burst",
             steps: [.offer(0, "https://1/", .apply), .offer(0, "https://2/", .apply), .offer(0, "https://3/", .apply),
                     .offer(4.1, "https://4/", .apply), .offer(4.2, "https://5/", .apply), .offer(4.3, "https://6/", .hold(until: 6))],
             final: [2: "https://5/"]),
        Case(name: "a quiet hour gives back the burst, not more",
             steps: [.offer(0, "https://1/", .apply), .offer(0, "https://2/", .apply), .offer(0, "https://3/", .apply),
                     .offer(3600, "https://4/", .apply), .offer(3600, "https://5/", .apply), .offer(3600, "https://6/", .apply),
                     .offer(3600, "https://7/", .hold(until: 3602))],
             final: [2: "https://6/"]),
        Case(name: "links have budgets of their own",
             steps: [.offer(0, link: 2, "https://1/", .apply), .offer(0, link: 2, "https://2/", .apply),
                     .offer(0, link: 2, "https://3/", .apply), .offer(0, link: 2, "https://4/", .hold(until: 2)),
                     .offer(0, link: 3, "https://x/", .apply), .release(2, [2: "https://4/"])],
             final: [2: "https://4/", 3: "https://x/"]),
        Case(name: "a link going down drops what it held (its old network's word), its budget stays spent",
             steps: [.offer(0, "https://1/", .apply), .offer(0, "https://2/", .apply), .offer(0, "https://3/", .apply),
                     .offer(0.5, "https://4/", .hold(until: 2)), .down(2), .release(10, [:]),
                     .offer(10, "https://5/", .apply)],
             final: [2: "https://5/"]),
        Case(name: "a link gone is forgotten: a new one with its index starts afresh",
             steps: [.offer(0, "https://1/", .apply), .offer(0, "https://2/", .apply), .offer(0, "https://3/", .apply),
                     .offer(0.5, "https://4/", .hold(until: 2)), .gone(2), .release(10, [:]),
                     .offer(10.5, "https://5/", .apply), .offer(10.5, "https://6/", .apply), .offer(10.5, "https://7/", .apply)],
             final: [2: "https://7/"]),
        Case(name: "the unrestricted URN (nil) is a change like any other, held in a flood",
             configuration: Limiter.Configuration(burst: 1, interval: .seconds(1)),
             steps: [.offer(0, "https://1/", .apply), .offer(0.5, nil, .hold(until: 1)), .release(1, [2: nil])],
             final: [2: nil]),
        Case(name: "a burst of one: every change after the first waits its interval",
             configuration: Limiter.Configuration(burst: 1, interval: .seconds(1)),
             steps: [.offer(0, "https://1/", .apply), .offer(0.2, "https://2/", .hold(until: 1)), .release(1, [2: "https://2/"]),
                     .offer(1.5, "https://3/", .hold(until: 2)), .offer(1.7, "https://4/", .hold(until: 2)), .release(2.1, [2: "https://4/"])],
             final: [2: "https://4/"]),
    ]

    func testTable() {
        let start = ContinuousClock.now
        func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int64((seconds * 1000).rounded())) }
        for test in cases {
            var limiter = Limiter(configuration: test.configuration)
            var inForce: [Int32: String?] = [:]
            for (number, step) in test.steps.enumerated() {
                let label = "\(test.name), step \(number + 1)"
                switch step {
                case let .offer(time, link, value, expected):
                    let decision = limiter.offer(value, on: link, current: inForce[link] ?? nil, now: at(time))
                    switch (decision, expected) {
                    case (.apply, .apply): inForce[link] = value
                    case (.unchanged, .unchanged): break
                    case let (.hold(until), .hold(expectedUntil)): XCTAssertEqual(until, at(expectedUntil), label)
                    default: XCTFail("\(label): \(decision), expected \(expected)")
                    }
                case let .release(time, expected):
                    let released = limiter.release(now: at(time))
                    XCTAssertEqual(released.map(\.link), expected.keys.sorted(), label)
                    for (link, value) in released {
                        XCTAssertEqual(value, expected[link] ?? nil, label)
                        inForce[link] = value
                    }
                case let .down(link):
                    limiter.discardHeld(on: link)
                case let .gone(link):
                    limiter.forget(link)
                    inForce[link] = nil
                }
            }
            XCTAssertEqual(inForce.count, test.final.count, test.name)
            for (link, value) in test.final { XCTAssertEqual(inForce[link] ?? nil, value, test.name) }
        }
    }

    /// Whatever the rate, a link's changes over a span are at most the burst plus one per
    /// interval, and the last value offered is the one in force once the budget refills.
    func testFloodIsBoundedAndEndsOnTheLastValue() {
        let start = ContinuousClock.now
        var limiter = Limiter(configuration: .routerAdvertisements)
        var inForce: String?
        var applied = 0
        // 20 s at 5,000 announcements a second, a new value each time; released as the
        // engine would, whenever `nextRelease` is due.
        for number in 0..<100_000 {
            let now = start + .microseconds(200 * number)
            if let due = limiter.nextRelease, due <= now {
                for (_, value) in limiter.release(now: now) { inForce = value; applied += 1 }
            }
            if limiter.offer("https://portal.test/\(number)", on: 2, current: inForce, now: now) == .apply {
                inForce = "https://portal.test/\(number)"
                applied += 1
            }
        }
        XCTAssertLessThanOrEqual(applied, 3 + 10, "burst plus one per 2 s")
        XCTAssertNotEqual(inForce, "https://portal.test/99999")
        let due = try? XCTUnwrap(limiter.nextRelease)
        XCTAssertNotNil(due)
        for (_, value) in limiter.release(now: due ?? start) { inForce = value }
        XCTAssertEqual(inForce, "https://portal.test/99999", "the last announcement is what stays")
        XCTAssertNil(limiter.nextRelease)
    }
}
