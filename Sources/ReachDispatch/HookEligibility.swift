/// What `stat(2)` (following a symbolic link) and `lstat(2)` say about one directory entry:
/// the facts `HookEligibility` judges, gathered by the caller.
package struct HookFile: Sendable, Hashable {
    /// What the entry is, after following a symbolic link.
    package enum Kind: Sendable, Hashable {
        /// A regular file.
        case regular
        /// A directory.
        case directory
        /// A symbolic link that leads nowhere.
        case danglingLink
        /// Anything else: a device, a socket, a FIFO.
        case other
    }

    /// The entry's name in the directory.
    package var name: String
    /// What it is.
    package var kind: Kind
    /// The permission bits, set-uid/set-gid included (`st_mode & 07777`).
    package var mode: UInt32
    /// The owner's uid.
    package var owner: UInt32
    /// Where the entry points when it is a symbolic link.
    package var linkTarget: String?

    /// Creates the facts of one entry.
    package init(name: String, kind: Kind, mode: UInt32, owner: UInt32, linkTarget: String? = nil) {
        self.name = name
        self.kind = kind
        self.mode = mode
        self.owner = owner
        self.linkTarget = linkTarget
    }
}

/// Whether a file of the hook directory runs, NetworkManager's dispatcher rules: a regular
/// file, executable by its owner, owned by root (or by the user the dispatcher runs as),
/// neither writable by group or others nor set-uid. Anyone who could change such a file
/// could run code as the dispatcher's user, which is root.
package enum HookEligibility: Sendable, Hashable {
    /// The file runs.
    case run
    /// Left out without a word: a dotfile, an editor's backup, a package manager's leftover,
    /// or a link to /dev/null (how a shipped hook is masked).
    case ignored
    /// Left out with a warning: the reason, for the log.
    case skipped(String)

    /// The verdict on one entry for a dispatcher running as `runner` (its effective uid).
    package static func of(_ file: HookFile, runner: UInt32) -> HookEligibility {
        if isLeftOut(name: file.name) || file.linkTarget == "/dev/null" { return .ignored }
        switch file.kind {
        case .regular: break
        case .directory: return .skipped("a directory, not a regular file")
        case .danglingLink: return .skipped("a symbolic link to nothing")
        case .other: return .skipped("not a regular file")
        }
        if file.owner != 0 && file.owner != runner {
            return .skipped(runner == 0 ? "owned by uid \(file.owner), not root" : "owned by uid \(file.owner), neither root nor uid \(runner)")
        }
        if file.mode & 0o022 != 0 { return .skipped("writable by group or others (mode \(octal(file.mode)))") }
        if file.mode & 0o4000 != 0 { return .skipped("set-uid (mode \(octal(file.mode)))") }
        if file.mode & 0o100 == 0 { return .skipped("not executable by its owner (mode \(octal(file.mode)))") }
        return .run
    }

    /// Names never run: dotfiles, editor backups and package managers' leftovers.
    package static func isLeftOut(name: String) -> Bool {
        let suffixes = ["~", ".swp", ".bak", ".orig", ".rej", ".rpmsave", ".rpmorig", ".rpmnew",
                        ".dpkg-old", ".dpkg-dist", ".dpkg-new", ".dpkg-tmp", ".dpkg-bak", ".ucf-old", ".ucf-dist", ".ucf-new"]
        return name.isEmpty || name.hasPrefix(".") || name.hasPrefix("#") || suffixes.contains { name.hasSuffix($0) }
    }

    /// The entries that run, in name order (byte order, as `LC_ALL=C ls` lists them), and
    /// the ones skipped with their reasons, in the same order.
    package static func plan(_ files: [HookFile], runner: UInt32) -> (run: [String], skipped: [(name: String, reason: String)]) {
        var run: [String] = []
        var skipped: [(name: String, reason: String)] = []
        for file in files.sorted(by: { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }) {
            switch of(file, runner: runner) {
            case .run: run.append(file.name)
            case .ignored: break
            case let .skipped(reason): skipped.append((file.name, reason))
            }
        }
        return (run, skipped)
    }

    private static func octal(_ mode: UInt32) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
