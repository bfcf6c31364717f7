import Glibc
import LinuxSystem
import ReachDispatch
import Synchronization
import SystemPackage

/// The process group of the hook running now (0: none), for the signal handler: a
/// dispatcher stopped by SIGTERM or Ctrl-C stops its hook too (it runs in a group of its
/// own, so the terminal's signals and the dispatcher's death would not reach it).
let runningHookGroup = Atomic<Int32>(0)

/// One hook run: spawned with its environment, watched until it exits or its deadline
/// kills it, its output forwarded line by line. The decisions are `HookDeadline` and
/// `HookOutputLines`; this is the IO.
enum HookProcess {
    /// Runs `path` with `environment` (NAME=value entries) and returns how it ended; throws
    /// when it could not be started. Blocks the calling thread until then.
    static func run(path: String, label: String, environment: [String], deadline: HookDeadline) throws(Errno) -> HookOutcome {
        let outputPipe = try makePipe()
        let errorPipe: [Int32]
        do {
            errorPipe = try makePipe()
        } catch {
            close(outputPipe[0]); close(outputPipe[1])
            throw error
        }
        let pid: pid_t
        do {
            pid = try spawn(path: path, environment: environment, stdout: outputPipe[1], stderr: errorPipe[1])
        } catch {
            for descriptor in outputPipe + errorPipe { close(descriptor) }
            throw error
        }
        close(outputPipe[1])
        close(errorPipe[1])
        runningHookGroup.store(pid, ordering: .relaxed)
        defer { runningHookGroup.store(0, ordering: .relaxed) }
        return supervise(pid: pid, label: label, output: outputPipe[0], error: errorPipe[0], deadline: deadline)
    }

    /// A pipe whose ends a spawned hook does not inherit (only the ends dup2 gives it).
    /// The Glibc module lacks pipe2; reachctl starts no other process meanwhile.
    private static func makePipe() throws(Errno) -> [Int32] {
        var ends: [Int32] = [-1, -1]
        _ = try systemCall { pipe(&ends) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return ends
    }

    /// posix_spawn: stdin from /dev/null, stdout and stderr to the pipes, a process group
    /// of its own, every signal at its default and none blocked (whatever the dispatcher
    /// ignores or blocks, e.g. SIGPIPE, is not passed on).
    private static func spawn(path: String, environment: [String], stdout: Int32, stderr: Int32) throws(Errno) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        sigdelset(&all, SIGKILL)
        sigdelset(&all, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup(path), nil]
        let variables: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer { for pointer in arguments + variables { free(pointer) } }
        var pid: pid_t = 0
        // posix_spawn returns the error number instead of setting errno.
        let result = posix_spawn(&pid, path, &actions, &attributes, arguments, variables)
        guard result == 0 else { throw Errno(rawValue: result) }
        return pid
    }

    /// Forwards the output and applies the deadline until the hook is reaped.
    private static func supervise(pid: pid_t, label: String, output: Int32, error: Int32, deadline: HookDeadline) -> HookOutcome {
        var deadline = deadline
        var streams = [ForwardedStream(descriptor: output, label: label, toError: false),
                       ForwardedStream(descriptor: error, label: label, toError: true)]
        let started = ContinuousClock.now
        var status: Int32 = 0
        var timedOut = false
        while true {
            if waitpid(pid, &status, WNOHANG) == pid { break }
            var wait = Duration.milliseconds(100)
            switch deadline.step(elapsed: ContinuousClock.now - started) {
            case let .wait(left):
                wait = min(wait, left)
            case .terminate:
                timedOut = true
                printWarning("reachctl dispatch: \(label) still runs at its timeout (\(seconds(deadline.timeout))): sending SIGTERM")
                kill(-pid, SIGTERM)
                wait = .zero
            case .kill:
                printWarning("reachctl dispatch: \(label) still runs \(seconds(deadline.grace)) after SIGTERM: sending SIGKILL")
                kill(-pid, SIGKILL)
                wait = .zero
            }
            // Output wakes the poll; a hook that exited closes its pipes (unless a child it
            // left behind holds them), which wakes it too.
            var descriptors = streams.filter(\.isOpen).map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
            let milliseconds = Int32(min(100, max(0, wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000)))
            _ = poll(&descriptors, nfds_t(descriptors.count), descriptors.isEmpty ? min(milliseconds, 10) : milliseconds)
            for index in streams.indices where streams[index].isOpen {
                if let ready = descriptors.first(where: { $0.fd == streams[index].descriptor }), ready.revents != 0 {
                    streams[index].readAvailable()
                }
            }
        }
        // Reaped: take what is already written, without waiting for a child that may
        // still hold a pipe.
        for index in streams.indices { streams[index].drainAndClose() }
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal, timedOut: timedOut)
    }

    private static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(Double(milliseconds) / 1000) s"
    }
}

/// One of a hook's output pipes, forwarded to the dispatcher's own stream with the hook's
/// name before each line.
private struct ForwardedStream {
    let descriptor: Int32
    let label: String
    let toError: Bool
    var isOpen = true
    private var lines = HookOutputLines()

    init(descriptor: Int32, label: String, toError: Bool) {
        self.descriptor = descriptor
        self.label = label
        self.toError = toError
    }

    /// One read: what is there now (poll said so), or the end.
    mutating func readAvailable() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count > 0 {
            forward(lines.feed(buffer[..<count]))
        } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
            forward(lines.finish())
            close(descriptor)
            isOpen = false
        }
    }

    /// Everything readable without waiting, then the end.
    mutating func drainAndClose() {
        guard isOpen else { return }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        // Bounded: a child left behind that keeps writing cannot hold the dispatcher here.
        for _ in 0..<256 where isOpen {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            forward(lines.feed(buffer[..<count]))
        }
        forward(lines.finish())
        close(descriptor)
        isOpen = false
    }

    private func forward(_ lines: [String]) {
        for line in lines {
            if toError { printError("\(label): \(line)") } else { printLine("\(label): \(line)") }
        }
    }
}
