import Foundation
import Logging
@testable import ReachDaemon
import TestSupport
import XCTest

/// The resolver watch tells new text (another server: DNS64 is asked again) from a change
/// of whether a server is configured (the answer changes).
final class ResolverTextGenerationTests: XCTestCase {
    func testAnotherServerIsNewTextButNoNewAnswer() throws {
        let directory = try temporaryDirectory("reachd-resolver-text")
        let resolvConf = directory + "/resolv.conf"
        try "nameserver 192.0.2.1\n".write(toFile: resolvConf, atomically: false, encoding: .utf8)
        let resolver = ResolverWatcher(
            resolvConfPath: resolvConf, resolvedUpstreamPath: directory + "/absent/resolv.conf", logger: Logger(label: "test")
        )
        XCTAssertEqual(resolver.textGeneration, 0, "the first read is no change")
        let steps: [(text: String, answerChanged: Bool, generation: Int)] = [
            ("nameserver 192.0.2.1\n", false, 0),
            ("nameserver fd77::1\n", false, 1),
            ("# none\n", true, 2),
            ("# none\n", false, 2),
        ]
        for step in steps {
            try step.text.write(toFile: resolvConf, atomically: true, encoding: .utf8)
            XCTAssertEqual(resolver.refresh(), step.answerChanged, step.text)
            XCTAssertEqual(resolver.textGeneration, step.generation, step.text)
        }
    }
}
