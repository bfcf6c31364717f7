import Foundation
import Glibc
import TestSupport

/// The real `reachd` binary running inside a namespace, with its own socket, a
/// NOTIFY_SOCKET the test listens on, and a resolv.conf the test controls.
final class DaemonProcess {
    let directory: String
    let socketPath: String
    let resolvConf: String
    let notify: NotifyListener
    let process: Process
    private let logFile: String

    /// - Parameters:
    ///   - launcher: a command reachd runs under (e.g. `systemd-socket-activate …`).
    ///   - socketPath: where to listen; by default in the daemon's own directory (a restart
    ///     test passes the previous run's).
    init(namespace: NetworkNamespace, extraArguments: [String] = [], environment: [String: String] = [:], launcher: [String] = [],
         socketPath: String? = nil) throws {
        directory = try Paths.makeTemporaryDirectory("reachd-it")
        self.socketPath = socketPath ?? directory + "/io.reachd.Reachability"
        resolvConf = directory + "/resolv.conf"
        logFile = directory + "/reachd.log"
        try "nameserver 192.0.2.53\n".write(toFile: resolvConf, atomically: true, encoding: .utf8)
        notify = try NotifyListener(directory: directory)

        _ = FileManager.default.createFile(atPath: logFile, contents: nil)
        let log = FileHandle(forWritingAtPath: logFile)
        let arguments = ["ip", "netns", "exec", namespace.name] + launcher + [Paths.product("reachd"),
                         "--socket", self.socketPath, "--resolv-conf", resolvConf, "--log-level", "debug"] + extraArguments
        let inherited = ["WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID", "REACHD_SOCKET"]
        process = try Command.launch(
            arguments, environment: environment.merging(["NOTIFY_SOCKET": notify.path]) { mine, _ in mine },
            unset: inherited.filter { environment[$0] == nil }, stdout: log, stderr: log
        )
    }

    /// Starts the daemon and waits for READY=1.
    static func started(
        in namespace: NetworkNamespace, extraArguments: [String] = [], environment: [String: String] = [:], socketPath: String? = nil
    ) throws -> DaemonProcess {
        let daemon = try DaemonProcess(namespace: namespace, extraArguments: extraArguments, environment: environment, socketPath: socketPath)
        guard daemon.notify.waitFor("READY=1", timeout: 30) else {
            daemon.terminate()
            throw CommandFailed(command: "reachd", status: daemon.process.terminationStatus,
                                stderr: "no READY=1 within 30 s; log:\n\(daemon.log)")
        }
        return daemon
    }

    /// What the daemon wrote to stderr so far.
    var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    /// Waits until the log holds `text`, for at most `timeout` seconds; whether it came.
    func waitForLog(_ text: String, timeout: Double) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while !log.contains(text) {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return true
    }

    /// Stops the daemon with SIGSTOP and returns once every thread of it has stopped.
    ///
    /// kill(2) returns before the stop reaches the threads; on a busy machine one of them
    /// can go on for milliseconds, accepting connections or reading netlink events, which
    /// is exactly what a test that stops the daemon means to prevent.
    func suspend() throws {
        let pid = process.processIdentifier
        guard kill(pid, SIGSTOP) == 0 else {
            throw CommandFailed(command: "kill -STOP \(pid)", status: errno, stderr: String(cString: strerror(errno)))
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while !Self.allThreadsStopped(pid) {
            guard ContinuousClock.now < deadline else {
                throw CommandFailed(command: "kill -STOP \(pid)", status: 0, stderr: "some thread of reachd still runs after 10 s")
            }
            usleep(1_000)
        }
    }

    /// Sends SIGCONT.
    func resume() {
        kill(process.processIdentifier, SIGCONT)
    }

    /// reachd's threads now, by thread id, each with its name (/proc/PID/task/TID/comm).
    func threads() -> [(id: String, name: String)] {
        let pid = process.processIdentifier
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }.compactMap { task in
            (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)).map {
                (task, $0.trimmingCharacters(in: .newlines))
            }
        }
    }

    /// Whether /proc/PID/task/*/stat shows every thread in state T (stopped).
    private static func allThreadsStopped(_ pid: Int32) -> Bool {
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task"), !threads.isEmpty else { return false }
        return threads.allSatisfy { thread in
            // The state follows the command name's closing parenthesis: "pid (comm) T …".
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first == "T"
        }
    }

    /// Sends SIGTERM and waits for the exit status.
    @discardableResult
    func terminate() -> Int32 {
        if process.isRunning {
            process.terminate()
            // A test that stopped the daemon and failed before resuming it.
            resume()
            process.waitUntilExit()
        }
        return process.terminationStatus
    }

    deinit {
        terminate()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
