import Glibc
import SystemPackage

/// Watches directories for files appearing, disappearing or being rewritten, and files for
/// writes to their contents (`inotify(7)`).
///
/// A directory watch sees a file replaced by rename, which a watch on the file misses; a
/// file watch sees a write to the file's inode whatever name or mount it came through (a
/// bind-mounted file's directory sees nothing of it).
package final class DirectoryWatch {
    /// The descriptor to poll for input.
    package let descriptor: FileDescriptor

    /// One watch of this instance (the kernel's watch descriptor). Adding a path whose inode
    /// is already watched gives the same watch.
    package struct Watch: Hashable, Sendable {
        /// What `inotify_add_watch(2)` returned.
        package var rawValue: Int32

        /// Wraps a watch descriptor.
        package init(rawValue: Int32) {
            self.rawValue = rawValue
        }
    }

    /// What a watch reports.
    package enum Subject: Sendable {
        /// A directory's entries: created, deleted, moved in or out, or rewritten.
        case entries
        /// A file's contents rewritten (reported when the writer closes it: a truncating
        /// writer has not written yet when it opens), and the file itself changing links or
        /// mode, removed or moved. Symbolic links are followed to the file.
        case contents
        /// `entries`, and every write to an entry: a writer that keeps its file open and
        /// appends (ISC dhclient's leases) never closes it.
        case entriesAndWrites

        var mask: UInt32 {
            switch self {
            case .entries: UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE)
            case .entriesAndWrites: Subject.entries.mask | UInt32(IN_MODIFY)
            case .contents: UInt32(IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)
            }
        }
    }

    /// Opens an inotify instance watching nothing yet.
    package init() throws(Errno) {
        descriptor = FileDescriptor(rawValue: try systemCall { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) })
    }

    /// Watches `directory` for entries created, deleted, moved in or out, or rewritten.
    /// Watching a directory already watched changes nothing; false when it does not exist.
    @discardableResult
    package func watch(_ directory: String) throws(Errno) -> Bool {
        try add(directory, watching: .entries) != nil
    }

    /// Watches `path` for `subject`; nil when it (or the file a symbolic link leads to)
    /// does not exist. A path whose inode is watched already gets `subject` instead.
    package func add(_ path: String, watching subject: Subject) throws(Errno) -> Watch? {
        do {
            return Watch(rawValue: try systemCall { inotify_add_watch(descriptor.rawValue, path, subject.mask) })
        } catch .noSuchFileOrDirectory, .notDirectory {
            return nil
        }
    }

    /// Stops `watch` (the kernel then queues IN_IGNORED for it). One already gone (its
    /// inode freed) is no error.
    package func remove(_ watch: Watch) {
        _ = inotify_rm_watch(descriptor.rawValue, watch.rawValue)
    }

    deinit { try? descriptor.close() }

    /// What a drain read: which entries of the watched directories events were about, and
    /// whether a watched file was rewritten. The caller re-reads its files when one of
    /// theirs is named or rewritten, instead of replaying events.
    package struct Events: Sendable, Equatable {
        /// The names of the entries events named (no directory part: the same name in two
        /// watched directories is one name here).
        package var names: Set<String>
        /// Whether some event named no entry and was no rewrite: the kernel's queue
        /// overflowed (events were lost), a watched directory or file itself was removed or
        /// moved, a watched file's links or mode changed, or a watch was dropped.
        package var unnamed: Bool
        /// Whether a watched file's contents were rewritten in place (its name and inode
        /// stay: reading it again is enough).
        package var rewritten: Bool

        /// Creates a drain's result.
        package init(names: Set<String> = [], unnamed: Bool = false, rewritten: Bool = false) {
            self.names = names
            self.unnamed = unnamed
            self.rewritten = rewritten
        }

        /// Whether these events may concern entries named `entries`: one of them was named,
        /// or some event named nothing (then anything may have changed).
        package func mayConcern(_ entries: Set<String>) -> Bool {
            unnamed || !names.isDisjoint(with: entries)
        }
    }

    /// Reads every queued event and says what they were about.
    @discardableResult
    package func drain() -> Events {
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
    /// a watched directory or file itself, and for a queue overflow). A nameless
    /// IN_CLOSE_WRITE is a watched file rewritten; a record cut short counts as unnamed:
    /// whatever it was about, the caller should look.
    package static func parse(_ bytes: ArraySlice<UInt8>, into events: inout Events) {
        bytes.withUnsafeBytes { raw in
            let header = 16
            var offset = 0
            while offset < raw.count {
                guard offset + header <= raw.count else {
                    events.unnamed = true
                    return
                }
                let mask = raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                let length = Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                let end = offset + header + length
                guard end <= raw.count else {
                    events.unnamed = true
                    return
                }
                let name = raw[(offset + header)..<end].prefix { $0 != 0 }
                if name.isEmpty, mask == UInt32(IN_CLOSE_WRITE) {
                    events.rewritten = true
                } else if name.isEmpty {
                    events.unnamed = true
                } else {
                    events.names.insert(String(decoding: name, as: UTF8.self))
                }
                offset = end
            }
        }
    }
}
