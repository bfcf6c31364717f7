import CLinux
import Glibc
import SystemPackage

/// A `timerfd(2)` on CLOCK_BOOTTIME, the clock `ContinuousClock` reads on Linux: unlike a
/// `poll(2)` timeout (CLOCK_MONOTONIC, which stands still while the machine sleeps), a
/// deadline that passed during a sleep fires at resume. Non-blocking and close-on-exec;
/// re-armed only when the deadline moves, so an unchanged wait costs no system call.
package final class BootClockTimer {
    /// The descriptor to poll for input: readable once the deadline passed.
    package let descriptor: FileDescriptor
    /// The deadline it is armed for; nil while disarmed.
    private var armed: ContinuousClock.Instant?

    /// A disarmed timer.
    package init() throws(Errno) {
        descriptor = FileDescriptor(rawValue: try systemCall { reachd_timerfd_create(CLOCK_BOOTTIME, O_NONBLOCK | O_CLOEXEC) })
    }

    deinit { try? descriptor.close() }

    /// Fires at `deadline` (at once when it passed), or never (nil). `now` is the clock's
    /// reading the deadline was computed against.
    package func arm(at deadline: ContinuousClock.Instant?, now: ContinuousClock.Instant) throws(Errno) {
        guard deadline != armed else { return }
        let wait = deadline.map { Self.wait(from: now, to: $0) } ?? (seconds: 0, nanoseconds: 0)
        _ = try systemCall { reachd_timerfd_arm(descriptor.rawValue, wait.seconds, wait.nanoseconds) }
        armed = deadline
    }

    /// The relative wait that fires at `deadline`: rounded up to the nanosecond, and a
    /// passed deadline one nanosecond away (a zero wait would disarm the timer).
    package static func wait(from now: ContinuousClock.Instant, to deadline: ContinuousClock.Instant) -> (seconds: Int, nanoseconds: Int) {
        guard deadline > now else { return (0, 1) }
        let (seconds, attoseconds) = (deadline - now).components
        let nanoseconds = (attoseconds + 999_999_999) / 1_000_000_000
        return nanoseconds == 1_000_000_000 ? (Int(seconds) + 1, 0) : (Int(seconds), Int(nanoseconds))
    }

    /// Takes the expiry, so the descriptor stops polling readable; the timer is disarmed.
    package func acknowledge() {
        var expirations: UInt64 = 0
        _ = try? systemCall { read(descriptor.rawValue, &expirations, MemoryLayout<UInt64>.size) }
        armed = nil
    }
}
