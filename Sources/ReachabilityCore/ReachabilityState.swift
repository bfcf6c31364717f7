
/// Everything the daemon publishes at one moment: the snapshot it derived from, the
/// policy in force, and the two views clients ask for.
///
/// The engine builds one per evaluation that changed something; the server keeps the
/// latest and derives filtered paths for subscribers from `snapshot` and `policy`.
package struct ReachabilityState: Sendable, Equatable {
    /// What the kernel said.
    package var snapshot: NetworkSnapshot
    /// How interfaces are treated (ignores, overrides).
    package var policy: InterfacePolicy
    /// What probes and the networks' captive-portal APIs said, per interface.
    package var connectivity: ConnectivityTable
    /// The unfiltered, system-wide path.
    package var path: Path
    /// Every interface, as `ListInterfaces` reports them.
    ///
    /// Derived when asked for (`ListInterfaces`, the metrics), not with every state: a
    /// published change does not pay for a list nobody reads. Being a function of
    /// `snapshot`, `policy` and `connectivity`, it needs no part in equality.
    package var interfaces: [InterfaceDescription] {
        InterfaceListing.describe(snapshot, policy: policy, connectivity: connectivity)
    }
    /// What subscribers are told about, unfiltered.
    package var answer: Answer

    /// The part of the state a subscriber is told about: the path, and the usable
    /// addresses of its primary interface (an address change there matters to an app
    /// even when the path's fields stay the same).
    package struct Answer: Sendable, Equatable {
        /// The path.
        package var path: Path
        /// Usable internet addresses of the path's primary interface.
        package var primaryAddresses: Set<IPAddress>

        /// What changed from `previous` to this answer.
        package func changes(since previous: Answer) -> [PathChange] {
            PathChange.between(previous.path, addresses: previous.primaryAddresses, and: path, addresses: primaryAddresses)
        }
    }

    /// Derives the path from a snapshot and the connectivity facts.
    package init(snapshot: NetworkSnapshot, policy: InterfacePolicy, connectivity: ConnectivityTable = [:]) {
        self.snapshot = snapshot
        self.policy = policy
        self.connectivity = connectivity
        self.path = PathDerivation.derive(snapshot, policy: policy, connectivity: connectivity)
        self.answer = Answer(path: path, primaryAddresses: snapshot.usableAddresses(ofInterfaceNamed: path.primaryInterface))
    }

    /// The path as a subscriber with this filter sees it.
    package func path(for filter: PathFilter) -> Path {
        filter.isUnconstrained ? path : PathDerivation.derive(snapshot, policy: policy, filter: filter, connectivity: connectivity)
    }

    /// Whether the answer for `filter` needs default routes still being read at start
    /// (only then may it differ from what the complete snapshot will say).
    package func awaitsRoutes(for filter: PathFilter) -> Bool {
        !PathDerivation.familiesAwaitingRoutes(snapshot, policy: policy, filter: filter).isEmpty
    }

    /// The answer as a subscriber with this filter sees it.
    package func answer(for filter: PathFilter) -> Answer {
        guard !filter.isUnconstrained else { return answer }
        let path = path(for: filter)
        return Answer(path: path, primaryAddresses: snapshot.usableAddresses(ofInterfaceNamed: path.primaryInterface))
    }
}
