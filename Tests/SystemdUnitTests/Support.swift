import Foundation
import XCTest

/// The result of running a command to completion.
struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

enum Command {
    /// Runs `arguments` (first one looked up in PATH) and waits for it.
    static func run(_ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]) throws -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes to the end before waiting, so a chatty child never blocks.
        let group = DispatchGroup()
        nonisolated(unsafe) var errData = Data()
        group.enter()
        DispatchQueue.global().async {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return CommandResult(
            status: process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self)
        )
    }

    /// Whether `tool` is on PATH.
    static func exists(_ tool: String) -> Bool {
        (try? run(["sh", "-c", "command -v \(tool)"]).status) == 0
    }
}

enum Paths {
    /// The package root.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Where SwiftPM put this test bundle, and so the reachd and reachctl built with it.
    static var products: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    }

    static func temporaryDirectory(_ name: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

extension XCTestCase {
    /// Missing prerequisites skip on a developer machine but fail in CI (`CI` set).
    func requirePrerequisite(_ satisfied: Bool, _ message: String, file: StaticString = #filePath, line: UInt = #line) throws -> Bool {
        if satisfied { return true }
        if ProcessInfo.processInfo.environment["CI"] != nil {
            XCTFail(message, file: file, line: line)
            return false
        }
        throw XCTSkip(message)
    }

    /// The built reachd and reachctl next to this test bundle.
    func requireBuiltTools(file: StaticString = #filePath, line: UInt = #line) throws -> Bool {
        let missing = ["reachd", "reachctl"].filter {
            !FileManager.default.isExecutableFile(atPath: Paths.products.appendingPathComponent($0).path)
        }
        return try requirePrerequisite(
            missing.isEmpty, "not built in \(Paths.products.path): \(missing.joined(separator: ", ")) (run swift build first)",
            file: file, line: line
        )
    }
}
