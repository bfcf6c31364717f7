import ReachabilityCore

/// The links, addresses and default routes the monitor tracks, and the rules for
/// applying one parsed message to them. Pure value type: no IO except through the
/// `facts` closure handed to `apply`.
package struct TrackedState {
    /// Address identity for updates and deletions: (ifindex, address, prefix length).
    struct AddressKey: Hashable {
        var interfaceIndex: Int32
        var address: IPAddress
        var prefixLength: UInt8
    }

    /// Known links by index.
    private(set) var links: [Int32: Link] = [:]
    /// Known addresses.
    private(set) var addresses: [AddressKey: InterfaceAddress] = [:]
    /// Default routes. IPv4 routes are kept whole; IPv6 routes are kept one record
    /// per next hop (the kernel adds, notifies and deletes IPv6 multipath siblings
    /// one by one) and merged back in `snapshot`.
    private(set) var defaultRoutes: [DefaultRouteRecord] = []
    /// Captive-portal API URIs announced in router advertisements, by interface. Forgotten
    /// when the link goes, goes down or loses carrier: reconnected, it may be another network.
    private(set) var announcedCaptivePortals: [Int32: String] = [:]
    /// NAT64 prefixes by interface (RA PREF64, DNS64), forgotten like the captive portals.
    var nat64Prefixes = NAT64PrefixStore()

    /// Empty, but for what the networks announced (a resync cannot dump those).
    package init(announcedCaptivePortals: [Int32: String] = [:], nat64Prefixes: NAT64PrefixStore = NAT64PrefixStore()) {
        self.announcedCaptivePortals = announcedCaptivePortals
        self.nat64Prefixes = nat64Prefixes
    }

    /// Applies one message. `facts` reads sysfs for a link name; it is called only
    /// when a link appears or is renamed.
    ///
    /// Returns the default routes the message took away (docs/DESIGN.md rule 6: the kernel may
    /// announce a removal before its lookups stop seeing the route): the ones RTM_DELROUTE
    /// names (as the kernel described them, tracked or not), the ones an NLM_F_REPLACE
    /// displaced, and the next hops flushed with their link or its last IPv4 address.
    @discardableResult
    package mutating func apply(_ message: ParsedMessage, facts: (String) -> DeviceFacts) -> [DefaultRoute] {
        if let voided = Self.announcementsVoided(by: message) {
            announcedCaptivePortals[voided.link] = nil
            nat64Prefixes.forget(voided.link)
        }
        switch message {
        case .link(var link):
            if let old = links[link.index], old.name == link.name {
                link.device = old.device
            } else {
                link.device = facts(link.name)
            }
            links[link.index] = link
            // docs/DESIGN.md rule 3: admin-down flushes the link's IPv4 routes without RTM_DELROUTE.
            if !link.isUp { return dropRoutes(through: link.index, family: .ipv4) }
        case .linkRemoved(let index):
            links[index] = nil
            addresses = addresses.filter { $0.key.interfaceIndex != index }
            return dropRoutes(through: index, family: nil)
        case .address(let address):
            addresses[Self.key(address)] = address
        case .addressRemoved(let address):
            addresses[Self.key(address)] = nil
            // Removing a link's last IPv4 address makes the kernel flush its IPv4
            // routes (fib_disable_ip), again without RTM_DELROUTE.
            if address.family == .ipv4,
               !addresses.keys.contains(where: { $0.interfaceIndex == address.interfaceIndex && $0.address.family == .ipv4 }) {
                return dropRoutes(through: address.interfaceIndex, family: .ipv4)
            }
        case .defaultRoute(let record):
            let parts = Self.split(record)
            var displaced: [DefaultRoute] = []
            if record.replaces {
                displaced = defaultRoutes
                    .filter { old in Self.sameSlot(old, record) && !parts.contains { Self.sameRoute(old, $0) } }
                    .map(\.route)
                defaultRoutes.removeAll { Self.sameSlot($0, record) }
            }
            for part in parts where !defaultRoutes.contains(where: { Self.sameRoute($0, part) }) {
                defaultRoutes.append(part)
            }
            return displaced
        case .defaultRouteRemoved(let record):
            let parts = Self.split(record)
            for part in parts {
                if let index = defaultRoutes.firstIndex(where: { Self.sameRoute($0, part) })
                    ?? defaultRoutes.firstIndex(where: { Self.sameSlot($0, part) && $0.route.type == part.route.type })
                    ?? defaultRoutes.firstIndex(where: { Self.sameSlot($0, part) }) {
                    defaultRoutes.remove(at: index)
                }
            }
            return parts.map(\.route)
        case .captivePortal(let announcement):
            // The unrestricted URN (apiURI nil) says the network has no portal.
            announcedCaptivePortals[announcement.interfaceIndex] = announcement.apiURI
        case .otherRoute, .rule, .ignored, .neighbour, .pref64:
            // A PREF64 option needs the time it arrived: the monitor applies it to `nat64Prefixes`.
            break
        }
        return []
    }

    /// The link whose announced captive portal `message` voids, and whether the link is
    /// gone: a link that goes, goes down or loses carrier may come back on another network.
    static func announcementsVoided(by message: ParsedMessage) -> (link: Int32, gone: Bool)? {
        switch message {
        case let .link(link) where !link.isUp || !link.carrier: (link.index, false)
        case let .linkRemoved(index): (index, true)
        default: nil
        }
    }

    /// Whether `link` is tracked, up and with carrier: only such a link takes what a network
    /// announces (a link down or without carrier may come back on another network).
    func isConnected(_ link: Int32) -> Bool {
        guard let tracked = links[link] else { return false }
        return tracked.isUp && tracked.carrier
    }

    /// Applies one NAT64 prefix to `nat64Prefixes` (`NAT64PrefixStore.learn`); whether what
    /// `link` carries changed.
    mutating func learn(_ prefix: NAT64Prefix, lifetime: Duration?, on link: Int32, now: ContinuousClock.Instant) -> Bool {
        let before = nat64Prefixes.prefixes(on: link)
        nat64Prefixes.learn(prefix, lifetime: lifetime, on: link, now: now)
        return nat64Prefixes.prefixes(on: link) != before
    }

    /// The default routes `old` tracked that `new` does not (what a resync found gone).
    static func defaultRoutes(in old: TrackedState, missingFrom new: TrackedState) -> [DefaultRoute] {
        old.defaultRoutes.filter { record in !new.defaultRoutes.contains { sameRoute($0, record) } }.map(\.route)
    }

    /// The tracked state as the model's snapshot (no lookups yet). IPv6 per-hop
    /// records are merged into one route per (table, metric, type). A next hop's
    /// `isLinkDown` follows its link's current carrier when the link is known: the
    /// kernel sets and clears RTNH_F_LINKDOWN on carrier changes without telling anyone.
    package func snapshot() -> NetworkSnapshot {
        var routes: [DefaultRoute] = []
        for record in defaultRoutes {
            var route = record.route
            route.nextHops = route.nextHops.map { hop in
                var hop = hop
                if let link = links[hop.interfaceIndex] { hop.isLinkDown = !link.carrier }
                return hop
            }
            if route.family == .ipv6,
               let index = routes.firstIndex(where: {
                   $0.family == .ipv6 && $0.table == route.table && $0.metric == route.metric && $0.type == route.type
               }) {
                routes[index].nextHops += route.nextHops
            } else {
                routes.append(route)
            }
        }
        routes.sort { ($0.family == .ipv4 ? 0 : 1, $0.metric, $0.table) < ($1.family == .ipv4 ? 0 : 1, $1.metric, $1.table) }
        let sortedAddresses = addresses.values.sorted { a, b in
            if a.interfaceIndex != b.interfaceIndex { return a.interfaceIndex < b.interfaceIndex }
            if a.family != b.family { return a.family == .ipv4 }
            if a.address != b.address { return a.address.bytes.lexicographicallyPrecedes(b.address.bytes) }
            return a.prefixLength < b.prefixLength
        }
        var snapshot = NetworkSnapshot(links: links, addresses: sortedAddresses, defaultRoutes: routes)
        snapshot.announcedCaptivePortals = announcedCaptivePortals.filter { links[$0.key] != nil }
        snapshot.nat64Prefixes = nat64Prefixes.prefixesByLink.filter { links[$0.key] != nil }
        return snapshot
    }

    // MARK: Rules

    /// Removes the next hops through `index` (of one family, or both); a route left
    /// without next hops is gone. Routes that never had a next hop (an IPv4
    /// blackhole) are untouched. Returns each changed route with just the hops dropped.
    private mutating func dropRoutes(through index: Int32, family: AddressFamily?) -> [DefaultRoute] {
        var dropped: [DefaultRoute] = []
        defaultRoutes = defaultRoutes.compactMap { record in
            guard family == nil || record.route.family == family,
                  record.route.nextHops.contains(where: { $0.interfaceIndex == index }) else { return record }
            var gone = record.route
            gone.nextHops.removeAll { $0.interfaceIndex != index }
            dropped.append(gone)
            var record = record
            record.route.nextHops.removeAll { $0.interfaceIndex == index }
            return record.route.nextHops.isEmpty ? nil : record
        }
        return dropped
    }

    private static func key(_ address: InterfaceAddress) -> AddressKey {
        AddressKey(interfaceIndex: address.interfaceIndex, address: address.address, prefixLength: address.prefixLength)
    }

    /// IPv6 records are stored per next hop.
    private static func split(_ record: DefaultRouteRecord) -> [DefaultRouteRecord] {
        guard record.route.family == .ipv6, record.route.nextHops.count > 1 else { return [record] }
        return record.route.nextHops.map { hop in
            var part = record
            part.route.nextHops = [hop]
            return part
        }
    }

    /// The kernel's key: IPv4 (table, tos, metric); IPv6 (table, metric).
    private static func sameSlot(_ a: DefaultRouteRecord, _ b: DefaultRouteRecord) -> Bool {
        a.route.family == b.route.family && a.route.table == b.route.table && a.route.metric == b.route.metric
            && (a.route.family == .ipv6 || a.tos == b.tos)
    }

    /// Same slot, type and next hops (ignoring the volatile linkdown flag).
    private static func sameRoute(_ a: DefaultRouteRecord, _ b: DefaultRouteRecord) -> Bool {
        func hops(_ record: DefaultRouteRecord) -> [NextHop] {
            record.route.nextHops.map { NextHop(interfaceIndex: $0.interfaceIndex, gateway: $0.gateway) }
        }
        return sameSlot(a, b) && a.route.type == b.route.type && hops(a) == hops(b)
    }
}
