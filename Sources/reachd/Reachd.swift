import ArgumentParser
import FoundationEssentials
import LinuxSystem
import Logging
import ReachConfiguration
import ReachConnectivity
import ReachDaemon
import ReachProtocol
import ReachServer
import ReachSystemd

/// `reachd`: the network reachability daemon (run by `Multicall`).
struct Reachd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reachd",
        abstract: "Watch the kernel's network state and publish reachability over Varlink and sd_notify.",
        discussion: """
            Runs in the foreground and logs each change of the path to stderr. Clients query it \
            with `reachctl status` or over the Varlink socket (interface io.reachd.Reachability).
            Settings come from the command line, then \(ReachdConfiguration.defaultPath) (or \
            --config; see reachd.toml(5)), then built-in defaults. `reachctl reload` (what \
            `systemctl reload reachd` runs) or SIGHUP re-reads the configuration file; a file \
            that cannot be used is refused and the running configuration kept.
            Under systemd, reachd serves the socket reachd.socket passes it, sends READY=1 once \
            it knows the answer, STATUS= with the answer, and WATCHDOG=1 when asked. It exits 0 \
            on SIGTERM or SIGINT and 1 when it cannot start or go on.
            """,
        version: ReachdVersion.string
    )

    @Option(name: .long, help: "Configuration file (default: \(ReachdConfiguration.defaultPath) if it exists).")
    var config: String?

    @Flag(name: .long, help: "Validate the configuration file ([path], else --config, else the default) and exit.")
    var checkConfig = false

    @Argument(help: ArgumentHelp("The file to validate with --check-config.", valueName: "path"))
    var checkPath: String?

    @Option(name: .long, help: "Varlink socket path (default: $REACHD_SOCKET, [socket] path, /run/reachd/… as root, else $XDG_RUNTIME_DIR/reachd/…).")
    var socket: String?

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical (default: [log] level, else info).")
    var logLevel: Logger.Level?

    @Option(name: .long, help: ArgumentHelp("Root of the sysfs tree to classify interfaces from.", visibility: .hidden))
    var sysfsRoot: String?

    @Option(name: .long, help: ArgumentHelp("resolv.conf to read for supportsDNS.", visibility: .hidden))
    var resolvConf: String?

    @Option(name: .long, help: ArgumentHelp("systemd-resolved's upstream list, read when resolv.conf names only the stub.", visibility: .hidden))
    var resolvedUpstream: String?

    @Option(name: .long, help: ArgumentHelp("Netlink receive buffer size in bytes.", visibility: .hidden))
    var receiveBufferSize: Int?

    @Option(name: .long, help: ArgumentHelp("Seconds a client may leave a request half-sent (tests).", visibility: .hidden))
    var partialMessageDeadline: Double?

    @Option(name: .long, help: ArgumentHelp("systemd-resolved's Varlink socket (tests).", visibility: .hidden))
    var resolvedSocket: String?

    @Option(name: .long, help: ArgumentHelp("systemd-networkd's Varlink socket (tests).", visibility: .hidden))
    var networkdSocket: String?

    @Option(name: .long, help: ArgumentHelp("Where ISC dhclient keeps its leases (tests).", visibility: .hidden))
    var dhclientLeases: String?

    @Option(name: .long, help: ArgumentHelp("Where systemd-networkd keeps its DHCP leases (tests).", visibility: .hidden))
    var networkdLeases: String?

    @Option(name: .long, help: ArgumentHelp("Where reachd's dhcpcd hook writes its leases (tests).", visibility: .hidden))
    var hookLeases: String?

    func validate() throws {
        if checkPath != nil && !checkConfig {
            throw ValidationError("A path argument is only accepted with --check-config.")
        }
    }

    /// Synchronous on purpose: no Swift concurrency or libdispatch threads exist before
    /// `Daemon.run` blocks the signals it waits for.
    func run() throws {
        if checkConfig { try Self.check(checkPath ?? config, socket: socket) }

        let levelSwitch = LogLevelSwitch(logLevel ?? .info)
        let style = JournalStream.styleForStandardError()
        LoggingSystem.bootstrap { label in
            ReachdLogHandler(label: label, style: style, levelSwitch: levelSwitch)
        }
        let logger = Logger(label: "reachd")

        let overrides = CommandLineOverrides(
            socketPath: socket, logLevel: logLevel, receiveBufferSize: receiveBufferSize,
            sysfsRoot: sysfsRoot, resolvConfPath: resolvConf, resolvedUpstreamPath: resolvedUpstream,
            networkdSocket: networkdSocket, dhclientLeases: dhclientLeases, networkdLeases: networkdLeases,
            hookLeases: hookLeases
        )
        let configPath = config
        let read: @Sendable () throws(ConfigurationError) -> DaemonOptions = { () throws(ConfigurationError) in
            let loaded = try ConfigurationLoader.load(explicitPath: configPath)
            return DaemonOptions(configuration: loaded.configuration, overrides: overrides)
        }

        var options: DaemonOptions
        do {
            options = try read()
        } catch {
            // Refuse to start on a bad configuration, naming every problem.
            for line in error.description.split(separator: "\n") { logger.critical("\(line)") }
            logger.critical("refusing to start with an invalid configuration")
            throw ExitCode.failure
        }
        levelSwitch.level = options.logLevel
        options.logLevelSwitch = levelSwitch
        options.reload = read
        if let resolvedSocket { options.resolvedSocket = resolvedSocket }
        if let partialMessageDeadline { options.limits.partialMessageDeadline = .milliseconds(Int64(partialMessageDeadline * 1000)) }

        if let receiveBufferSize, !ReachdConfiguration.Netlink.acceptedReceiveBufferSizes.contains(receiveBufferSize) {
            logger.warning("--receive-buffer-size \(receiveBufferSize) is outside 64 KiB…1 GiB; using it anyway")
        }
        do {
            try Daemon.run(options, logger: logger)
        } catch {
            throw ExitCode.failure  // already logged
        }
    }

    /// `--check-config`: prints "PATH: ok" or every problem, exits 0 or 1. Besides the file
    /// itself, checks what the start checks (pinned certificates, the metrics address), with
    /// the socket path the start would use.
    static func check(_ explicitPath: String?, socket: String?) throws(ExitCode) -> Never {
        let loaded: (configuration: ReachdConfiguration, source: ConfigurationLoader.Source)
        do {
            loaded = try ConfigurationLoader.load(explicitPath: explicitPath)
        } catch {
            StandardStreams.printError(error.description)
            throw ExitCode.failure
        }
        let options = DaemonOptions(configuration: loaded.configuration, overrides: CommandLineOverrides(socketPath: socket))
        do {
            _ = try options.checkStartRequirements(metricsListener: .runningReachd)
        } catch {
            let file = if case let .file(path) = loaded.source { path } else { ReachdConfiguration.defaultPath }
            StandardStreams.printError(error.problems.map { "\(file): \($0)" }.joined(separator: "\n"))
            throw ExitCode.failure
        }
        switch loaded.source {
        case let .file(path):
            print("\(path): ok")
        case .defaults:
            print("\(ReachdConfiguration.defaultPath): not present, the built-in defaults apply: ok")
        }
        throw ExitCode.success
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
