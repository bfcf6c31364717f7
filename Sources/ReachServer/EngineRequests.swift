import NIOCore
import ReachabilityCore

/// What the server asks of the engine, the thread that owns the kernel view. Each request
/// that wants an answer carries its own promise, completed from any thread once done.
package protocol EngineRequests: Sendable {
    /// Reload the configuration; `reply` learns how it ended once it is applied or refused.
    func reload(reply: EventLoopPromise<ReloadOutcome>)
    /// Look up these target addresses (each with its caller's uid) now.
    func lookUp(_ keys: [TargetKey], reply: EventLoopPromise<[TargetLookup]>)
    /// Look up `add` with every snapshot from now on (counted: a key asked for twice is
    /// released twice) and stop looking up `remove`.
    func monitorTargets(add: [TargetKey], remove: [TargetKey])
    /// Something the daemon cannot live without failed: stop with this reason.
    func fail(_ reason: String)
}

/// How a reload ended: what `io.systemd.service.Reload` answers and systemd is told.
package enum ReloadOutcome: Sendable, Equatable {
    /// The configuration was read and what may change while running was applied.
    case applied
    /// The configuration could not be used (the reason, one line); the running one is kept.
    case refused(String)
}
