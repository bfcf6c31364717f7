import Logging
import ReachabilityCore
import ReachConfiguration
import ReachConnectivity
import ReachProtocol

/// Settings given on reachd's command line; each one set wins over the configuration file.
package struct CommandLineOverrides: Sendable, Equatable {
    /// `--socket`.
    package var socketPath: String?
    /// `--log-level`.
    package var logLevel: Logger.Level?
    /// `--receive-buffer-size`.
    package var receiveBufferSize: Int?
    /// `--sysfs-root` (tests).
    package var sysfsRoot: String?
    /// `--resolv-conf` (tests).
    package var resolvConfPath: String?
    /// `--resolved-upstream` (tests).
    package var resolvedUpstreamPath: String?
    /// `--networkd-socket` (tests).
    package var networkdSocket: String?
    /// `--dhclient-leases` (tests).
    package var dhclientLeases: String?
    /// `--networkd-leases` (tests).
    package var networkdLeases: String?
    /// `--hook-leases` (tests).
    package var hookLeases: String?

    /// No overrides.
    package init(
        socketPath: String? = nil, logLevel: Logger.Level? = nil, receiveBufferSize: Int? = nil,
        sysfsRoot: String? = nil, resolvConfPath: String? = nil, resolvedUpstreamPath: String? = nil,
        networkdSocket: String? = nil, dhclientLeases: String? = nil, networkdLeases: String? = nil,
        hookLeases: String? = nil
    ) {
        self.socketPath = socketPath
        self.logLevel = logLevel
        self.receiveBufferSize = receiveBufferSize
        self.sysfsRoot = sysfsRoot
        self.resolvConfPath = resolvConfPath
        self.resolvedUpstreamPath = resolvedUpstreamPath
        self.networkdSocket = networkdSocket
        self.dhclientLeases = dhclientLeases
        self.networkdLeases = networkdLeases
        self.hookLeases = hookLeases
    }
}

extension DaemonOptions {
    /// The options in force: command line > configuration file > built-in defaults.
    ///
    /// The socket path is `--socket`, else `$REACHD_SOCKET`, else `[socket] path`, else the
    /// computed default (`$RUNTIME_DIRECTORY`, `/run/reachd` for root, the per-user path).
    package init(
        configuration: ReachdConfiguration, overrides: CommandLineOverrides,
        environment: [String: String] = SocketLocation.currentEnvironment(),
        uid: UInt32 = SocketLocation.currentUID()
    ) {
        let fromEnvironment = environment[SocketLocation.environmentVariable].flatMap { $0.isEmpty ? nil : $0 }
        self.init(
            socketPath: overrides.socketPath ?? fromEnvironment ?? configuration.socket.path
                ?? SocketLocation.daemonDefault(environment: environment, uid: uid)
        )
        socketMode = configuration.socket.mode
        logLevel = overrides.logLevel ?? configuration.log.level
        policy = configuration.interfaces.policy
        connectivity.probe = configuration.probe
        connectivity.captivePortal = configuration.captivePortal
        connectivity.readsNetworkManager = configuration.networkManager.read
        metrics = configuration.metrics
        watchedTargets = configuration.targets.watch
        if let networkdSocket = overrides.networkdSocket { connectivity.networkdSocket = networkdSocket }
        if let directory = overrides.dhclientLeases { connectivity.dhcpLeases.dhclient = directory }
        if let directory = overrides.networkdLeases { connectivity.dhcpLeases.networkd = directory }
        if let directory = overrides.hookLeases { connectivity.dhcpLeases.hook = directory }
        engine.receiveBufferSize = overrides.receiveBufferSize ?? configuration.netlink.receiveBufferSize
        engine.stall = configuration.stall
        engine.nat64 = configuration.nat64
        if let sysfsRoot = overrides.sysfsRoot { engine.sysfsRoot = sysfsRoot }
        if let resolvConfPath = overrides.resolvConfPath { engine.resolvConfPath = resolvConfPath }
        if let upstream = overrides.resolvedUpstreamPath { engine.resolvedUpstreamPath = upstream }
    }
}

/// What a reload changes, decided from the running and the newly read options. Pure.
///
/// The interface policy, the log level and the watched targets change in place. The socket path and mode are
/// refused: moving or re-creating the socket would drop every connected client. The netlink
/// receive buffer is sized when the socket is opened, so it waits for a restart.
package struct ReloadPlan: Sendable, Equatable {
    /// The new interface policy, if it changed.
    package var policy: InterfacePolicy?
    /// The new log level, if it changed.
    package var logLevel: Logger.Level?
    /// The watched targets (`[targets] watch`), if they changed: added and removed in place.
    package var watchedTargets: [WatchedTarget]?
    /// Changes that were read but not applied, each with its reason.
    package var refused: [String] = []

    /// Compares `running` with `proposed`.
    package init(running: DaemonOptions, proposed: DaemonOptions) {
        if proposed.policy != running.policy { policy = proposed.policy }
        if proposed.logLevel != running.logLevel { logLevel = proposed.logLevel }
        if proposed.watchedTargets != running.watchedTargets { watchedTargets = proposed.watchedTargets }
        if proposed.socketPath != running.socketPath {
            refused.append(
                "socket path change from \(running.socketPath) to \(proposed.socketPath) refused: "
                    + "moving the socket would drop connected clients; restart reachd to apply it"
            )
        }
        if proposed.socketMode != running.socketMode {
            refused.append(
                "socket mode change from \(Self.octal(running.socketMode)) to \(Self.octal(proposed.socketMode)) refused: "
                    + "the socket is not re-created while clients are connected; restart reachd to apply it"
            )
        }
        if proposed.connectivity != running.connectivity {
            refused.append("[probe] and [captive-portal] changes take effect at the next restart")
        }
        if proposed.metrics != running.metrics {
            refused.append("[metrics] changes take effect at the next restart")
        }
        if proposed.engine.receiveBufferSize != running.engine.receiveBufferSize {
            refused.append(
                "netlink receive-buffer-size change from \(running.engine.receiveBufferSize) to "
                    + "\(proposed.engine.receiveBufferSize) takes effect at the next restart"
            )
        }
        if proposed.engine.stall != running.engine.stall {
            refused.append("[stall] changes take effect at the next restart")
        }
        if proposed.engine.nat64 != running.engine.nat64 {
            refused.append("[nat64] changes take effect at the next restart")
        }
    }

    /// What was applied, for the log: "log level info → debug, interface policy".
    package var appliedChanges: [String] {
        var changes: [String] = []
        if let logLevel { changes.append("log level → \(logLevel)") }
        if policy != nil { changes.append("interface policy (ignore patterns and overrides)") }
        if watchedTargets != nil { changes.append("watched targets") }
        return changes
    }

    /// The running options once the plan is applied: applied fields from `proposed`,
    /// refused ones kept from `running`.
    package static func applied(running: DaemonOptions, proposed: DaemonOptions) -> DaemonOptions {
        var next = running
        next.policy = proposed.policy
        next.logLevel = proposed.logLevel
        next.watchedTargets = proposed.watchedTargets
        return next
    }

    private static func octal(_ mode: UInt32) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
