import Foundation
import Glibc
@testable import ReachConnectivity
import TestSupport
import XCTest

/// The `Verifier` is `async`; reachd runs it on the thread that asks, with no concurrency
/// runtime thread of its own (libdispatch's pool would wake an idle daemon every second).
final class CallingThreadExecutorTests: XCTestCase {
    func testRunsToTheEndOnTheCallingThread() {
        let caller = pthread_self()
        let ranHere = CallingThreadExecutor.run { () async -> Bool in
            await Task.yield()  // a suspension this executor itself resumes
            return pthread_equal(pthread_self(), caller) != 0
        }
        XCTAssertEqual(ranHere, true)
    }

    func testAWaitNobodyAnswersGivesNil() {
        let never: Int? = CallingThreadExecutor.run { await withUnsafeContinuation { (_: UnsafeContinuation<Int, Never>) in } }
        XCTAssertNil(never)
    }

    func testEvaluationsStartNoThread() throws {
        let f = try TrustFixtures()
        func threads() throws -> Int { try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count }
        let before = try threads()
        for _ in 0..<20 {
            XCTAssertEqual(TrustEvaluation.verdict(chain: [f.leaf.certificate, f.intermediate.certificate], host: "probe.example", policy: .systemDefault,
                                                   anchors: TrustAnchors([f.root.certificate]), now: TrustFixtures.now), .trusted)
        }
        XCTAssertEqual(try threads(), before)
    }
}
