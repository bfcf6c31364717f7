import ReachDispatch
import XCTest

/// Which files of the hook directory run: NetworkManager's dispatcher rules.
final class HookEligibilityTests: XCTestCase {
    func testTheRulesOneFileAtATime() {
        let cases: [(file: HookFile, runner: UInt32, expected: HookEligibility)] = [
            // Runs: a root-owned executable nobody else may write; 0700 and 0500 too.
            (HookFile(name: "10-mount", kind: .regular, mode: 0o755, owner: 0), 0, .run),
            (HookFile(name: "10-mount", kind: .regular, mode: 0o700, owner: 0), 0, .run),
            (HookFile(name: "10-mount", kind: .regular, mode: 0o500, owner: 0), 0, .run),
            (HookFile(name: "link", kind: .regular, mode: 0o755, owner: 0, linkTarget: "/usr/lib/x"), 0, .run),
            // Mode bits.
            (HookFile(name: "a", kind: .regular, mode: 0o644, owner: 0), 0, .skipped("not executable by its owner (mode 0644)")),
            (HookFile(name: "a", kind: .regular, mode: 0o655, owner: 0), 0, .skipped("not executable by its owner (mode 0655)")),
            (HookFile(name: "a", kind: .regular, mode: 0o775, owner: 0), 0, .skipped("writable by group or others (mode 0775)")),
            (HookFile(name: "a", kind: .regular, mode: 0o757, owner: 0), 0, .skipped("writable by group or others (mode 0757)")),
            (HookFile(name: "a", kind: .regular, mode: 0o777, owner: 0), 0, .skipped("writable by group or others (mode 0777)")),
            (HookFile(name: "a", kind: .regular, mode: 0o4755, owner: 0), 0, .skipped("set-uid (mode 4755)")),
            // Owner: root, or the dispatcher's own user; nobody else.
            (HookFile(name: "a", kind: .regular, mode: 0o755, owner: 1000), 0, .skipped("owned by uid 1000, not root")),
            (HookFile(name: "a", kind: .regular, mode: 0o755, owner: 1000), 1000, .run),
            (HookFile(name: "a", kind: .regular, mode: 0o755, owner: 0), 1000, .run),
            (HookFile(name: "a", kind: .regular, mode: 0o755, owner: 65534), 1000, .skipped("owned by uid 65534, neither root nor uid 1000")),
            // Not regular.
            (HookFile(name: "sub", kind: .directory, mode: 0o755, owner: 0), 0, .skipped("a directory, not a regular file")),
            (HookFile(name: "fifo", kind: .other, mode: 0o755, owner: 0), 0, .skipped("not a regular file")),
            (HookFile(name: "gone", kind: .danglingLink, mode: 0, owner: 0, linkTarget: "/nowhere"), 0, .skipped("a symbolic link to nothing")),
            // Ignored without a word: masked, dotfiles, backups, package leftovers (even when unsafe).
            (HookFile(name: "10-mount", kind: .other, mode: 0o666, owner: 0, linkTarget: "/dev/null"), 0, .ignored),
            (HookFile(name: ".hidden", kind: .regular, mode: 0o755, owner: 0), 0, .ignored),
            (HookFile(name: "10-mount~", kind: .regular, mode: 0o755, owner: 0), 0, .ignored),
            (HookFile(name: ".10-mount.swp", kind: .regular, mode: 0o600, owner: 1000), 0, .ignored),
            (HookFile(name: "#10-mount#", kind: .regular, mode: 0o755, owner: 0), 0, .ignored),
            (HookFile(name: "10-mount.dpkg-old", kind: .regular, mode: 0o755, owner: 0), 0, .ignored),
            (HookFile(name: "10-mount.dpkg-dist", kind: .regular, mode: 0o755, owner: 0), 0, .ignored),
            (HookFile(name: "10-mount.rpmnew", kind: .regular, mode: 0o755, owner: 0), 0, .ignored),
            (HookFile(name: "10-mount.ucf-old", kind: .regular, mode: 0o755, owner: 0), 0, .ignored),
            (HookFile(name: "10-mount.bak", kind: .regular, mode: 0o755, owner: 0), 0, .ignored),
            // Not leftovers: a dot or a tilde elsewhere in the name.
            (HookFile(name: "10-mount.sh", kind: .regular, mode: 0o755, owner: 0), 0, .run),
            (HookFile(name: "10~mount", kind: .regular, mode: 0o755, owner: 0), 0, .run),
        ]
        for test in cases {
            XCTAssertEqual(HookEligibility.of(test.file, runner: test.runner), test.expected, "\(test.file) as uid \(test.runner)")
        }
    }

    func testPlanIsInByteOrderAndNamesTheSkipped() {
        let files = [
            HookFile(name: "b", kind: .regular, mode: 0o755, owner: 0),
            HookFile(name: "10-b", kind: .regular, mode: 0o755, owner: 0),
            HookFile(name: "B", kind: .regular, mode: 0o755, owner: 0),
            HookFile(name: "2-a", kind: .regular, mode: 0o755, owner: 0),
            HookFile(name: "10-a", kind: .regular, mode: 0o777, owner: 0),
            HookFile(name: "é", kind: .regular, mode: 0o755, owner: 0),
            HookFile(name: "10-a~", kind: .regular, mode: 0o755, owner: 0),
        ]
        let plan = HookEligibility.plan(files, runner: 0)
        // LC_ALL=C order: digits, upper case, lower case, then non-ASCII.
        XCTAssertEqual(plan.run, ["10-b", "2-a", "B", "b", "é"])
        XCTAssertEqual(plan.skipped.map(\.name), ["10-a"])
        XCTAssertEqual(plan.skipped.map(\.reason), ["writable by group or others (mode 0777)"])
    }
}
