import Glibc
import SystemPackage

/// `poll(2)` over a fixed set of descriptors, each watched for input.
package struct PollSet {
    private let descriptors: [FileDescriptor]
    private var entries: [pollfd]

    /// Watches `descriptors` for readability, in this order.
    package init(_ descriptors: [FileDescriptor]) {
        self.descriptors = descriptors
        entries = descriptors.map { pollfd(fd: $0.rawValue, events: Int16(POLLIN), revents: 0) }
    }

    /// Leaves the descriptor at `index` out of the following waits (`enabled: false`), or
    /// takes it back in. A left-out descriptor never reports ready.
    package mutating func setEnabled(_ enabled: Bool, at index: Int) {
        // poll(2) skips entries whose descriptor is negative.
        entries[index].fd = enabled ? descriptors[index].rawValue : -1
    }

    /// Watches the descriptor at `index` for `events` (`POLLIN`, `POLLOUT`) instead of input
    /// only: what sd-bus asks for while it has writes queued.
    package mutating func setEvents(_ events: Int16, at index: Int) {
        entries[index].events = events
    }

    /// Blocks until a descriptor is readable (or in error) or `timeoutMilliseconds` pass
    /// (nil: no timeout). Returns, per descriptor in `init` order, whether it is ready.
    /// An interrupted wait is retried with the same timeout.
    package mutating func wait(timeoutMilliseconds: Int32?) throws(Errno) -> [Bool] {
        let count = nfds_t(entries.count)
        _ = try entries.withUnsafeMutableBufferPointer { buffer throws(Errno) in
            try systemCall { poll(buffer.baseAddress, count, timeoutMilliseconds ?? -1) }
        }
        return entries.map { $0.revents != 0 }
    }
}
