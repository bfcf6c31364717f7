import ArgumentParser
import Foundation
import Logging
import ReachDaemon
import ReachProtocol

/// `reachd`: the network reachability daemon.
@main
struct Reachd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reachd",
        abstract: "Watch the kernel's network state and publish reachability over Varlink and sd_notify.",
        discussion: """
            Runs in the foreground and logs each change of the path to stderr. Clients query it \
            with `reachctl status` or over the Varlink socket (interface io.reachd.Reachability).
            """
    )

    @Option(name: .long, help: "Varlink socket path (default: $REACHD_SOCKET, /run/reachd/… as root, else $XDG_RUNTIME_DIR/reachd/…).")
    var socket: String?

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    @Option(name: .long, help: ArgumentHelp("Root of the sysfs tree to classify interfaces from.", visibility: .hidden))
    var sysfsRoot: String = "/sys"

    @Option(name: .long, help: ArgumentHelp("resolv.conf to read for supportsDNS.", visibility: .hidden))
    var resolvConf: String = "/etc/resolv.conf"

    @Option(name: .long, help: ArgumentHelp("Netlink receive buffer size in bytes.", visibility: .hidden))
    var receiveBufferSize: Int = 8 << 20

    func run() async throws {
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "reachd")

        var options = DaemonOptions(socketPath: socket ?? SocketLocation.daemonDefault())
        options.engine.sysfsRoot = sysfsRoot
        options.engine.resolvConfPath = resolvConf
        options.engine.receiveBufferSize = receiveBufferSize
        do {
            try await Daemon.run(options, logger: logger)
        } catch {
            logger.critical("\(error)")
            throw ExitCode.failure
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
