/// RFC 7050: learning a link's NAT64 prefix from its DNS64 resolver, the fallback for
/// networks whose router advertisements carry no PREF64. Pure: which links to ask, when to
/// ask again, and what an answer says. The engine carries the actions out (one AAAA query
/// for `ipv4only.arpa` through the link's resolver) and keeps the prefixes in
/// `NAT64PrefixStore` with source `.dns64`.
///
/// A link is asked once for what it looks like now (`Conditions`): again only when its
/// IPv6 default routes or the resolver configuration changed, or after it went away or
/// down; never on a timer, and never while a query for it is still out. An answer without
/// a prefix (no DNS64, or no answer at all) counts: the link is not asked again until
/// something changes.
package struct DNS64Discovery: Sendable, Hashable {
    /// What a link looked like when it was asked: an answer is only good for the same.
    package struct Conditions: Sendable, Hashable {
        /// The gateways of the IPv6 default routes through the link (nil: on-link), sorted.
        package var gateways: [IPAddress?]
        /// Bumped by the caller whenever the resolver configuration changes.
        package var resolverGeneration: Int

        /// Conditions.
        package init(gateways: [IPAddress?], resolverGeneration: Int) {
            self.gateways = gateways
            self.resolverGeneration = resolverGeneration
        }
    }

    /// What the caller does.
    package enum Action: Sendable, Hashable {
        /// Send the query for `ipv4only.arpa` through this link's resolver, and hand the
        /// answer to `answered`.
        case ask(Int32)
        /// The link's DNS64 prefixes are now these (none: it has none).
        case learn(Int32, [NAT64Prefix])
        /// DNS64 no longer applies to the link: drop what it gave.
        case withdraw(Int32)
    }

    /// What the query brought back.
    package enum Answer: Sendable, Hashable {
        /// The AAAA records' addresses, in the resolver's order.
        case addresses([IPAddress])
        /// No records, an error, or no answer in time.
        case failed
    }

    /// One link's discovery.
    private enum LinkState: Sendable, Hashable {
        /// A query is out, sent under `asked`; `now` is how the link looks since (nil: it
        /// no longer qualifies). The answer counts only if they are still the same.
        case asking(asked: Conditions, now: Conditions?)
        /// Asked and answered under these conditions.
        case answered(Conditions)
    }

    /// The most AAAA records one answer is searched (a hostile resolver may send many).
    package static let maximumAnswers = 16
    /// The name RFC 7050 reserves: only IPv4 addresses, so any AAAA record is synthesized.
    package static let name = "ipv4only.arpa"
    /// The two well-known IPv4 addresses of `ipv4only.arpa` (RFC 7050 section 2.2).
    package static let wellKnownAddresses: [IPAddress] = [.v4(192, 0, 0, 170), .v4(192, 0, 0, 171)]

    private var links: [Int32: LinkState] = [:]

    /// Nothing asked yet.
    package init() {}

    /// Whether a query for `link` is out.
    package func isAsking(_ link: Int32) -> Bool {
        if case .asking? = links[link] { return true }
        return false
    }

    /// The links that qualify now (`eligibleLinks`), each with its conditions; the actions
    /// bring the queries and the store in line with them.
    package mutating func update(eligible: [Int32: Conditions]) -> [Action] {
        var actions: [Action] = []
        for (link, state) in links.sorted(by: { $0.key < $1.key }) {
            let current = eligible[link]
            switch state {
            case let .answered(conditions):
                if current == nil {
                    links[link] = nil
                    actions.append(.withdraw(link))
                } else if let current, current != conditions {
                    // What it has stays until the new answer replaces it.
                    links[link] = .asking(asked: current, now: current)
                    actions.append(.ask(link))
                }
            case let .asking(asked, now):
                if now != nil && current == nil { actions.append(.withdraw(link)) }
                links[link] = .asking(asked: asked, now: current)
            }
        }
        for (link, conditions) in eligible.sorted(by: { $0.key < $1.key }) where links[link] == nil {
            links[link] = .asking(asked: conditions, now: conditions)
            actions.append(.ask(link))
        }
        return actions
    }

    /// The query for `link` came back. Learnt if the link still looks as it did when asked;
    /// asked again if it changed meanwhile; dropped if it no longer qualifies.
    package mutating func answered(_ link: Int32, _ answer: Answer) -> [Action] {
        guard case let .asking(asked, now)? = links[link] else { return [] }
        guard let now else {
            links[link] = nil
            return []
        }
        guard now == asked else {
            links[link] = .asking(asked: now, now: now)
            return [.ask(link)]
        }
        links[link] = .answered(asked)
        switch answer {
        case let .addresses(addresses): return [.learn(link, Self.prefixes(in: addresses))]
        case .failed: return [.learn(link, [])]
        }
    }

    /// The links to ask, each with its conditions: up with carrier, a usable global IPv6
    /// address, an IPv6 unicast default route through it, no IPv4 one, and no prefix from
    /// its router advertisements (RFC 8781 is the network's own word, RFC 7050 the fallback).
    package static func eligibleLinks(in snapshot: NetworkSnapshot, resolverGeneration: Int) -> [Int32: Conditions] {
        var gateways: [Int32: [IPAddress?]] = [:]
        var carriesIPv4: Set<Int32> = []
        for route in snapshot.defaultRoutes where route.type == .unicast {
            for hop in route.nextHops {
                switch route.family {
                case .ipv6: gateways[hop.interfaceIndex, default: []].append(hop.gateway)
                case .ipv4: carriesIPv4.insert(hop.interfaceIndex)
                }
            }
        }
        var eligible: [Int32: Conditions] = [:]
        for (index, hops) in gateways where !carriesIPv4.contains(index) {
            guard let link = snapshot.links[index], link.isUp, link.carrier, !link.flags.contains(.loopback),
                  !(snapshot.nat64Prefixes[index] ?? []).contains(where: { $0.source == .routerAdvertisement }),
                  snapshot.addresses.contains(where: { $0.interfaceIndex == index && $0.family == .ipv6 && $0.isUsableForInternet })
            else { continue }
            let sorted = Set(hops).sorted { ($0?.bytes ?? []).lexicographicallyPrecedes($1?.bytes ?? []) }
            eligible[index] = Conditions(gateways: sorted, resolverGeneration: resolverGeneration)
        }
        return eligible
    }

    /// The NAT64 prefixes `ipv4only.arpa`'s AAAA records reveal (RFC 7050 section 3): each
    /// record is searched for 192.0.0.170 or 192.0.0.171 at every RFC 6052 position; a
    /// record with neither is ignored. A record holding them at more than one position
    /// (its prefix contains the bytes too) is settled by its sibling: the other
    /// well-known address under the same prefix at the same position; without one it is
    /// ignored. At most `maximumAnswers` records are read; duplicates are dropped.
    package static func prefixes(in answers: [IPAddress]) -> [NAT64Prefix] {
        let records = Array(answers.lazy.filter { $0.family == .ipv6 }.prefix(maximumAnswers))
        // Every position of each record that holds a well-known address.
        let found: [[NAT64Prefix]] = records.map { record in
            NAT64Prefix.lengths.sorted().compactMap { length in
                guard let prefix = NAT64Prefix(address: record, length: length, source: .dns64),
                      let embedded = prefix.extract(record), wellKnownAddresses.contains(embedded) else { return nil }
                return prefix
            }
        }
        var prefixes: [NAT64Prefix] = []
        for (record, candidates) in zip(records, found) {
            let chosen: NAT64Prefix?
            if candidates.count <= 1 {
                chosen = candidates.first
            } else {
                chosen = candidates.first { prefix in
                    let mine = prefix.extract(record)
                    return records.contains { other in
                        guard let theirs = prefix.extract(other) else { return false }
                        return theirs != mine && wellKnownAddresses.contains(theirs)
                    }
                }
            }
            if let chosen, !prefixes.contains(chosen) { prefixes.append(chosen) }
        }
        return prefixes
    }
}
