import LinuxSystem
import SystemPackage

/// Why the Varlink server could not start.
package enum VarlinkServerError: Error, Sendable, CustomStringConvertible {
    /// Another process answers on the socket (or may: `reason` says why it could not tell).
    case alreadyRunning(socketPath: String, reason: String? = nil)
    /// The path exists and is not a socket; reachd will not delete it.
    case notASocket(path: String)
    /// A file-system call failed.
    case fileSystem(operation: String, path: String, errno: Errno)
    /// Binding or listening failed.
    case bindFailed(socketPath: String, reason: String)

    /// One line for logs and stderr.
    package var description: String {
        switch self {
        case let .alreadyRunning(path, nil):
            return "another reachd is already serving \(path)"
        case let .alreadyRunning(path, reason?):
            return "\(path) may be served by another reachd (connecting said: \(reason)); not replacing it"
        case let .notASocket(path):
            return "\(path) exists and is not a socket; refusing to replace it"
        case let .fileSystem(operation, path, errno):
            return "\(operation) \(path): \(errno)"
        case let .bindFailed(path, reason):
            return "cannot listen on \(path): \(reason)"
        }
    }
}

/// The file-system chores around the listening socket's path, as `VarlinkServerError`s.
enum SocketFile {
    package static func kind(of path: String) throws(VarlinkServerError) -> FileSystem.Kind {
        do { return try FileSystem.kind(of: path) } catch { throw .fileSystem(operation: "stat", path: path, errno: error) }
    }

    /// Which file is at `path` now (nil: none).
    static func identity(of path: String) throws(VarlinkServerError) -> FileIdentity? {
        do { return try FileIdentity(of: path) } catch { throw .fileSystem(operation: "stat", path: path, errno: error) }
    }

    /// Creates the parent directories (mode 0755).
    static func createParentDirectories(of path: String) throws(VarlinkServerError) {
        do { try FileSystem.createParentDirectories(of: path) } catch { throw .fileSystem(operation: "mkdir", path: path, errno: error) }
    }

    package static func remove(_ path: String) throws(VarlinkServerError) {
        do { try FileSystem.remove(path) } catch { throw .fileSystem(operation: "unlink", path: path, errno: error) }
    }

    static func setMode(_ path: String, _ mode: UInt32) throws(VarlinkServerError) {
        do {
            try FileSystem.setPermissions(path, FilePermissions(rawValue: .init(mode)))
        } catch {
            throw .fileSystem(operation: "chmod", path: path, errno: error)
        }
    }
}
