import LinuxSystem
import Logging
import ReachabilityCore
import SystemPackage

/// Knows whether a DNS server is configured, and notices when that may have changed.
///
/// resolv.conf is often replaced by rename or is a symlink into /run, so the watch is on
/// the *directories* holding the files (and the symlink's target), not on the files.
/// Confined to the engine thread.
final class ResolverWatcher {
    private let resolvConfPath: String
    private let resolvedUpstreamPath: String
    /// Nil when inotify is unavailable: the answer is then read once and not followed.
    let watch: DirectoryWatch?
    private(set) var hasNameserver = false

    init(resolvConfPath: String, resolvedUpstreamPath: String, logger: Logger) {
        self.resolvConfPath = resolvConfPath
        self.resolvedUpstreamPath = resolvedUpstreamPath
        var directories = Set([resolvConfPath, resolvedUpstreamPath].map(Self.parent(of:)))
        // resolv.conf as a symlink (resolved, NetworkManager): watch where it points too.
        if let target = try? FileSystem.symbolicLinkTarget(of: resolvConfPath) {
            directories.insert(Self.parent(of: target.hasPrefix("/") ? target : Self.parent(of: resolvConfPath) + "/" + target))
        }
        do {
            watch = try DirectoryWatch(directories)
        } catch {
            // Not fatal: reachd still answers, it just cannot follow DNS configuration changes.
            logger.warning("cannot watch the resolver configuration (\(error)); supportsDNS will not follow changes")
            watch = nil
        }
        hasNameserver = readConfiguration()
    }

    /// Drains the watch and re-reads the files; true if the answer changed.
    func refresh() -> Bool {
        watch?.drain()
        let now = readConfiguration()
        defer { hasNameserver = now }
        return now != hasNameserver
    }

    private func readConfiguration() -> Bool {
        ResolverConfiguration.hasNameserver(resolvConf: Self.text(of: resolvConfPath), resolvedUpstream: Self.text(of: resolvedUpstreamPath))
    }

    private static func text(of path: String) -> String? {
        (try? FileSystem.contents(of: path)).map { String(decoding: $0, as: UTF8.self) }
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
