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

    /// Sends SIGTERM and waits for the exit status.
    @discardableResult
    func terminate() -> Int32 {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        return process.terminationStatus
    }

    deinit {
        terminate()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
