import reachctl

/// `reachctl` as a program of its own: what `swift run reachctl` and the tests run. The
/// package installs /usr/bin/reachctl as a link to the multi-call reachd instead.
@main
enum ReachctlEntry {
    static func main() async {
        await ReachctlMain.main()
    }
}
