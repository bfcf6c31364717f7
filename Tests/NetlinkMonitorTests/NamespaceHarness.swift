import Foundation
import Glibc
import NetlinkMonitor
import ReachabilityCore
import XCTest

/// A throwaway network namespace and a thread living inside it.
///
/// `setns(CLONE_NEWNET)` changes only the calling thread's namespace, so the
/// harness owns one dedicated thread that joins the namespace and runs every piece
/// of test code that touches the monitor. The namespace is configured with
/// `ip -n NAME ...`, so nothing ever runs in the host's namespace.
final class NamespaceHarness: @unchecked Sendable {
    let name = "reachd-nm-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    private let condition = NSCondition()
    private var jobs: [() -> Bool] = []
    private var thread: Thread?
    private var joinError: String?
    private var joined = false

    /// CLONE_NEWNET from <sched.h>.
    static let cloneNewNet: Int32 = 0x4000_0000

    /// glibc's setns(2); Glibc's module map hides it behind _GNU_SOURCE.
    static let setns: @convention(c) (Int32, Int32) -> Int32 = {
        guard let symbol = dlsym(nil, "setns") else { fatalError("setns not found") }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
    }()

    struct CommandError: Error, CustomStringConvertible {
        var description: String
    }

    init() throws {
        try Self.run(["ip", "netns", "add", name])
        let path = "/var/run/netns/\(name)"
        let thread = Thread { [unowned self] in
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            let result = descriptor >= 0 ? Self.setns(descriptor, Self.cloneNewNet) : -1
            let failure = result == 0 ? nil : "setns(\(path)): \(String(cString: strerror(errno)))"
            if descriptor >= 0 { close(descriptor) }
            condition.lock()
            joinError = failure
            joined = true
            condition.broadcast()
            condition.unlock()
            while true {
                condition.lock()
                while jobs.isEmpty { condition.wait() }
                let job = jobs.removeFirst()
                condition.unlock()
                if !job() { return }
            }
        }
        thread.name = "netns \(name)"
        self.thread = thread
        thread.start()
        condition.lock()
        while !joined { condition.wait() }
        let failure = joinError
        condition.unlock()
        if let failure { throw CommandError(description: failure) }
    }

    /// Ends the namespace thread and deletes the namespace (its links go with it).
    func tearDown() {
        condition.lock()
        jobs.append { false }
        condition.signal()
        condition.unlock()
        _ = try? Self.run(["ip", "netns", "del", name])
    }

    /// Runs `body` on the namespace thread and waits for it.
    func inside<T>(_ body: @escaping () throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var outcome: Result<T, any Error>?
        nonisolated(unsafe) let work = body
        condition.lock()
        jobs.append {
            outcome = Result { try work() }
            done.signal()
            return true
        }
        condition.signal()
        condition.unlock()
        done.wait()
        return try outcome!.get()
    }

    /// `ip -n NAME args...`.
    @discardableResult
    func ip(_ arguments: String...) throws -> String {
        try Self.run(["ip", "-n", name] + arguments)
    }

    /// `ip -n NAME -batch FILE` with `lines`.
    func ipBatch(_ lines: [String]) throws {
        let path = NSTemporaryDirectory() + "\(name)-batch-\(UInt32.random(in: 0...UInt32.max)).txt"
        try lines.joined(separator: "\n").appending("\n").write(toFile: path, atomically: true, encoding: .utf8)
        defer { unlink(path) }
        try Self.run(["ip", "-n", name, "-batch", path])
    }

    @discardableResult
    static func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        process.arguments = Array(arguments.dropFirst())
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CommandError(description: "\(arguments.joined(separator: " ")): \(String(decoding: err, as: UTF8.self))")
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Polls the monitor's fd and drains until `condition` holds for a snapshot.
func waitFor(
    _ monitor: NetlinkMonitor, timeout: Double = 5, file: StaticString = #filePath, line: UInt = #line,
    _ what: String, _ condition: (NetworkSnapshot) -> Bool
) throws -> NetworkSnapshot {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        _ = try monitor.drain()
        let snapshot = monitor.snapshot()
        if condition(snapshot) { return snapshot }
        if Date() > deadline {
            XCTFail("timed out waiting for: \(what)\n\(snapshot)", file: file, line: line)
            return snapshot
        }
        var descriptor = pollfd(fd: monitor.eventDescriptor.rawValue, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, 50)
    }
}

/// Drains until the event socket stays quiet for `quiet` seconds. Returns what the
/// drains did together: whether any reported a change, whether any resynchronized
/// after lost events.
@discardableResult
func drainUntilQuiet(_ monitor: NetlinkMonitor, quiet: Double = 0.3, timeout: Double = 60) throws -> DrainOutcome {
    let deadline = Date().addingTimeInterval(timeout)
    var total = DrainOutcome()
    while Date() < deadline {
        var descriptor = pollfd(fd: monitor.eventDescriptor.rawValue, events: Int16(POLLIN), revents: 0)
        if poll(&descriptor, 1, Int32(quiet * 1000)) == 0 { return total }
        let outcome = try monitor.drain()
        total.changed = total.changed || outcome.changed
        total.resynchronizedAfterLostEvents = total.resynchronizedAfterLostEvents || outcome.resynchronizedAfterLostEvents
    }
    return total
}

extension NetworkSnapshot {
    func link(named name: String) -> Link? { links.values.first { $0.name == name } }

    func defaults(_ family: AddressFamily) -> [DefaultRoute] { defaultRoutes.filter { $0.family == family } }
}
