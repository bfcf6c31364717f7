import CSystemd
import Glibc
import ReachabilityCore

/// Talks to the service manager through `sd_notify(3)`.
///
/// Every call is a no-op when `NOTIFY_SOCKET` is unset (not started by systemd), which is
/// what `sd_notify` itself does, so callers never need to check; `isListening` lets a
/// caller skip building a message nobody will read.
package struct SystemdNotifier: Sendable {
    /// Whether a service manager listens (`NOTIFY_SOCKET` was set when this was created).
    /// Read once: `sd_notify` would look the variable up on every call.
    package let isListening: Bool

    /// Creates a notifier.
    package init() {
        isListening = getenv("NOTIFY_SOCKET") != nil
    }

    /// Sends `KEY=VALUE` lines (see `datagram(_:)`). Failures are ignored: the manager's
    /// absence must never stop the daemon. `sd_notify` blocks while the manager's queue is
    /// full; PID 1 reads it at once and systemd raises `net.unix.max_dgram_qlen` to 512.
    package func send(_ lines: [String]) {
        guard isListening else { return }
        _ = sd_notify(0, Self.datagram(lines))
    }

    /// The longest line sent, in scalars: `systemctl status` shows one line of `STATUS=`.
    package static let lineLimit = 512

    /// The datagram for `lines`: one assignment each, newline-separated (sd_notify(3)).
    ///
    /// A value may carry text from the network (a portal URL in `STATUS=`), and a newline in
    /// it would be a further assignment (`WATCHDOG=trigger`, a forged `STATUS=`). So each
    /// line is written under `UntrustedText`'s rule, which leaves `KEY=` alone and makes
    /// the value one line without controls, and is cut at `lineLimit`. Pure.
    package static func datagram(_ lines: [String]) -> String {
        lines.map { UntrustedText.escaped($0, limit: lineLimit) }.joined(separator: "\n")
    }

    /// `READY=1` with the current status line.
    package func ready(status: String) { send(["READY=1", "STATUS=\(status)"]) }

    /// `STATUS=…`: the one-line summary `systemctl status` shows.
    package func status(_ text: String) { send(["STATUS=\(text)"]) }

    /// `WATCHDOG=1`: the event loop is alive.
    package func watchdog() { send(["WATCHDOG=1"]) }

    /// `STOPPING=1`: shutdown has begun.
    package func stopping() { send(["STOPPING=1", "STATUS=stopping"]) }

    /// `RELOADING=1` with `MONOTONIC_USEC`, as systemd ≥ 253 expects for `Type=notify-reload`.
    package func reloading(monotonicMicroseconds: UInt64) {
        send(["RELOADING=1", "MONOTONIC_USEC=\(monotonicMicroseconds)"])
    }

    /// The watchdog interval the manager asked for (`WATCHDOG_USEC` for this PID), if any.
    package var watchdogIntervalMicroseconds: UInt64? {
        var usec: UInt64 = 0
        return sd_watchdog_enabled(0, &usec) > 0 && usec > 0 ? usec : nil
    }
}
