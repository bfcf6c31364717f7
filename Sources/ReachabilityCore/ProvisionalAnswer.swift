/// The decision whether an answer may be given while default routes are still being read.
///
/// At start reachd dumps links, addresses and routes. The route dump walks the whole
/// FIB, so with a million routes installed it alone takes longer than the first answer
/// may (the kernel's own work is most of it). The answer rarely needs it: per family the
/// FIB lookup decides, and a lookup with `RTM_F_FIB_MATCH` names the route it matched.
/// The other default routes are consulted only in the cases below, so while a family's
/// routes are pending (`NetworkSnapshot.pendingRouteFamilies`, with `defaultRoutes`
/// holding just the matched route) an answer is final, and may be published, unless:
///
/// 1. the lookup's interface is ignored or filtered out: the other defaults are the
///    fallback;
/// 2. the lookup found no route (or failed): the other defaults refine the reason
///    (a `linkdown` route the kernel skips, say);
/// 3. the lookup's route is usable but the matched route is not a default known here
///    (a VPN's `0.0.0.0/1`, or a kernel without `RTM_F_FIB_MATCH`): the gateways come
///    from a default through the same hop, which only the dump can name;
/// 4. more than one interface besides the primary could carry traffic: their order in
///    `availableInterfaces` follows the metrics of routes not read yet.
///
/// Otherwise nothing the dump can add changes the path: the daemon answers, and when the
/// dump ends publishes the complete snapshot like any other change (a no-op when equal).
extension PathDerivation {
    /// The pending families whose routes the answer for `filter` needs before it is
    /// final; empty when it may be published now.
    package static func familiesAwaitingRoutes(
        _ snapshot: NetworkSnapshot, policy: InterfacePolicy = InterfacePolicy(), filter: PathFilter = .none
    ) -> Set<AddressFamily> {
        guard !snapshot.pendingRouteFamilies.isEmpty else { return [] }
        let context = Context(snapshot: snapshot, policy: policy, filter: filter)
        // Case 4: with at most one candidate besides the primary, the order is fixed.
        let outcomes = AddressFamily.allCases.map { context.evaluate(family: $0) }
        let usable = outcomes.compactMap(\.usable)
        let primary = (usable.first { !$0.requiresConnection } ?? usable.first)?.interfaceIndex
        let others = snapshot.links.values.filter { link in
            link.index != primary && AddressFamily.allCases.contains { context.isCarrying(link.index, family: $0) }
        }
        if others.count > 1 { return snapshot.pendingRouteFamilies }
        return snapshot.pendingRouteFamilies.filter { !context.isFinalWithoutOtherDefaults(family: $0) }
    }
}

extension Context {
    /// Cases 1–3 for one family: whether its outcome and gateways come from the lookup
    /// and the route it matched alone.
    func isFinalWithoutOtherDefaults(family: AddressFamily) -> Bool {
        switch snapshot.lookups[family] {
        case let .route(result)?:
            guard result.type == .unicast || result.type == .local else { return true }
            guard let link = snapshot.links[result.outputInterface] else { return true }
            guard isCandidate(link) else { return false }
            guard case let .usable(route) = check(
                NextHop(interfaceIndex: result.outputInterface, gateway: result.gateway, isLinkDown: result.isLinkDown),
                family: family, preferredSource: result.preferredSource, table: result.table
            ) else { return true }
            return snapshot.defaultRoutes.contains { candidate in
                candidate.family == family && candidate.type == .unicast && candidate.table == route.table
                    && candidate.nextHops.contains { $0.interfaceIndex == route.interfaceIndex && $0.gateway == route.gateway }
            }
        case let .failure(failure)?:
            return Self.reason(for: failure) != .noRoute
        case nil:
            return true
        }
    }
}
