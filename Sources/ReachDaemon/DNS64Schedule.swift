import ReachabilityCore

/// When links are asked for their NAT64 prefix (RFC 7050): after a snapshot shows them
/// qualifying, and again when the resolver files say something new; a withdrawal (which the
/// snapshot still shows) asks for one more evaluation. Pure over `DNS64Discovery`;
/// `EngineMachine` sequences it.
struct DNS64Schedule: Equatable {
    /// The discovery per link; nil when `[nat64] discover-dns64` is off.
    private(set) var discovery: DNS64Discovery?
    /// Bumped whenever the resolver files say something new: DNS64 is asked again then.
    private(set) var resolverGeneration = 0
    /// The links the last snapshot showed qualify.
    private(set) var qualifyingLinks: [Int32: DNS64Discovery.Conditions] = [:]
    /// A withdrawal after the snapshot was taken: evaluate again at this instant.
    private(set) var reevaluation: ContinuousClock.Instant?

    /// A schedule that asks (`discover`) or never does.
    init(discover: Bool) {
        discovery = discover ? DNS64Discovery() : nil
    }

    /// When the evaluation after a withdrawal is due.
    var deadline: ContinuousClock.Instant? { reevaluation }

    /// Which links to ask, learn or withdraw from what `snapshot`, taken at `now`, shows.
    mutating func evaluated(_ snapshot: NetworkSnapshot, now: ContinuousClock.Instant) -> [DNS64Discovery.Action] {
        guard discovery != nil else { return [] }
        qualifyingLinks = DNS64Discovery.eligibleLinks(in: snapshot, resolverGeneration: resolverGeneration)
        let actions = discovery?.update(eligible: qualifyingLinks) ?? []
        if actions.contains(where: { if case .withdraw = $0 { true } else { false } }) { reevaluation = now }
        return actions
    }

    /// The resolver files say something new: the links that qualify are asked again (no
    /// snapshot needed, they are the ones the last one showed).
    mutating func resolverChanged() -> [DNS64Discovery.Action] {
        resolverGeneration += 1
        guard discovery != nil else { return [] }
        qualifyingLinks = qualifyingLinks.mapValues { DNS64Discovery.Conditions(gateways: $0.gateways, resolverGeneration: resolverGeneration) }
        return discovery?.update(eligible: qualifyingLinks) ?? []
    }

    /// The machine woke: the answers may be another network's, so the links that qualify
    /// are asked again, as when the resolver files change.
    mutating func askAgain() -> [DNS64Discovery.Action] { resolverChanged() }

    /// A link's resolver answered.
    mutating func answered(_ link: Int32, _ answer: DNS64Discovery.Answer) -> [DNS64Discovery.Action] {
        discovery?.answered(link, answer) ?? []
    }

    /// Whether the evaluation after a withdrawal is due at `now`; taking it clears it.
    mutating func takeReevaluation(now: ContinuousClock.Instant) -> Bool {
        guard let at = reevaluation, now >= at else { return false }
        reevaluation = nil
        return true
    }
}
