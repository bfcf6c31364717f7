import Foundation
import Synchronization
import XCTest

/// What a finished process printed and how it exited.
public struct ProcessResult: Sendable {
    /// Exit status (or the signal number, for a process killed by a signal).
    public var status: Int32
    /// Everything written to stdout.
    public var stdout: String
    /// Everything written to stderr.
    public var stderr: String
}

/// A command exited non-zero (or a call the tests make failed).
public struct CommandFailed: Error, CustomStringConvertible {
    /// The command line.
    public var command: String
    /// Its exit status, or an errno.
    public var status: Int32
    /// What it wrote to stderr.
    public var stderr: String

    /// Creates the error.
    public init(command: String, status: Int32, stderr: String) {
        self.command = command
        self.status = status
        self.stderr = stderr
    }

    /// "`command` exited N: stderr".
    public var description: String { "`\(command)` exited \(status): \(stderr)" }
}

/// Runs programs for the tests: the one process runner.
public enum Command {
    /// Runs `arguments` (the first one looked up in PATH) to completion.
    ///
    /// stdout and stderr are read at the same time, so a child that fills one pipe while
    /// the other is being read can never deadlock the test.
    ///
    /// - Parameters:
    ///   - directory: the working directory (default: the test's).
    ///   - environment: variables set on top of the test process's environment.
    ///   - unset: variables removed from it (e.g. a `REACHD_SOCKET` of the runner's).
    public static func run(
        _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:], unset: [String] = []
    ) throws -> ProcessResult {
        let process = configured(arguments, in: directory, environment: environment, unset: unset)
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let errors = PipeReader(err)
        let output = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ProcessResult(
            status: process.terminationStatus, stdout: String(decoding: output, as: UTF8.self),
            stderr: String(decoding: errors.wait(), as: UTF8.self)
        )
    }

    /// Starts `arguments` and returns at once (for long-running commands such as
    /// `reachctl watch` or the daemon itself); its input comes from, and its output goes
    /// to, where the caller says (`stdin`: e.g. a `Pipe` the test writes commands to).
    public static func launch(
        _ arguments: [String], environment: [String: String] = [:], unset: [String] = [],
        stdin: Any? = nil, stdout: Any? = nil, stderr: Any? = nil
    ) throws -> Process {
        let process = configured(arguments, in: nil, environment: environment, unset: unset)
        if let stdin { process.standardInput = stdin }
        if let stdout { process.standardOutput = stdout }
        if let stderr { process.standardError = stderr }
        try process.run()
        return process
    }

    /// Whether `tool` is on PATH.
    public static func exists(_ tool: String) -> Bool {
        (try? run(["sh", "-c", "command -v \(tool)"]).status) == 0
    }

    private static func configured(
        _ arguments: [String], in directory: URL?, environment: [String: String], unset: [String]
    ) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        var merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        for name in unset { merged[name] = nil }
        process.environment = merged
        return process
    }
}

/// Reads a pipe to its end on a thread of its own.
private final class PipeReader: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    // Written by the reading thread before `done` is signalled, read after `wait`.
    private var data = Data()

    init(_ pipe: Pipe) {
        let handle = pipe.fileHandleForReading
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func wait() -> Data {
        done.wait()
        return data
    }
}

/// Runs a command and returns its stdout; throws `CommandFailed` on a non-zero exit.
@discardableResult
public func runCommand(_ arguments: [String], allowFailure: Bool = false, environment: [String: String] = [:]) throws -> String {
    let result = try Command.run(arguments, environment: environment)
    if result.status != 0 && !allowFailure {
        throw CommandFailed(command: arguments.joined(separator: " "), status: result.status, stderr: result.stderr)
    }
    return result.stdout
}

/// `runCommand` with the arguments written out: `try sh("ip", "netns", "add", name)`.
@discardableResult
public func sh(_ arguments: String..., allowFailure: Bool = false) throws -> String {
    try runCommand(arguments, allowFailure: allowFailure)
}

/// Reads a child's output line by line as it comes, so a test can wait for one line, act,
/// and wait for the next.
public final class LineReader: Sendable {
    private final class State: Sendable {
        let value = Mutex<(buffer: [UInt8], ended: Bool)>(([], false))
    }

    private let state = State()

    /// Starts reading `pipe` on a thread of its own until end of file.
    public init(_ pipe: Pipe) {
        let handle = pipe.fileHandleForReading
        Thread.detachNewThread { [state] in
            while true {
                let data = handle.availableData
                let ended = data.isEmpty
                state.value.withLock { state in
                    state.buffer += data
                    state.ended = ended
                }
                if ended { return }
            }
        }
    }

    /// The next line (without its newline); nil after `timeout` or at end of output.
    public func next(timeout: Duration = .seconds(5)) -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let line = state.value.withLock { state -> String?? in
                if let newline = state.buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    defer { state.buffer.removeSubrange(...newline) }
                    return String(decoding: state.buffer[..<newline], as: UTF8.self)
                }
                return state.ended ? .some(nil) : nil
            }
            if let line { return line }
            usleep(2_000)
        }
        return nil
    }
}
