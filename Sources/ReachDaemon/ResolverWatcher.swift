import LinuxSystem
import Logging
import ReachabilityCore
import SystemPackage

/// Knows whether a DNS server is configured, and notices when that may have changed.
///
/// resolv.conf is usually replaced by rename, and is often a symlink into /run that
/// NetworkManager or systemd-resolved re-point at another directory. So the watch is on
/// *directories*: each file's own, every directory its symlink chain passes through, and,
/// for one that does not exist yet, its nearest existing ancestor. Under `ip netns exec`,
/// containers and nspawn it is a bind mount rewritten in place (`cat >`), which no watched
/// directory sees; so each file the chains end at is watched too. The set is worked out
/// again whenever a path may lead elsewhere, so a re-pointed link, a replaced file or a
/// directory created later is followed, and watches no longer on the way are dropped.
/// Only events about an entry on the way to the files count: a directory such as /etc or
/// /run sees writes to many other files, and re-reading for each of them would cost CPU
/// and map back code that has nothing to do. Confined to the engine thread.
final class ResolverWatcher {
    /// What a drain's events call for.
    enum Response: Equatable {
        /// Nothing on the way to the files changed.
        case ignore
        /// A file was rewritten in place: read the files again.
        case reread
        /// An entry on the way changed (or events were lost): follow the paths again,
        /// move the watches, and read the files.
        case follow
    }

    private let paths: [String]
    /// Nil when inotify is unavailable: the answer is then read once and not followed.
    package let watch: DirectoryWatch?
    private(set) var hasNameserver = false
    /// Bumped whenever a read finds the files' text changed (another server, say), whether
    /// or not `hasNameserver` did: a network's resolver may have changed.
    private(set) var textGeneration = 0
    /// A hash of the files' text as last read (nil before the first read): a megabyte of
    /// resolv.conf need not stay in memory to tell it changed.
    private var textHash: Int?
    /// The names of every entry on the way to the files as last followed.
    private var relevantNames: Set<String> = []
    /// The watches the last follow wanted (directories and files); at most two chains'
    /// directories and two files.
    private(set) var watches: Set<DirectoryWatch.Watch> = []

    init(resolvConfPath: String, resolvedUpstreamPath: String, logger: Logger) {
        paths = [resolvConfPath, resolvedUpstreamPath]
        do {
            watch = try DirectoryWatch()
        } catch {
            // Not fatal: reachd still answers, it just cannot follow DNS configuration changes.
            logger.warning("cannot watch the resolver configuration (\(error)); supportsDNS will not follow changes")
            watch = nil
        }
        follow()
        hasNameserver = readConfiguration()
    }

    /// Drains the watch, follows the files to wherever they point now, and re-reads them;
    /// true if the answer changed. What a reload calls, events or not.
    func refresh() -> Bool {
        watch?.drain()
        follow()
        return reread()
    }

    /// Drains the watch and does what its events call for (`response(to:along:)`); true if
    /// the answer changed. What the engine calls when the watch is readable.
    func handleEvents() -> Bool {
        guard let events = watch?.drain() else { return false }
        switch Self.response(to: events, along: relevantNames) {
        case .ignore:
            return false
        case .reread:
            return reread()
        case .follow:
            follow()
            return reread()
        }
    }

    /// What `events` call for, given the names on the way to the files: a named entry on
    /// the way (or an event that names nothing, such as a file replaced or a lost queue)
    /// may lead elsewhere; a rewrite in place only changes what the file says.
    static func response(to events: DirectoryWatch.Events, along relevantNames: Set<String>) -> Response {
        if events.mayConcern(relevantNames) { return .follow }
        return events.rewritten ? .reread : .ignore
    }

    /// The names of every component of the paths on the way to the files (`chain(of:)` of
    /// each: a file, a link it passes through, a directory not there yet): events about any
    /// other entry cannot change what they read.
    static func relevantNames(along chain: [String]) -> Set<String> {
        Set(chain.flatMap { $0.split(separator: "/").map(String.init) })
    }

    private func reread() -> Bool {
        let now = readConfiguration()
        defer { hasNameserver = now }
        return now != hasNameserver
    }

    /// Follows the files' symlink chains once: what to watch (each path's directory, and
    /// the file each path ends at) and which names events must carry to matter. Watches
    /// the follow no longer wants are removed, so a file left behind by a re-pointed link
    /// wakes nobody.
    private func follow() {
        let chain = paths.flatMap(Self.chain(of:))
        relevantNames = Self.relevantNames(along: chain)
        guard let watch else { return }
        var wanted: Set<DirectoryWatch.Watch> = []
        for directory in Set(chain.map(FileSystem.directory(containing:))) {
            if let added = Self.watchEntries(of: directory, with: watch) { wanted.insert(added) }
        }
        // The file itself (through its links): a write through a bind mount or another
        // name reaches only its inode.
        for path in paths {
            if let added = try? watch.add(path, watching: .contents) { wanted.insert(added) }
        }
        for stale in watches.subtracting(wanted) { watch.remove(stale) }
        watches = wanted
    }

    /// The watch on `directory`'s entries or, when it does not exist yet, on its closest
    /// ancestor that does (to see it appear); nil when none could be added (out of watches:
    /// then that part is not followed).
    private static func watchEntries(of directory: String, with watch: DirectoryWatch) -> DirectoryWatch.Watch? {
        var candidate = directory
        while true {
            do {
                if let added = try watch.add(candidate, watching: .entries) { return added }
            } catch {
                return nil
            }
            guard candidate != "/" else { return nil }
            candidate = FileSystem.directory(containing: candidate)
        }
    }

    private func readConfiguration() -> Bool {
        let read = paths.map(Self.text(of:))
        let hash = read.hashValue
        if hash != textHash {
            if textHash != nil { textGeneration += 1 }
            textHash = hash
        }
        return ResolverConfiguration.hasNameserver(resolvConf: read[0], resolvedUpstream: read[1])
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
