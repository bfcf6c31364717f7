import CLinux
import Glibc

/// How long the machine has been suspended since boot: CLOCK_BOOTTIME minus CLOCK_MONOTONIC,
/// which differ only by the time spent asleep (clock_gettime(2)). Both are read through the
/// vDSO, so a look costs no system call; a jump between two looks is a sleep and wake.
package enum SuspendClock {
    /// The machine's total time asleep since boot.
    package static func asleepSinceBoot() -> Duration {
        var boot = timespec()
        var monotonic = timespec()
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        clock_gettime(CLOCK_BOOTTIME, &boot)
        return duration(boot) - duration(monotonic)
    }

    private static func duration(_ time: timespec) -> Duration {
        .seconds(Int64(time.tv_sec)) + .nanoseconds(Int64(time.tv_nsec))
    }
}
