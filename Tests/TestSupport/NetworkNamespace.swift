import Foundation
import Glibc

/// A private network namespace (`ip netns add`), deleted with everything in it when the
/// object goes away. The one namespace harness of the tests.
///
/// Configure it with `ip(…)` (`ip -n NAME …`), so nothing ever runs in the host's
/// namespace; run commands in it with `exec`; run test code in it with `inside`, on a
/// thread that joined it (`setns` changes only the calling thread's namespace).
public final class NetworkNamespace: @unchecked Sendable {
    /// The namespace name, as `ip -n` takes it.
    public let name: String
    // Guarded by being created on first use from the test's thread and stopped in deinit.
    private var thread: NamespaceThread?

    /// Creates the namespace; `loopbackUp` sets its `lo` up.
    public init(prefix: String = "reachd", loopbackUp: Bool = true) throws {
        name = "\(prefix)-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
        try sh("ip", "netns", "add", name)
        if loopbackUp { try ip("link", "set", "lo", "up") }
    }

    deinit {
        thread?.stop()
        _ = try? sh("ip", "netns", "del", name, allowFailure: true)
    }

    /// `ip -n NAME …`
    @discardableResult
    public func ip(_ arguments: String...) throws -> String {
        try ip(arguments)
    }

    /// `ip -n NAME …` with the arguments as an array.
    @discardableResult
    public func ip(_ arguments: [String]) throws -> String {
        try runCommand(["ip", "-n", name] + arguments)
    }

    /// `ip -n NAME -batch FILE` with `lines`: many changes in one process.
    public func ipBatch(_ lines: [String]) throws {
        let path = NSTemporaryDirectory() + "\(name)-batch-\(UInt32.random(in: 0...UInt32.max)).txt"
        try lines.joined(separator: "\n").appending("\n").write(toFile: path, atomically: true, encoding: .utf8)
        defer { unlink(path) }
        try ip("-batch", path)
    }

    /// Runs any command inside the namespace.
    @discardableResult
    public func exec(_ arguments: [String]) throws -> String {
        try runCommand(["ip", "netns", "exec", name] + arguments)
    }

    /// Runs `body` on a thread inside the namespace and waits for it. Every call runs on
    /// the same thread, so an object created in one call can be used in the next.
    public func inside<T>(_ body: @escaping () throws -> T) throws -> T {
        if thread == nil { thread = try NamespaceThread(path: "/var/run/netns/\(name)") }
        return try thread!.run(body)
    }
}

/// One thread that joined a network namespace and runs jobs there, one at a time.
private final class NamespaceThread: @unchecked Sendable {
    /// CLONE_NEWNET from <sched.h>.
    private static let cloneNewNet: Int32 = 0x4000_0000
    /// glibc's setns(2); Glibc's module map hides it behind _GNU_SOURCE.
    private static let setns: @convention(c) (Int32, Int32) -> Int32 = {
        guard let symbol = dlsym(nil, "setns") else { fatalError("setns not found") }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
    }()

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var jobs: [() -> Bool] = []
    private var joinError: String?
    private var joined = false

    init(path: String) throws {
        Thread.detachNewThread { [self] in
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
        condition.lock()
        while !joined { condition.wait() }
        let failure = joinError
        condition.unlock()
        if let failure { throw CommandFailed(command: "setns", status: 1, stderr: failure) }
    }

    func run<T>(_ body: @escaping () throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var outcome: Result<T, any Error>?
        nonisolated(unsafe) let work = body
        enqueue {
            outcome = Result { try work() }
            done.signal()
            return true
        }
        done.wait()
        return try outcome!.get()
    }

    func stop() {
        enqueue { false }
    }

    private func enqueue(_ job: @escaping () -> Bool) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }
}
