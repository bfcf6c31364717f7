import Glibc
import SystemPackage

/// Watches directories for files appearing, disappearing or being rewritten (`inotify(7)`).
///
/// Directories, not files: configuration such as resolv.conf is usually replaced by
/// rename, which a watch on the file itself would miss.
public final class DirectoryWatch {
    /// The descriptor to poll for input.
    public let descriptor: FileDescriptor

    /// Opens an inotify instance watching each of `directories` (missing ones are skipped:
    /// they may never exist on this host).
    public init(_ directories: Set<String>) throws(Errno) {
        descriptor = FileDescriptor(rawValue: try systemCall { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) })
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE)
        for directory in directories {
            do {
                _ = try systemCall { inotify_add_watch(descriptor.rawValue, directory, mask) }
            } catch .noSuchFileOrDirectory {
                continue
            } catch {
                try? descriptor.close()
                throw error
            }
        }
    }

    deinit { try? descriptor.close() }

    /// Reads and discards every queued event: the caller re-reads the files instead.
    public func drain() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while (try? buffer.withUnsafeMutableBytes { try descriptor.read(into: $0) }) ?? 0 > 0 {}
    }
}
