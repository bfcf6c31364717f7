import CSystemd

/// Talks to the service manager through `sd_notify(3)`.
///
/// Every call is a no-op when `NOTIFY_SOCKET` is unset (not started by systemd), which is
/// what `sd_notify` itself does, so callers never need to check.
public struct SystemdNotifier: Sendable {
    /// Creates a notifier.
    public init() {}

    /// Sends raw `KEY=VALUE` lines. Failures are ignored: the manager's absence or a full
    /// socket must never stop the daemon.
    public func send(_ lines: [String]) {
        let message = lines.joined(separator: "\n")
        _ = sd_notify(0, message)
    }

    /// `READY=1` with the current status line.
    public func ready(status: String) { send(["READY=1", "STATUS=\(status)"]) }

    /// `STATUS=…`: the one-line summary `systemctl status` shows.
    public func status(_ text: String) { send(["STATUS=\(text)"]) }

    /// `WATCHDOG=1`: the event loop is alive.
    public func watchdog() { send(["WATCHDOG=1"]) }

    /// `STOPPING=1`: shutdown has begun.
    public func stopping() { send(["STOPPING=1", "STATUS=stopping"]) }

    /// `RELOADING=1` with `MONOTONIC_USEC`, as systemd ≥ 253 expects for `Type=notify-reload`.
    public func reloading(monotonicMicroseconds: UInt64) {
        send(["RELOADING=1", "MONOTONIC_USEC=\(monotonicMicroseconds)"])
    }

    /// The watchdog interval the manager asked for (`WATCHDOG_USEC` for this PID), if any.
    public var watchdogIntervalMicroseconds: UInt64? {
        var usec: UInt64 = 0
        return sd_watchdog_enabled(0, &usec) > 0 && usec > 0 ? usec : nil
    }
}
