import LinuxSystem
import Logging
import ReachabilityCore
import SystemPackage

/// Knows whether a DNS server is configured, and notices when that may have changed.
///
/// resolv.conf is usually replaced by rename, and is often a symlink into /run that
/// NetworkManager or systemd-resolved re-point at another directory. So the watch is on
/// *directories*: each file's own, every directory its symlink chain passes through, and,
/// for one that does not exist yet, its nearest existing ancestor. The set is worked out
/// again at every change, so a re-pointed link or a directory created later is followed.
/// Only events about an entry on the way to the files count: a directory such as /etc or
/// /run sees writes to many other files, and re-reading for each of them would cost CPU
/// and map back code that has nothing to do. Confined to the engine thread.
final class ResolverWatcher {
    private let paths: [String]
    /// Nil when inotify is unavailable: the answer is then read once and not followed.
    package let watch: DirectoryWatch?
    private(set) var hasNameserver = false
    /// The names of every entry on the way to the files as last followed.
    private var relevantNames: Set<String> = []

    init(resolvConfPath: String, resolvedUpstreamPath: String, logger: Logger) {
        paths = [resolvConfPath, resolvedUpstreamPath]
        do {
            watch = try DirectoryWatch()
        } catch {
            // Not fatal: reachd still answers, it just cannot follow DNS configuration changes.
            logger.warning("cannot watch the resolver configuration (\(error)); supportsDNS will not follow changes")
            watch = nil
        }
        watchDirectories()
        hasNameserver = readConfiguration()
    }

    /// Drains the watch, follows the files to wherever they point now, and re-reads them;
    /// true if the answer changed. What a reload calls, events or not.
    func refresh() -> Bool {
        watch?.drain()
        return reread()
    }

    /// Drains the watch and, when an event may concern the files, does what `refresh()`
    /// does; true if the answer changed. What the engine calls when the watch is readable.
    func handleEvents() -> Bool {
        guard let events = watch?.drain(), events.mayConcern(relevantNames) else { return false }
        return reread()
    }

    /// The names of every component of the paths on the way to the files (`chain(of:)` of
    /// each: a file, a link it passes through, a directory not there yet): events about any
    /// other entry cannot change what they read.
    static func relevantNames(along chain: [String]) -> Set<String> {
        Set(chain.flatMap { $0.split(separator: "/").map(String.init) })
    }

    private func reread() -> Bool {
        watchDirectories()
        let now = readConfiguration()
        defer { hasNameserver = now }
        return now != hasNameserver
    }

    /// Follows the files' symlink chains once: what to watch (each path's directory) and
    /// which names events must carry to matter.
    private func watchDirectories() {
        let chain = paths.flatMap(Self.chain(of:))
        relevantNames = Self.relevantNames(along: chain)
        guard let watch else { return }
        for directory in Set(chain.map(FileSystem.directory(containing:))) {
            var candidate = directory
            // A directory that does not exist yet: watch the closest ancestor that does, to
            // see it appear.
            while !((try? watch.watch(candidate)) ?? true), candidate != "/" {
                candidate = FileSystem.directory(containing: candidate)
            }
        }
    }

    private func readConfiguration() -> Bool {
        ResolverConfiguration.hasNameserver(resolvConf: Self.text(of: paths[0]), resolvedUpstream: Self.text(of: paths[1]))
    }

    private static func text(of path: String) -> String? {
        (try? FileSystem.contents(of: path)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// `path` and every path its symlink chain passes through (at most 8 hops).
    package static func chain(of path: String) -> [String] {
        var chain = [path]
        var current = path
        for _ in 0..<8 {
            guard let target = try? FileSystem.symbolicLinkTarget(of: current) else { break }
            current = target.hasPrefix("/") ? target : FileSystem.directory(containing: current) + "/" + target
            chain.append(current)
        }
        return chain
    }
}
