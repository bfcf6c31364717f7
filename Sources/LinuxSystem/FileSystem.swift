import CLinux
import Glibc
import SystemPackage

/// The file-system chores reachd needs, by path, with `Errno` errors.
package enum FileSystem {
    /// What is at a path, without following a final symbolic link.
    package enum Kind: Sendable, Equatable {
        /// Nothing: the path does not exist.
        case nothing
        /// A Unix socket.
        case socket
        /// A regular file.
        case regularFile
        /// A directory.
        case directory
        /// Anything else (symbolic link, device, FIFO).
        case other
    }

    /// What is at `path` (`lstat(2)`); `.nothing` for ENOENT, other failures thrown.
    package static func kind(of path: String) throws(Errno) -> Kind {
        let info: Stat
        do {
            info = try Stat(FilePath(path), followTargetSymlink: false)
        } catch .noSuchFileOrDirectory {
            return .nothing
        }
        switch info.type {
        case .socket: return .socket
        case .regular: return .regularFile
        case .directory: return .directory
        default: return .other
        }
    }

    /// The directory part of `path` (`/a/b` for `/a/b/c`, `/` for `/c`, `.` for `c`).
    package static func directory(containing path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The last component of `path`: what its directory lists it as.
    package static func name(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// Whether anything exists at `path` (a dangling symbolic link counts).
    package static func exists(_ path: String) -> Bool {
        (try? kind(of: path)).map { $0 != .nothing } ?? false
    }

    /// Whether something may be at `path`: false only when `lstat(2)` says nothing is
    /// (ENOENT, ENOTDIR). A directory this process may not search counts as "may", so a
    /// caller goes on to the real error instead of quietly choosing another path.
    package static func mayExist(_ path: String) -> Bool {
        do {
            return try kind(of: path) != .nothing
        } catch .notDirectory {
            return false
        } catch {
            return true
        }
    }

    /// The first path on the way to the Unix socket `path` that denies this process
    /// (real uid) access: a directory it may not search, else the socket itself when it
    /// may not write to it (what `connect(2)` needs). Nil when nothing is denied.
    package static func firstDenied(onTheWayTo path: String) -> String? {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/").dropLast() {
            prefix += "/" + component
            if access(prefix, X_OK) != 0 && errno == EACCES { return prefix }
        }
        if access(path, W_OK) != 0 && errno == EACCES { return path }
        return nil
    }

    /// Reads a whole small file (configuration, sysfs attributes, resolv.conf).
    ///
    /// - Throws: the `Errno` of the failed call; `.fileTooLarge` beyond `limit` bytes,
    ///   `.isDirectory` for a directory and `.invalidArgument` for anything else that
    ///   is not a regular file (a FIFO would block forever), unless `regularFileOnly` is false.
    package static func contents(of path: String, limit: Int = 1 << 20, regularFileOnly: Bool = true) throws(Errno) -> [UInt8] {
        // Non-blocking, so that opening a FIFO nobody writes to returns at once instead of hanging.
        let descriptor = try typedErrno { try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec, .nonBlocking]) }
        defer { try? descriptor.close() }
        if regularFileOnly {
            let type = try descriptor.stat().type
            if type == .directory { throw .isDirectory }
            if type != .regular { throw .invalidArgument }
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count = try typedErrno { try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) } }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            if bytes.count > limit { throw .fileTooLarge }
        }
    }

    /// The names in `directory` (not `.` or `..`), in readdir order, at most `limit`.
    package static func names(in directory: String, limit: Int = 4096) throws(Errno) -> [String] {
        guard let stream = opendir(directory) else { throw Errno(rawValue: errno) }
        defer { closedir(stream) }
        var names: [String] = []
        while names.count < limit, let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// The target a symbolic link points to, as written in the link.
    package static func symbolicLinkTarget(of path: String) throws(Errno) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        let count = try systemCall { readlink(path, &buffer, buffer.count - 1) }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Creates `path`'s missing parent directories with `permissions` (`mkdir -p` of the dirname).
    package static func createParentDirectories(of path: String, permissions: FilePermissions = [.ownerReadWriteExecute, .groupReadExecute, .otherReadExecute]) throws(Errno) {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path[..<slash].split(separator: "/") {
            prefix += "/" + component
            do {
                _ = try systemCall { mkdir(prefix, permissions.rawValue) }
            } catch .fileExists {
                continue
            }
        }
    }

    /// Removes a file; a path that is already gone is fine.
    package static func remove(_ path: String) throws(Errno) {
        do {
            _ = try systemCall { unlink(path) }
        } catch .noSuchFileOrDirectory {
            return
        }
    }

    /// Replaces `path` with `contents` atomically: written to a hidden temporary file in the
    /// same directory (`.NAME.PID.tmp`), then renamed over `path`, so a reader sees the old
    /// file or the new one, never a part. The temporary file is removed if anything fails.
    package static func replace(_ path: String, contents: [UInt8], permissions: FilePermissions = [.ownerReadWrite, .groupRead, .otherRead]) throws(Errno) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let temporary = "\(directory).\(name).\(getpid()).tmp"
        do {
            let descriptor = try typedErrno {
                try FileDescriptor.open(FilePath(temporary), .writeOnly, options: [.create, .truncate, .closeOnExec], permissions: permissions)
            }
            defer { try? descriptor.close() }
            _ = try typedErrno { try descriptor.writeAll(contents) }
            _ = try systemCall { rename(temporary, path) }
        } catch {
            try? remove(temporary)
            throw error
        }
    }

    /// Sets a file's permission bits.
    package static func setPermissions(_ path: String, _ permissions: FilePermissions) throws(Errno) {
        _ = try systemCall { chmod(path, permissions.rawValue) }
    }
}

extension FileSystem {
    /// The inode number of this process's network namespace: stat(2) of
    /// `/proc/self/ns/net`, the link followed (any process can compare its own); nil without /proc.
    package static func networkNamespaceInode() -> UInt64? {
        (try? Stat(FilePath("/proc/self/ns/net"), followTargetSymlink: true)).map { UInt64($0.inode.rawValue) }
    }
}

/// Which file a path named at one moment: device, inode and change time. Compared later,
/// it tells whether the path still names the same file. The change time is part of it
/// because file systems hand a deleted file's inode number to the next file created.
package struct FileIdentity: Sendable, Hashable {
    /// `st_dev`.
    package var device: UInt64
    /// `st_ino`.
    package var inode: UInt64
    /// `st_ctim`, in nanoseconds.
    package var changed: Int64

    /// Creates an identity from its parts.
    package init(device: UInt64, inode: UInt64, changed: Int64 = 0) {
        self.device = device
        self.inode = inode
        self.changed = changed
    }

    /// The identity of what is at `path` now, without following a final symbolic link;
    /// nil when nothing is there.
    package init?(of path: String) throws(Errno) {
        let info: Stat
        do {
            info = try Stat(FilePath(path), followTargetSymlink: false)
        } catch .noSuchFileOrDirectory {
            return nil
        }
        let changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
        self.init(device: UInt64(info.deviceID.rawValue), inode: UInt64(info.inode.rawValue), changed: changed)
    }
}
