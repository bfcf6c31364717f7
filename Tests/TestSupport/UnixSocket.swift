import Glibc
import LinuxSystem
import SystemPackage

/// Opens a Unix socket of `type` and connects it to `path` (`.connect`) or binds it there
/// (`.bind`); returns the descriptor. The address is filled in by LinuxSystem's
/// `UnixSocket.withAddress`, the one place the repository builds a `sockaddr_un`.
/// `nonBlocking`: a connect to a listener whose backlog is full fails (`CommandFailed`
/// with status EAGAIN) instead of waiting.
public func unixSocket(_ type: __socket_type, path: String, _ mode: UnixSocketMode, nonBlocking: Bool = false) throws -> Int32 {
    let fd = socket(AF_UNIX, Int32(type.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | (nonBlocking ? Int32(SOCK_NONBLOCK.rawValue) : 0), 0)
    guard fd >= 0 else { throw CommandFailed(command: "socket", status: errno, stderr: "") }
    do {
        _ = try UnixSocket.withAddress(path) { (address, length) throws(Errno) in
            try systemCall { mode == .connect ? connect(fd, address, length) : bind(fd, address, length) }
        }
    } catch {
        close(fd)
        throw CommandFailed(command: "\(mode) \(path)", status: error.rawValue, stderr: error.description)
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
