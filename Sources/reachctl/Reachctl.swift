import ArgumentParser
import Glibc
import ReachabilityCore
import ReachClient
import ReachProtocol

/// The entry point: quiets libdispatch, then runs the command line. Run by reachctl-entry's
/// `@main`, and by the multi-call reachd when it is called as reachctl.
package enum ReachctlMain {
    package static func main() async {
        // Swift concurrency runs on libdispatch, whose worker threads try to raise their own
        // priority. An unprivileged user may not (EACCES), nor may `ExecReload=` under
        // reachd's system-call filter (EPERM); the failure is harmless, but libdispatch
        // would log it to syslog on every call. Set before the first worker thread exists.
        setenv("LIBDISPATCH_LOG", "NO", 0)
        await Reachctl.main()
    }
}

/// `reachctl`: ask reachd how this host reaches the network.
struct Reachctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reachctl",
        abstract: "Ask reachd how this host reaches the network.",
        discussion: """
            Exit codes: 0 success; 1 reachd answered with an error or an unexpected reply, \
            or closed the connection (watch: the daemon stopped); \
            2 reachd cannot be reached (not running, wrong socket, no permission, no answer in time); \
            64 invalid command line; 69 probe: nothing could be checked (the reason on stderr).
            """,
        version: ReachdVersion.string,
        subcommands: [Status.self, Watch.self, Interfaces.self, Wait.self, Check.self, Probe.self, Metrics.self, Reload.self, DispatchHooks.self],
        defaultSubcommand: Status.self
    )

    /// `reachctl --socket PATH <subcommand>`: the socket may also come before the subcommand.
    @Option(name: .long, help: ArgumentHelp("Socket of reachd (also accepted after the subcommand).", valueName: "path"))
    var socket: String?
}

/// Options every subcommand shares.
struct ConnectionOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Socket of reachd (default: $REACHD_SOCKET, else /run/reachd/io.reachd.Reachability if present, else the per-user socket).", valueName: "path"))
    var socket: String?

    /// A client for the chosen socket: this option, else the one before the subcommand,
    /// else the default location.
    func client(_ root: Reachctl, timeout: Duration = .seconds(10)) -> ReachabilityClient {
        ReachabilityClient(socketPath: socket ?? root.socket ?? SocketLocation.clientDefault(), timeout: timeout)
    }
}

/// How long `status`, `interfaces` and `watch` wait for reachd's (first) answer.
struct AnswerTimeoutOptions: ParsableArguments {
    @Option(name: .customLong("timeout"), help: ArgumentHelp("Give up when reachd has not answered within this many seconds.", valueName: "seconds"))
    var seconds: Double = 10

    func validate() throws {
        guard seconds > 0 else { throw ValidationError("--timeout must be more than 0 seconds") }
    }

    var duration: Duration { .milliseconds(Int64(seconds * 1000)) }
}

/// The interface-type filter of `status` and `watch`.
struct FilterOptions: ParsableArguments {
    @Option(name: .customLong("interface-type"), help: ArgumentHelp("Only interfaces of this type may carry the path (\(InterfaceType.allValueStrings.joined(separator: ", "))).", valueName: "type"))
    var interfaceType: InterfaceType?

    @Option(name: .customLong("prohibit"), help: ArgumentHelp("Interfaces of this type may not carry the path; repeatable.", valueName: "type"))
    var prohibited: [InterfaceType] = []

    var filter: PathFilter {
        PathFilter(requiredInterfaceType: interfaceType, prohibitedInterfaceTypes: Set(prohibited))
    }
}

extension InterfaceType: ExpressibleByArgument {}

/// Exit code 2 when reachd cannot be reached, 1 for any other failure; on stderr one line
/// saying why and, when there is one, a hint saying what to do.
func fail(_ error: ReachClientError) -> ExitCode {
    printError("reachctl: \(shown(error.description))")
    printHint(for: error)
    switch error {
    case .daemonNotRunning, .permissionDenied, .connectionFailed, .timedOut: return ExitCode(2)
    case .connectionClosed, .protocolError, .remoteError: return ExitCode(1)
    }
}
