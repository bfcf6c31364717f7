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
        descriptor = FileDescriptor(rawValue: try systemCall { timerfd_create(CLOCK_BOOTTIME, Int32(TFD_NONBLOCK | TFD_CLOEXEC)) })
    }

    deinit { try? descriptor.close() }

    /// Fires at `deadline` (at once when it passed), or never (nil). `now` is the clock's
    /// reading the deadline was computed against.
    package func arm(at deadline: ContinuousClock.Instant?, now: ContinuousClock.Instant) throws(Errno) {
        guard deadline != armed else { return }
        var value = itimerspec()
        if let deadline { value.it_value = Self.wait(from: now, to: deadline) }
        _ = try systemCall { timerfd_settime(descriptor.rawValue, 0, &value, nil) }
        armed = deadline
    }

    /// The relative `it_value` that fires at `deadline`: rounded up to the nanosecond, and a
    /// passed deadline one nanosecond away (a zero `it_value` would disarm the timer).
    package static func wait(from now: ContinuousClock.Instant, to deadline: ContinuousClock.Instant) -> timespec {
        guard deadline > now else { return timespec(tv_sec: 0, tv_nsec: 1) }
        let (seconds, attoseconds) = (deadline - now).components
        let nanoseconds = (attoseconds + 999_999_999) / 1_000_000_000
        return nanoseconds == 1_000_000_000 ? timespec(tv_sec: Int(seconds) + 1, tv_nsec: 0) : timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))
    }

    /// Takes the expiry, so the descriptor stops polling readable; the timer is disarmed.
    package func acknowledge() {
        var expirations: UInt64 = 0
        _ = try? systemCall { read(descriptor.rawValue, &expirations, MemoryLayout<UInt64>.size) }
        armed = nil
    }
}
