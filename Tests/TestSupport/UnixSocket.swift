import Glibc

/// Opens a Unix socket of `type` and connects it to `path` (`.connect`) or binds it there
/// (`.bind`); returns the descriptor. The one place the tests fill in a `sockaddr_un`.
public func unixSocket(_ type: __socket_type, path: String, _ mode: UnixSocketMode) throws -> Int32 {
    let fd = socket(AF_UNIX, Int32(type.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw CommandFailed(command: "socket", status: errno, stderr: "") }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
        close(fd)
        throw CommandFailed(command: "unix socket \(path)", status: ENAMETOOLONG, stderr: "path too long")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
        buffer.copyBytes(from: bytes)
        buffer[bytes.count] = 0
    }
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            let length = socklen_t(MemoryLayout<sockaddr_un>.size)
            return mode == .connect ? connect(fd, pointer, length) : bind(fd, pointer, length)
        }
    }
    guard result == 0 else {
        let code = errno
        close(fd)
        throw CommandFailed(command: "\(mode) \(path)", status: code, stderr: String(cString: strerror(code)))
    }
    return fd
}

/// What `unixSocket` does with the path.
public enum UnixSocketMode: Sendable {
    /// Connect to a listening socket there.
    case connect
    /// Bind a new socket there (creating the socket file).
    case bind
}
