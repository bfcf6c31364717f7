import Glibc

/// Opens a Unix socket of `type` and binds or connects it to `path`; returns the fd, or
/// throws with errno. Shared by the raw Varlink client and the NOTIFY_SOCKET listener.
func unixSocket(_ type: __socket_type, path: String, connecting: Bool) throws -> Int32 {
    let fd = socket(AF_UNIX, Int32(type.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw CommandFailed(command: "socket", status: errno, stderr: "") }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let pathBytes = Array(path.utf8)
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
        for (index, byte) in pathBytes.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
    }
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            connecting ? connect(fd, pointer, socklen_t(MemoryLayout<sockaddr_un>.size))
                : bind(fd, pointer, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard result == 0 else {
        let code = errno
        close(fd)
        throw CommandFailed(command: "\(connecting ? "connect" : "bind") \(path)", status: code, stderr: "")
    }
    return fd
}
