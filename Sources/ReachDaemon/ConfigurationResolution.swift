import Logging
import ReachProtocol

/// Settings given on reachd's command line; each one set wins over the configuration file.
public struct CommandLineOverrides: Sendable, Equatable {
    /// `--socket`.
    public var socketPath: String?
    /// `--log-level`.
    public var logLevel: Logger.Level?
    /// `--receive-buffer-size`.
    public var receiveBufferSize: Int?
    /// `--sysfs-root` (tests).
    public var sysfsRoot: String?
    /// `--resolv-conf` (tests).
    public var resolvConfPath: String?
    /// `--resolved-upstream` (tests).
    public var resolvedUpstreamPath: String?

    /// No overrides.
    public init(
        socketPath: String? = nil, logLevel: Logger.Level? = nil, receiveBufferSize: Int? = nil,
        sysfsRoot: String? = nil, resolvConfPath: String? = nil, resolvedUpstreamPath: String? = nil
    ) {
        self.socketPath = socketPath
        self.logLevel = logLevel
        self.receiveBufferSize = receiveBufferSize
        self.sysfsRoot = sysfsRoot
        self.resolvConfPath = resolvConfPath
        self.resolvedUpstreamPath = resolvedUpstreamPath
    }
}

extension DaemonOptions {
    /// The options in force: command line > configuration file > built-in defaults.
    ///
    /// The socket path is `--socket`, else `$REACHD_SOCKET`, else `[socket] path`, else the
    /// computed default (`$RUNTIME_DIRECTORY`, `/run/reachd` for root, the per-user path).
    public init(
        configuration: ReachdConfiguration, overrides: CommandLineOverrides,
        environment: [String: String] = SocketLocation.currentEnvironment(),
        uid: UInt32 = SocketLocation.currentUID()
    ) {
        let fromEnvironment = environment[SocketLocation.environmentVariable].flatMap { $0.isEmpty ? nil : $0 }
        self.init(
            socketPath: overrides.socketPath ?? fromEnvironment ?? configuration.socketPath
                ?? SocketLocation.daemonDefault(environment: environment, uid: uid)
        )
        socketMode = configuration.socketMode
        logLevel = overrides.logLevel ?? configuration.logLevel
        engine.policy = configuration.policy
        engine.receiveBufferSize = overrides.receiveBufferSize ?? configuration.receiveBufferSize
        if let sysfsRoot = overrides.sysfsRoot { engine.sysfsRoot = sysfsRoot }
        if let resolvConfPath = overrides.resolvConfPath { engine.resolvConfPath = resolvConfPath }
        if let upstream = overrides.resolvedUpstreamPath { engine.resolvedUpstreamPath = upstream }
    }
}
