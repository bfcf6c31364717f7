import Glibc
import SystemPackage

/// Detects whether stderr is connected to the journal.
///
/// systemd sets `JOURNAL_STREAM=<device>:<inode>` for services whose output goes to the
/// journal; the variable is inherited by children whose stderr may point elsewhere, so it
/// counts only when it matches the device and inode of file descriptor 2 (systemd.exec(5)).
package enum JournalStream {
    /// Whether `value` (the variable's content) names the file `device`/`inode`. Pure.
    package static func matches(_ value: String?, device: UInt64, inode: UInt64) -> Bool {
        guard let value else { return false }
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let expectedDevice = UInt64(parts[0]), let expectedInode = UInt64(parts[1]) else {
            return false
        }
        return expectedDevice == device && expectedInode == inode
    }

    /// Whether this process's stderr is the journal.
    package static func isStandardErrorJournal() -> Bool {
        guard let raw = getenv("JOURNAL_STREAM"), let info = try? FileDescriptor.standardError.stat() else { return false }
        return matches(String(cString: raw), device: UInt64(info.deviceID.rawValue), inode: UInt64(info.inode.rawValue))
    }

    /// The style for this process's stderr.
    package static func styleForStandardError() -> LogOutputStyle {
        isStandardErrorJournal() ? .journal : .plain
    }
}
