/// `io.systemd.service`, the control interface systemd's own daemons serve. reachd serves
/// `Ping` and `Reload`, so `varlinkctl call … io.systemd.service.Reload {}` works as it does
/// for them, and `systemctl reload reachd` (through `reachctl reload`) returns only once the
/// reload is applied or refused.
package enum SystemdServiceInterface {
    /// The interface name.
    package static let name = "io.systemd.service"

    /// Fully qualified method names.
    package enum Method {
        /// `Ping() -> ()`: answers at once.
        package static let ping = "io.systemd.service.Ping"
        /// `Reload() -> ()`: answers once the configuration is re-read and applied.
        package static let reload = "io.systemd.service.Reload"
    }

    /// The interface description reachd serves: systemd's, without `SetLogLevel` and
    /// `GetEnvironment`, which reachd does not implement.
    package static let idl = """
        # An interface to control basic properties of systemd services. reachd serves
        # Ping and Reload.
        interface io.systemd.service

        # Checks if the service is running.
        method Ping() -> ()

        # Re-reads the configuration file and applies it; returns when that is done. Only
        # root and reachd's own user may call it (org.varlink.service.PermissionDenied
        # otherwise); a configuration that cannot be applied is answered with
        # io.reachd.Reachability.ReloadRefused and the running one is kept.
        method Reload() -> ()

        """
}
