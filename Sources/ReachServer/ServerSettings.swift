import ReachConnectivity
import ReachProtocol

/// What the daemon's configuration says about the server: where it listens, what clients
/// may take, how target names are resolved and which connectivity checks run. Built by the
/// daemon from its options; every field is its to say.
package struct ServerSettings: Sendable {
    /// Where to listen (for a server given a listening descriptor: informational).
    package var socketPath: String
    /// Permissions of the socket file (0666: any local user may ask).
    package var socketMode: UInt32
    /// What any client may take (connections, buffered bytes, deadlines, targets).
    package var limits: ServerLimits
    /// systemd-resolved's Varlink socket, asked for target names when it exists (else
    /// `getaddrinfo`); nil: never.
    package var resolvedSocket: String?
    /// `[probe]` and `[captive-portal]`: what connectivity checks run.
    package var connectivity: ConnectivitySettings
    /// The trust of the HTTPS probe; nil when no probe is https.
    package var probeTLS: TLSTrust?
    /// The trust of captive-portal APIs; nil when none is configured.
    package var apiTLS: TLSTrust?

    /// Settings with every field given.
    package init(
        socketPath: String, socketMode: UInt32, limits: ServerLimits, resolvedSocket: String?,
        connectivity: ConnectivitySettings, probeTLS: TLSTrust?, apiTLS: TLSTrust?
    ) {
        self.socketPath = socketPath
        self.socketMode = socketMode
        self.limits = limits
        self.resolvedSocket = resolvedSocket
        self.connectivity = connectivity
        self.probeTLS = probeTLS
        self.apiTLS = apiTLS
    }
}
