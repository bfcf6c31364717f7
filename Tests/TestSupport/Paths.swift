import Foundation

/// Where things are: the repository and the binaries built with the tests.
public enum Paths {
    /// The package root.
    public static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The directory holding the built `reachd` and `reachctl`: `REACHD_BIN_DIR`, else
    /// the directory SwiftPM built this test bundle in.
    public static var products: URL {
        if let directory = ProcessInfo.processInfo.environment["REACHD_BIN_DIR"] { return URL(fileURLWithPath: directory) }
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        // The XCTest bundle may be a directory (…/reachdPackageTests.xctest/…); climb out of it.
        while url.path.contains(".xctest") { url.deleteLastPathComponent() }
        return url
    }

    /// The built `tool` (`reachd`, `reachctl`).
    public static func product(_ tool: String) -> String {
        products.appendingPathComponent(tool).path
    }

    /// A fresh directory under the system temp dir (the caller removes it).
    public static func makeTemporaryDirectory(_ prefix: String) throws -> String {
        let path = NSTemporaryDirectory() + "\(prefix)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// Runs the built `reachctl`, without any `REACHD_SOCKET` the test runner may have.
public func reachctl(_ arguments: [String]) throws -> ProcessResult {
    try Command.run([Paths.product("reachctl")] + arguments, unset: ["REACHD_SOCKET"])
}

/// Starts the built `reachctl` and returns at once (for `watch` and `wait`).
public func launchReachctl(_ arguments: [String], stdout: Pipe? = nil) throws -> Process {
    try Command.launch([Paths.product("reachctl")] + arguments, unset: ["REACHD_SOCKET"], stdout: stdout)
}
