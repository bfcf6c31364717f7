// LinuxSystem: the Linux calls reachd makes that swift-system does not wrap (poll,
// eventfd, signalfd, inotify, a socket option, a few file-system chores), typed the way
// swift-system types its own: `FileDescriptor` in, `Errno` out. Every `errno` read in the
// daemon happens in this module, once, in `systemCall` below.

import Glibc
import SystemPackage

/// Runs a C call that returns -1 and sets `errno` on failure, and turns that into a thrown
/// `Errno`. Interrupted calls (`EINTR`) are retried unless `retryOnInterrupt` is false.
///
/// This is swift-system's own convention (its `valueOrErrno` is not public), kept in one
/// place so no other file reads `errno`.
@inlinable
package func systemCall<Result: FixedWidthInteger>(
    retryOnInterrupt: Bool = true, _ call: () -> Result
) throws(Errno) -> Result {
    while true {
        let result = call()
        if result != -1 { return result }
        let error = Errno(rawValue: errno)
        if retryOnInterrupt && error == .interrupted { continue }
        throw error
    }
}

/// Runs a swift-system call, whose declared error is `any Error` but is always an `Errno`,
/// and rethrows that `Errno` typed.
@inlinable
package func typedErrno<Result>(_ call: () throws -> Result) throws(Errno) -> Result {
    do {
        return try call()
    } catch let error as Errno {
        throw error
    } catch {
        // swift-system only ever throws Errno; anything else would be a library change.
        preconditionFailure("swift-system threw a non-Errno error: \(error)")
    }
}
