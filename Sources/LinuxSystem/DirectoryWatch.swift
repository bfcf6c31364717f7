import Glibc
import SystemPackage

/// Watches directories for files appearing, disappearing or being rewritten (`inotify(7)`).
///
/// Directories, not files: configuration such as resolv.conf is usually replaced by
/// rename, which a watch on the file itself would miss.
public final class DirectoryWatch {
    /// The descriptor to poll for input.
    public let descriptor: FileDescriptor

    /// Opens an inotify instance watching nothing yet.
    public init() throws(Errno) {
        descriptor = FileDescriptor(rawValue: try systemCall { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) })
    }

    /// Watches `directory` for entries created, deleted, moved in or out, or rewritten.
    /// Watching a directory already watched changes nothing; false when it does not exist.
    @discardableResult
    public func watch(_ directory: String) throws(Errno) -> Bool {
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE)
        do {
            _ = try systemCall { inotify_add_watch(descriptor.rawValue, directory, mask) }
            return true
        } catch .noSuchFileOrDirectory, .notDirectory {
            return false
        }
    }

    deinit { try? descriptor.close() }

    /// Reads and discards every queued event: the caller re-reads the files instead.
    public func drain() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while (try? buffer.withUnsafeMutableBytes { try descriptor.read(into: $0) }) ?? 0 > 0 {}
    }
}
