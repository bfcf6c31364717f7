import Foundation
import XCTest

/// Runs a command to completion and returns its stdout; throws with its stderr when it fails.
@discardableResult
func sh(_ arguments: String..., allowFailure: Bool = false) throws -> String {
    try runCommand(arguments, allowFailure: allowFailure)
}

/// Runs `arguments` (argv[0] looked up in PATH) and returns stdout.
@discardableResult
func runCommand(_ arguments: [String], allowFailure: Bool = false, environment: [String: String]? = nil) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    if let environment { process.environment = environment }
    let stdout = Pipe(), stderr = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
    let out = stdout.fileHandleForReading.readDataToEndOfFile()
    let err = stderr.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    if process.terminationStatus != 0 && !allowFailure {
        throw CommandFailed(command: arguments.joined(separator: " "), status: process.terminationStatus,
                            stderr: String(decoding: err, as: UTF8.self))
    }
    return String(decoding: out, as: UTF8.self)
}

/// A command exited non-zero.
struct CommandFailed: Error, CustomStringConvertible {
    var command: String
    var status: Int32
    var stderr: String
    var description: String { "`\(command)` exited \(status): \(stderr)" }
}

/// Integration tests need root for namespaces. They skip only outside CI; under CI
/// (`CI` set) a missing privilege is a failure, so CI can never pass by skipping.
func requireRoot() throws {
    guard getuid() != 0 else { return }
    if ProcessInfo.processInfo.environment["CI"] != nil {
        XCTFail("integration tests need root (running under CI, so this fails instead of skipping)")
        throw CommandFailed(command: "requireRoot", status: 1, stderr: "not root")
    }
    throw XCTSkip("integration tests need root: they create network namespaces")
}
