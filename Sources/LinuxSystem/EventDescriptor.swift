import CLinux
import Glibc
import SystemPackage

/// An `eventfd(2)` counter used as a doorbell: any thread rings it, the thread that polls
/// it wakes up and empties it. Non-blocking and close-on-exec.
package final class EventDescriptor: Sendable {
    /// The descriptor to poll for input.
    package let descriptor: FileDescriptor

    /// Creates the counter at zero.
    package init() throws(Errno) {
        descriptor = FileDescriptor(rawValue: try systemCall { eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) })
    }

    deinit { try? descriptor.close() }

    /// Wakes whoever polls the descriptor. Safe from any thread; never blocks (the counter
    /// saturates long before 2^64 rings).
    package func ring() {
        var one: UInt64 = 1
        _ = try? systemCall { write(descriptor.rawValue, &one, MemoryLayout<UInt64>.size) }
    }

    /// Empties the counter so the descriptor stops polling readable.
    package func reset() {
        var count: UInt64 = 0
        _ = try? systemCall { read(descriptor.rawValue, &count, MemoryLayout<UInt64>.size) }
    }
}
