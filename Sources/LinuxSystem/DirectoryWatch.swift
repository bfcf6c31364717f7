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

    /// What a drain read: which entries of the watched directories events were about.
    /// The caller re-reads its files when one of theirs is named, instead of replaying events.
    public struct Events: Sendable, Equatable {
        /// The names of the entries events named (no directory part: the same name in two
        /// watched directories is one name here).
        public var names: Set<String>
        /// Whether some event named no entry: the kernel's queue overflowed (events were
        /// lost), or a watched directory itself was removed or moved.
        public var unnamed: Bool

        /// Creates a drain's result.
        public init(names: Set<String> = [], unnamed: Bool = false) {
            self.names = names
            self.unnamed = unnamed
        }

        /// Whether these events may concern entries named `entries`: one of them was named,
        /// or some event named nothing (then anything may have changed).
        public func mayConcern(_ entries: Set<String>) -> Bool {
            unnamed || !names.isDisjoint(with: entries)
        }
    }

    /// Reads every queued event and says what they were about.
    @discardableResult
    public func drain() -> Events {
        var events = Events()
        // Room for at least one event with the longest name (16 bytes + NAME_MAX + NUL).
        var buffer = [UInt8](repeating: 0, count: 4096)
        while let count = try? buffer.withUnsafeMutableBytes({ try descriptor.read(into: $0) }), count > 0 {
            Self.parse(buffer[..<count], into: &events)
        }
        return events
    }

    /// Parses `inotify_event` records as read(2) returns them: a 16-byte header (`wd`,
    /// `mask`, `cookie`, `len`), then `len` bytes of NUL-padded name (none for events about
    /// a watched directory itself, and for a queue overflow). A record cut short counts as
    /// unnamed: whatever it was about, the caller should look.
    public static func parse(_ bytes: ArraySlice<UInt8>, into events: inout Events) {
        bytes.withUnsafeBytes { raw in
            let header = 16
            var offset = 0
            while offset < raw.count {
                guard offset + header <= raw.count else {
                    events.unnamed = true
                    return
                }
                let length = Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                let end = offset + header + length
                guard end <= raw.count else {
                    events.unnamed = true
                    return
                }
                let name = raw[(offset + header)..<end].prefix { $0 != 0 }
                if name.isEmpty {
                    events.unnamed = true
                } else {
                    events.names.insert(String(decoding: name, as: UTF8.self))
                }
                offset = end
            }
        }
    }
}
