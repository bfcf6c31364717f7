import ReachabilityCore

/// Everything the daemon publishes at one moment: the snapshot it derived from, the
/// policy in force, and the two views clients ask for.
///
/// The engine builds one per evaluation that changed something; the server keeps the
/// latest and derives filtered paths for subscribers from `snapshot` and `policy`.
public struct ReachabilityState: Sendable, Equatable {
    /// What the kernel said.
    public var snapshot: NetworkSnapshot
    /// How interfaces are treated (ignores, overrides).
    public var policy: InterfacePolicy
    /// The unfiltered, system-wide path.
    public var path: Path
    /// Every interface, as `ListInterfaces` reports them.
    public var interfaces: [InterfaceDescription]

    /// Derives the path and the interface list from a snapshot.
    public init(snapshot: NetworkSnapshot, policy: InterfacePolicy) {
        self.snapshot = snapshot
        self.policy = policy
        self.path = PathDerivation.derive(snapshot, policy: policy)
        self.interfaces = InterfaceListing.describe(snapshot, policy: policy)
    }

    /// The path as a subscriber with this filter sees it.
    public func path(for filter: PathFilter) -> Path {
        filter.isUnconstrained ? path : PathDerivation.derive(snapshot, policy: policy, filter: filter)
    }
}
