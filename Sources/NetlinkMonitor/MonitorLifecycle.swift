import ReachabilityCore

/// Where `NetlinkMonitor` is between `init` and a complete sync, and how often it started
/// over. Pure: the monitor subscribes and dumps as `phase` says and reports each step.
package struct MonitorLifecycle {
    /// One step of the lifecycle.
    package enum Phase: Equatable {
        /// Nothing joined: the next `start()` installs the filter and joins the groups first.
        case unsubscribed
        /// The groups are joined; no start completed yet, so the next one is no resync.
        case subscribed
        /// A start completed; the families whose default routes a deferred start has not read yet.
        case started(pendingRoutes: Set<AddressFamily>)
    }

    /// Where the monitor is.
    private(set) var phase = Phase.unsubscribed
    /// Resyncs so far (the initial sync is not counted).
    private(set) var resyncCount = 0

    /// Not subscribed, never synced.
    package init() {}

    /// Families whose default routes a deferred start has not read yet.
    var pendingRouteFamilies: Set<AddressFamily> {
        guard case let .started(pending) = phase else { return [] }
        return pending
    }

    /// The groups were joined.
    package mutating func subscribed() {
        if phase == .unsubscribed { phase = .subscribed }
    }

    /// A start begins: after a completed one, it is a resync.
    package mutating func starting() {
        if case .started = phase { resyncCount += 1 }
    }

    /// A start completed, leaving these families' routes to read (`routesRead`).
    package mutating func started(pendingRoutes: Set<AddressFamily>) {
        phase = .started(pendingRoutes: pendingRoutes)
    }

    /// A family's routes were dumped.
    package mutating func routesRead(_ family: AddressFamily) {
        guard case var .started(pending) = phase else { return }
        pending.remove(family)
        phase = .started(pendingRoutes: pending)
    }

    /// A complete dump begins: no family is pending any more.
    package mutating func synchronizing() {
        if case .started = phase { phase = .started(pendingRoutes: []) }
    }

    /// A resync begins (events were lost, or the owner asked).
    package mutating func resynchronizing() {
        resyncCount += 1
    }
}
