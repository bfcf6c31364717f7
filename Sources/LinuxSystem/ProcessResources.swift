import CLinux
import Glibc
import SystemPackage

/// Process-wide resources: the descriptor limit and memory the allocator keeps.
package enum ProcessResources {
    /// Raises the soft limit on open descriptors (RLIMIT_NOFILE) to at least `wanted`, up
    /// to the hard limit; returns the soft limit now in force. A server that caps its
    /// connections must be able to hold that many descriptors, whatever limit it inherited.
    @discardableResult
    package static func raiseDescriptorLimit(to wanted: Int) throws(Errno) -> Int {
        var limit = rlimit()
        _ = try systemCall { getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) }
        let target = min(rlim_t(wanted), limit.rlim_max)
        if limit.rlim_cur < target {
            limit.rlim_cur = target
            _ = try systemCall { setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) }
        }
        return Int(clamping: limit.rlim_cur)
    }

    /// Gives freed heap memory back to the system (`malloc_trim(0)`): glibc keeps what a
    /// burst of clients freed, so without this a daemon's RSS only ever grows.
    package static func returnFreedMemory() {
        _ = malloc_trim(0)
    }

    /// Drops the executable's read-only pages (code, and the headers before it) from this
    /// process's page tables, to be mapped back from the page cache as they are touched:
    /// the code only a start runs stops counting in RSS. Called once the start is over.
    ///
    /// Why it matters: the kernel maps 16 cached pages around every page a fault needs
    /// (fault-around), so a start that touches code in many places leaves megabytes of code
    /// mapped that nothing runs again.
    package static func releaseStartupCode() {
        _ = reachd_release_executable_pages()
    }
}
