import NIOCore
import ReachabilityCore
import ReachConfiguration
import ReachTargets

/// What a reload read and checked: how it ended, and what the event loop applies.
package struct ReloadResult: Sendable, Equatable {
    /// Applied or refused, as systemd and the client that asked are told.
    package var outcome: ReloadOutcome
    /// The interface policy to apply, when it changed.
    package var policy: InterfacePolicy?
    /// The targets `[targets] watch` names, when they changed.
    package var watchedTargets: [WatchedTarget]?

    /// A result; nothing to apply unless given.
    package init(_ outcome: ReloadOutcome, policy: InterfacePolicy? = nil, watchedTargets: [WatchedTarget]? = nil) {
        self.outcome = outcome
        self.policy = policy
        self.watchedTargets = watchedTargets
    }
}

/// The daemon that owns the server: what only it can do, reachd's `DaemonReload`. Called on
/// the server's loop, a reload never twice at once (`ReloadQueue`); blocking work goes to
/// `work`, and the server applies what a reload returns on its loop.
package protocol ServerOwner {
    /// Reads the configuration afresh, checks it, applies what the server does not hold (the
    /// log level) and puts the socket file back if it was deleted. `askedByClient`: a Varlink
    /// client asked (else SIGHUP did), for the log.
    func reload(askedByClient: Bool, work: BlockingWork) -> EventLoopFuture<ReloadResult>
    /// Puts the socket file back if it was deleted.
    func restoreSocketFile(work: BlockingWork)
}
