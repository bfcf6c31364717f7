import Foundation
import LinuxSystem
import XCTest

/// `ProcessResources.releaseStartupCode`: the executable's code leaves the page tables and
/// comes back as it runs.
final class ProcessResourcesTests: XCTestCase {
    /// `RssFile` of /proc/self/status, in kB: resident file-backed pages, code among them.
    private func residentFileKB() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("RssFile:") })
        return try XCTUnwrap(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    func testReleasingTheStartupCodeDropsItFromRSSAndItRunsOn() throws {
        let before = try residentFileKB()
        ProcessResources.releaseStartupCode()
        let after = try residentFileKB()
        // Even run alone, XCTest's start has touched megabytes of this binary's code.
        XCTAssertLessThan(after, before - 1024, "RssFile \(before) kB before, \(after) kB after")
        // The code maps back as it is touched: the tests after this one run on it.
    }
}
