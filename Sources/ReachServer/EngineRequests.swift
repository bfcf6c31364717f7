import NIOCore
import ReachTargets

/// What the server asks of the engine, the thread that owns the kernel view: the target
/// lookups, a reload, a failure. Each request that wants an answer carries its own promise,
/// completed from any thread once done.
package protocol EngineRequests: TargetLookups {
    /// Reload the configuration; `reply` learns how it ended once it is applied or refused.
    func reload(reply: EventLoopPromise<ReloadOutcome>)
    /// Something the daemon cannot live without failed: stop with this reason.
    func fail(_ reason: String)
    /// Whether someone listens for stalls (a subscriber, the metrics); the engine reads the
    /// TCP sockets while someone does and the path is satisfied.
    func someoneListens(_ listens: Bool)
}

extension EngineRequests {
    /// Stall polls are not asked of an engine that cannot read sockets (tests' stand-ins).
    package func someoneListens(_ listens: Bool) {}
}

/// How a reload ended: what `io.systemd.service.Reload` answers and systemd is told.
package enum ReloadOutcome: Sendable, Equatable {
    /// The configuration was read and what may change while running was applied.
    case applied
    /// The configuration could not be used (the reason, one line); the running one is kept.
    case refused(String)
}
