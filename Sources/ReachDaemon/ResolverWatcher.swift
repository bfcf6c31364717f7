import Foundation
import Glibc
import ReachabilityCore

/// Knows whether a DNS server is configured, and notices when that may have changed.
///
/// resolv.conf is often replaced by rename or is a symlink into /run, so the watcher
/// follows the *directories* holding the files (inotify on each parent), not the files.
/// Confined to the engine thread.
final class ResolverWatcher {
    private let resolvConfPath: String
    private let resolvedUpstreamPath: String
    private let inotifyFD: Int32
    private(set) var hasNameserver: Bool = false

    /// The fd to poll; readable when one of the watched directories changed.
    var fileDescriptor: Int32 { inotifyFD }

    init(resolvConfPath: String, resolvedUpstreamPath: String) {
        self.resolvConfPath = resolvConfPath
        self.resolvedUpstreamPath = resolvedUpstreamPath
        inotifyFD = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE)
        if inotifyFD >= 0 {
            var directories = Set([resolvConfPath, resolvedUpstreamPath].map(Self.parent(of:)))
            // resolv.conf as a symlink (resolved, NetworkManager): watch where it points too.
            if let target = Self.symlinkTarget(resolvConfPath) { directories.insert(Self.parent(of: target)) }
            for directory in directories { _ = inotify_add_watch(inotifyFD, directory, mask) }
        }
        hasNameserver = readConfiguration()
    }

    deinit { if inotifyFD >= 0 { close(inotifyFD) } }

    /// Drains inotify events and re-reads the files; true if the answer changed.
    func refresh() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while read(inotifyFD, &buffer, buffer.count) > 0 {}
        let now = readConfiguration()
        defer { hasNameserver = now }
        return now != hasNameserver
    }

    private func readConfiguration() -> Bool {
        ResolverConfiguration.hasNameserver(
            resolvConf: try? String(contentsOfFile: resolvConfPath, encoding: .utf8),
            resolvedUpstream: try? String(contentsOfFile: resolvedUpstreamPath, encoding: .utf8)
        )
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func symlinkTarget(_ path: String) -> String? {
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) else { return nil }
        return target.hasPrefix("/") ? target : parent(of: path) + "/" + target
    }
}
