import Foundation
import XCTest

/// Runs a command to completion and returns its stdout; throws with its stderr when it fails.
@discardableResult
func sh(_ arguments: String..., allowFailure: Bool = false) throws -> String {
    try runCommand(arguments, allowFailure: allowFailure)
}

/// What a finished process printed and how it exited.
struct ProcessResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs `executable` with `arguments` to completion and collects its output.
func execute(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let stdout = Pipe(), stderr = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
    let out = stdout.fileHandleForReading.readDataToEndOfFile()
    let err = stderr.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProcessResult(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
                         stderr: String(decoding: err, as: UTF8.self))
}

/// Runs `arguments` (argv[0] looked up in PATH) and returns stdout; throws on a non-zero exit.
@discardableResult
func runCommand(_ arguments: [String], allowFailure: Bool = false, environment: [String: String]? = nil) throws -> String {
    let result = try execute("/usr/bin/env", arguments, environment: environment)
    if result.status != 0 && !allowFailure {
        throw CommandFailed(command: arguments.joined(separator: " "), status: result.status, stderr: result.stderr)
    }
    return result.stdout
}

/// Runs the built `reachctl`, without any `REACHD_SOCKET` the test runner may have.
func reachctl(_ arguments: [String]) throws -> ProcessResult {
    try execute(DaemonProcess.binaryDirectory + "/reachctl", arguments,
                environment: ProcessInfo.processInfo.environment.filter { $0.key != "REACHD_SOCKET" })
}

/// Starts the built `reachctl` and returns at once (for `watch` and `wait`).
func launchReachctl(_ arguments: [String], stdout: Pipe? = nil) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: DaemonProcess.binaryDirectory + "/reachctl")
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.filter { $0.key != "REACHD_SOCKET" }
    if let stdout { process.standardOutput = stdout }
    try process.run()
    return process
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
