#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// File-system chores around the listening socket's path, errno mapped in one place.
enum SocketFile {
    /// What is at a path now.
    enum Existing: Equatable {
        case nothing
        case socket
        case other
    }

    static func inspect(_ path: String) throws(VarlinkServerError) -> Existing {
        var info = stat()
        if lstat(path, &info) != 0 {
            if errno == ENOENT { return .nothing }
            throw .fileSystem(operation: "stat", path: path, errno: errno)
        }
        return (info.st_mode & S_IFMT) == S_IFSOCK ? .socket : .other
    }

    /// Creates the parent directory (mode 0755) and its missing ancestors.
    static func createParentDirectory(of path: String) throws(VarlinkServerError) {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        let directory = String(path[..<slash])
        var prefix = ""
        for component in directory.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += (prefix.isEmpty && !directory.hasPrefix("/") ? "" : "/") + component
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw .fileSystem(operation: "mkdir", path: prefix, errno: errno)
            }
        }
    }

    static func remove(_ path: String) throws(VarlinkServerError) {
        if unlink(path) != 0 && errno != ENOENT {
            throw .fileSystem(operation: "unlink", path: path, errno: errno)
        }
    }

    static func setMode(_ path: String, _ mode: UInt32) throws(VarlinkServerError) {
        if chmod(path, mode_t(mode)) != 0 {
            throw .fileSystem(operation: "chmod", path: path, errno: errno)
        }
    }
}

/// Why the Varlink server could not start.
public enum VarlinkServerError: Error, Sendable, CustomStringConvertible {
    /// Another process already answers on the socket.
    case alreadyRunning(socketPath: String)
    /// The path exists and is not a socket; reachd will not delete it.
    case notASocket(path: String)
    /// A file-system call failed.
    case fileSystem(operation: String, path: String, errno: Int32)
    /// Binding or listening failed.
    case bindFailed(socketPath: String, reason: String)

    /// One line for logs and stderr.
    public var description: String {
        switch self {
        case let .alreadyRunning(path):
            return "another reachd is already serving \(path)"
        case let .notASocket(path):
            return "\(path) exists and is not a socket; refusing to replace it"
        case let .fileSystem(operation, path, code):
            return "\(operation) \(path): \(String(cString: strerror(code)))"
        case let .bindFailed(path, reason):
            return "cannot listen on \(path): \(reason)"
        }
    }
}
