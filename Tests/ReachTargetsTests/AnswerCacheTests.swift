import NIOCore
import ReachabilityCore
@testable import ReachTargets
import XCTest

/// `AnswerCache`: what is kept, for how long, what a forgotten generation may not put back,
/// and the bound.
final class AnswerCacheTests: XCTestCase {
    private let found = NameResolver.Outcome.addresses([IPAddress("198.51.100.1")!])
    private let start = NIODeadline.uptimeNanoseconds(1_000_000_000_000)

    func testWhatIsKeptAndForHowLong() {
        let cases: [(String, NameResolver.Outcome, after: TimeAmount, kept: Bool)] = [
            ("found, within its lifetime", found, .seconds(29), true),
            ("found, past its lifetime", found, .seconds(30), false),
            ("no such name, within 5 s", .failed(.nameNotFound), .seconds(4), true),
            ("no such name, past 5 s", .failed(.nameNotFound), .seconds(5), false),
            ("timed out: never kept", .failed(.resolutionTimedOut), .zero, false),
            ("no DNS server: never kept", .failed(.noDNSServer), .zero, false),
            ("failed: never kept", .failed(.resolutionFailed), .zero, false),
        ]
        for (name, outcome, after, kept) in cases {
            var cache = AnswerCache(lifetime: .seconds(30))
            cache.remember(outcome, for: "a.test", askedIn: cache.generation, at: start)
            XCTAssertEqual(cache.answer(for: "a.test", at: start + after), kept ? outcome : nil, name)
        }
    }

    func testAnAnswerAskedBeforeForgetAllIsNotKept() {
        var cache = AnswerCache(lifetime: .seconds(30))
        let asked = cache.generation
        cache.forgetAll()
        cache.remember(found, for: "a.test", askedIn: asked, at: start)
        XCTAssertNil(cache.answer(for: "a.test", at: start))
        cache.remember(found, for: "a.test", askedIn: cache.generation, at: start)
        XCTAssertEqual(cache.answer(for: "a.test", at: start), found)
    }

    func testTheBoundDropsExpiredAnswersThenAll() {
        var cache = AnswerCache(lifetime: .seconds(30), capacity: 3)
        cache.remember(.failed(.nameNotFound), for: "gone.test", askedIn: 0, at: start)
        cache.remember(found, for: "b.test", askedIn: 0, at: start)
        cache.remember(found, for: "c.test", askedIn: 0, at: start)
        // Full; 10 s later the not-found answer has expired and makes room.
        cache.remember(found, for: "d.test", askedIn: 0, at: start + .seconds(10))
        XCTAssertEqual(cache.count, 3)
        XCTAssertEqual(cache.answer(for: "b.test", at: start + .seconds(10)), found)
        // Full of fresh answers: a flood of new names starts over.
        cache.remember(found, for: "e.test", askedIn: 0, at: start + .seconds(10))
        XCTAssertEqual(cache.count, 1)
        XCTAssertEqual(cache.answer(for: "e.test", at: start + .seconds(10)), found)
    }
}
