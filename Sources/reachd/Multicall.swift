import ArgumentParser
import reachctl

/// The entry point of the multi-call binary: called by the name `reachctl` (the package's
/// /usr/bin/reachctl is a link to reachd) it is reachctl, by any other it is reachd.
/// Synchronous: reachd's start needs no thread to exist before it blocks its signals.
@main
enum Multicall {
    static func main() {
        switch Personality(commandPath: CommandLine.arguments.first ?? "") {
        case .reachctl: ReachctlMain.runFromSynchronousMain()
        case .reachd: Reachd.main()
        case .reachdNM: ReachdNM.main()
        }
    }
}

/// Which program the multi-call binary is, from the name it was called by (argv[0]).
enum Personality: Equatable {
    case reachd
    case reachctl
    case reachdNM

    init(commandPath: String) {
        switch commandPath.split(separator: "/", omittingEmptySubsequences: false).last ?? "" {
        case "reachctl": self = .reachctl
        case "reachd-nm": self = .reachdNM
        default: self = .reachd
        }
    }
}
