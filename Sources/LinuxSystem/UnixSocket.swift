import Glibc
import SystemPackage

/// Unix stream sockets by path: the one place a `sockaddr_un` is filled in.
package enum UnixSocket {
    /// Calls `body` with the address of the socket at `path`.
    ///
    /// - Throws: `.fileNameTooLong` when the path does not fit `sun_path` (107 bytes).
    package static func withAddress<Result>(
        _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) throws(Errno) -> Result
    ) throws(Errno) -> Result {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw .fileNameTooLong }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        return try withUnsafePointer(to: &address) { pointer throws(Errno) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (address) throws(Errno) in
                try body(address, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }

    /// A new listening stream socket bound at `path` (which must not exist), non-blocking
    /// and close-on-exec. The caller owns the descriptor and the socket file it created.
    package static func listen(at path: String, backlog: Int32) throws(Errno) -> FileDescriptor {
        let descriptor = FileDescriptor(rawValue: try systemCall {
            socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        })
        do {
            _ = try withAddress(path) { (address, length) throws(Errno) in try systemCall { bind(descriptor.rawValue, address, length) } }
            _ = try systemCall { Glibc.listen(descriptor.rawValue, backlog) }
        } catch {
            try? descriptor.close()
            throw error
        }
        return descriptor
    }

    /// A blocking stream socket connected to `path`, close-on-exec, whose reads and writes
    /// give up after `timeout` (EAGAIN). For short calls from a worker thread.
    package static func connect(to path: String, timeout: Duration) throws(Errno) -> FileDescriptor {
        let descriptor = FileDescriptor(rawValue: try systemCall {
            socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        })
        do {
            try descriptor.setTimeouts(timeout)
            _ = try withAddress(path) { (address, length) throws(Errno) in try systemCall { Glibc.connect(descriptor.rawValue, address, length) } }
        } catch {
            try? descriptor.close()
            throw error
        }
        return descriptor
    }
}
