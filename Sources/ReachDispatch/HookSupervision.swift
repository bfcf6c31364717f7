import ReachabilityCore

/// When a running hook is stopped: SIGTERM to its process group at the timeout, SIGKILL
/// once `grace` has passed after that. Pure: the caller tells it how long the hook has run.
package struct HookDeadline: Sendable, Hashable {
    /// What the hook has been sent so far.
    package enum Stage: Sendable, Hashable {
        /// Nothing: within its time.
        case running
        /// SIGTERM, at the timeout.
        case terminated
        /// SIGKILL, after the grace period.
        case killed
    }

    /// What to do now.
    package enum Action: Sendable, Hashable {
        /// Nothing to send; look again within this long (or when the hook exits).
        case wait(Duration)
        /// Send SIGTERM to the hook's process group.
        case terminate
        /// Send SIGKILL to the hook's process group.
        case kill
    }

    /// How long a hook may run.
    package let timeout: Duration
    /// How long a hook has to exit after SIGTERM.
    package let grace: Duration
    /// What it was sent.
    package private(set) var stage = Stage.running

    /// A deadline for one run.
    package init(timeout: Duration, grace: Duration) {
        self.timeout = timeout
        self.grace = grace
    }

    /// The step after the hook has run for `elapsed` and not exited yet.
    package mutating func step(elapsed: Duration) -> Action {
        switch stage {
        case .running:
            guard elapsed >= timeout else { return .wait(timeout - elapsed) }
            stage = .terminated
            return .terminate
        case .terminated:
            guard elapsed >= timeout + grace else { return .wait(timeout + grace - elapsed) }
            stage = .killed
            return .kill
        case .killed:
            // Nothing can outlast SIGKILL but a process stuck in the kernel: keep reaping.
            return .wait(.milliseconds(100))
        }
    }
}

/// Cuts a hook's output into lines for the log, each shown under `UntrustedText`'s rule
/// and at most `limit` bytes: a hook that never ends a line cannot make the dispatcher
/// hold more than that.
package struct HookOutputLines: Sendable {
    /// Longest line kept whole, in bytes; longer ones are cut into pieces this long.
    package let limit: Int
    private var pending: [UInt8] = []

    /// A splitter with a line limit.
    package init(limit: Int = 4096) {
        self.limit = limit
    }

    /// The lines `bytes` complete (without their newline).
    package mutating func feed(_ bytes: some Sequence<UInt8>) -> [String] {
        var lines: [String] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                lines.append(Self.shown(pending))
                pending.removeAll(keepingCapacity: true)
            } else {
                pending.append(byte)
                if pending.count >= limit {
                    lines.append(Self.shown(pending))
                    pending.removeAll(keepingCapacity: true)
                }
            }
        }
        return lines
    }

    /// What is left once the output ended: an unfinished last line, if any.
    package mutating func finish() -> [String] {
        defer { pending.removeAll() }
        return pending.isEmpty ? [] : [Self.shown(pending)]
    }

    private static func shown(_ bytes: [UInt8]) -> String {
        UntrustedText.escaped(String(decoding: bytes, as: UTF8.self))
    }
}

/// How a hook's run ended, for the log line.
package enum HookOutcome: Sendable, Hashable {
    /// It exited with this status.
    case exited(Int32)
    /// A signal ended it; `timedOut` when the dispatcher sent it at the timeout.
    case signalled(Int32, timedOut: Bool)

    /// The log line's end: "exited with status 0", "killed by signal 9 at its timeout".
    package var description: String {
        switch self {
        case let .exited(status): return "exited with status \(status)"
        case let .signalled(signal, timedOut): return "killed by signal \(signal)" + (timedOut ? " at its timeout" : "")
        }
    }
}
