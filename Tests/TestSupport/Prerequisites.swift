import Foundation
import Glibc
import XCTest

/// A prerequisite of a test is missing, and the run is under CI, where skipping is failing.
public struct PrerequisiteMissing: Error, CustomStringConvertible {
    /// What is missing.
    public var description: String
}

extension XCTestCase {
    /// The one rule for what a test needs from the machine: without it the test is skipped
    /// on a developer machine but fails under CI (`CI` set), so CI can never pass by skipping.
    public func requirePrerequisite(_ satisfied: Bool, _ message: String) throws {
        guard !satisfied else { return }
        if ProcessInfo.processInfo.environment["CI"] != nil {
            throw PrerequisiteMissing(description: "\(message) (CI is set, so this fails instead of skipping)")
        }
        throw XCTSkip(message)
    }

    /// Root, for tests that create network namespaces.
    public func requireRoot() throws {
        try requirePrerequisite(getuid() == 0, "needs root: it creates network namespaces")
    }

    /// The built `reachd` and `reachctl` next to this test bundle.
    public func requireBuiltTools() throws {
        let missing = ["reachd", "reachctl"].filter { !FileManager.default.isExecutableFile(atPath: Paths.product($0)) }
        try requirePrerequisite(
            missing.isEmpty, "not built in \(Paths.products.path): \(missing.joined(separator: ", ")) (run swift build first)"
        )
    }

    /// A fresh directory under the system temp dir, removed when the test ends.
    public func temporaryDirectory(_ prefix: String) throws -> String {
        let path = try Paths.makeTemporaryDirectory(prefix)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }
}
