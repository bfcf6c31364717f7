/// Whether the FIB lookups of a snapshot can be trusted, or may predate a removal the kernel
/// already announced and must be made again shortly (docs/DESIGN.md, rule 6: IPv4 notifies
/// RTM_DELROUTE before it unlinks the route). Pure: the engine feeds it every evaluation and
/// arms or clears its recheck timer as the verdict says.
package struct LookupRecheck: Sendable, Equatable {
    /// What the owner does after an evaluation.
    package enum Verdict: Sendable, Equatable {
        /// Nothing is suspect: the lookups stand, no timer.
        case trusted
        /// A lookup still answers through a route reported gone: take the snapshot again
        /// after this delay.
        case lookAgain(after: Duration)
        /// Still suspect when the schedule is spent: the kernel's answer stands, no timer.
        case gaveUp
    }

    /// 1, 2, 4, 8, 16 and 32 ms: six rechecks within 63 ms, past a preempted deleter
    /// (docs/DESIGN.md, "Why the recheck schedule").
    package static let schedule: [Duration] = [1, 2, 4, 8, 16, 32].map { .milliseconds($0) }

    /// The delays between rechecks, in order; its length bounds them.
    package let schedule: [Duration]
    /// Default routes reported gone that some lookup still answered through, unexplained,
    /// at the last evaluation.
    package private(set) var suspects: Set<DefaultRoute> = []
    /// Rechecks asked for since the current suspicion began (or was renewed by a removal).
    package private(set) var attempts = 0

    /// Creates the state machine with nothing suspect.
    package init(schedule: [Duration] = LookupRecheck.schedule) {
        self.schedule = schedule
    }

    /// Judges one evaluation.
    ///
    /// - Parameters:
    ///   - removed: the default routes the kernel reported gone since the last evaluation
    ///     (empty when the evaluation is a recheck or had other causes).
    ///   - snapshot: what the evaluation saw: the tracked default routes after those
    ///     removals, and the fresh lookups.
    package mutating func evaluate(removed: Set<DefaultRoute>, snapshot: NetworkSnapshot) -> Verdict {
        let fresh = Self.unexplained(removed, in: snapshot)
        suspects = Self.unexplained(suspects, in: snapshot).union(fresh)
        guard !suspects.isEmpty else {
            attempts = 0
            return .trusted
        }
        // A new removal still seen opens a new window: it gets the whole schedule.
        if !fresh.isEmpty { attempts = 0 }
        guard attempts < schedule.count else {
            suspects = []
            attempts = 0
            return .gaveUp
        }
        attempts += 1
        return .lookAgain(after: schedule[attempts - 1])
    }

    /// The routes of `removed` that a lookup in `snapshot` still answers through, where no
    /// tracked default route of `snapshot` answers the same way.
    package static func unexplained(_ removed: Set<DefaultRoute>, in snapshot: NetworkSnapshot) -> Set<DefaultRoute> {
        guard !removed.isEmpty else { return [] }
        var found: Set<DefaultRoute> = []
        for (family, lookup) in snapshot.lookups {
            if snapshot.defaultRoutes.contains(where: { answers(lookup, family: family, through: $0) }) { continue }
            found.formUnion(removed.filter { answers(lookup, family: family, through: $0) })
        }
        return found
    }

    /// Whether `route` can be the route `lookup` (for `family`) answered with: a route
    /// answer through one of its next hops (same output interface and gateway; same table
    /// and type when the answer names them), or a reject answer of its type.
    package static func answers(_ lookup: RouteLookup, family: AddressFamily, through route: DefaultRoute) -> Bool {
        guard route.family == family else { return false }
        switch lookup {
        case let .route(result):
            guard result.type == route.type, result.table.map({ $0 == route.table }) ?? true else { return false }
            // Old kernels answer IPv6 reject routes with the route itself; it has no next hop to compare.
            if rejectTypes.contains(route.type) { return true }
            return route.nextHops.contains { $0.interfaceIndex == result.outputInterface && $0.gateway == result.gateway }
        case let .failure(failure):
            return rejectType(of: failure).map { $0 == route.type } ?? false
        }
    }

    private static let rejectTypes: Set<RouteType> = [.unreachable, .blackhole, .prohibit]

    /// The route type behind a reject answer; nil for "no route" and failed lookups, which
    /// no route explains.
    private static func rejectType(of failure: RouteLookupFailure) -> RouteType? {
        switch failure {
        case .unreachableRoute: .unreachable
        case .blackholeRoute: .blackhole
        case .prohibitedRoute: .prohibit
        case .noRoute, .lookupFailed: nil
        }
    }
}
