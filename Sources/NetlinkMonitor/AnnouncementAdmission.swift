import ReachabilityCore

/// Which router-advertisement options may change the tracked state now: a captive-portal URI
/// (RFC 8910) or a PREF64 prefix (RFC 8781) that changes what its link carries passes that
/// link's `AnnouncementLimiter` budget, one per option; a PREF64 refresh is free. Pure: the
/// caller gives the time, `NetlinkMonitor` hands over the options it reads.
package struct AnnouncementAdmission {
    /// The budget for captive-portal URIs.
    private var portals: AnnouncementLimiter<String?>
    /// The budget for PREF64 changes (a new prefix, a withdrawal).
    private var prefixes: AnnouncementLimiter<NDUserOption.PREF64?>

    /// Every link starts with a full `budget` for each option.
    package init(budget: AnnouncementLimiter<String?>.Configuration) {
        portals = AnnouncementLimiter(configuration: budget)
        prefixes = AnnouncementLimiter(configuration: AnnouncementLimiter.Configuration(burst: budget.burst, interval: budget.interval))
    }

    /// When an option held over its link's budget may be applied, or a NAT64 prefix `state`
    /// holds lapses (`release(now:to:)`); nil when nothing is held or expires.
    package func nextRelease(in state: TrackedState) -> ContinuousClock.Instant? {
        portals.nextRelease.earlier(than: prefixes.nextRelease).earlier(than: state.nat64Prefixes.nextExpiry)
    }

    /// Applies an RA's captive-portal option to `state` if its link's budget lets it change
    /// now; whether it did (a repeat or a held one changes nothing yet).
    package mutating func admit(_ announcement: NDUserOption.CaptivePortal, to state: inout TrackedState, now: ContinuousClock.Instant) -> Bool {
        let link = announcement.interfaceIndex
        guard portals.offer(announcement.apiURI, on: link, current: state.announcedCaptivePortals[link], now: now) == .apply else { return false }
        state.apply(.captivePortal(announcement)) { _ in DeviceFacts() }
        return true
    }

    /// Applies an RA's PREF64 option to `state`: a refresh of a held prefix (or a refused
    /// one) at once, a change (new, withdrawn) if its link's budget lets it now; whether what
    /// the link carries changed.
    package mutating func admit(_ announcement: NDUserOption.PREF64, to state: inout TrackedState, now: ContinuousClock.Instant) -> Bool {
        let link = announcement.interfaceIndex
        var trial = state.nat64Prefixes
        switch trial.learn(announcement.prefix, lifetime: announcement.lifetime, on: link, now: now) {
        case .unchanged where prefixes.holds(on: link):
            // Withdrawing what may be the held prefix: the network's latest word replaces it.
            _ = prefixes.offer(announcement, on: link, current: nil, now: now)
            return false
        case .refreshed, .unchanged, .refused:
            state.nat64Prefixes = trial
            return false
        case .added, .withdrawn:
            guard prefixes.offer(announcement, on: link, current: nil, now: now) == .apply else { return false }
            return state.learn(announcement.prefix, lifetime: announcement.lifetime, on: link, now: now)
        }
    }

    /// Drops what a link's old network announced and is still held when `message` voids it
    /// (`TrackedState.announcementsVoided`); a link that is gone is forgotten, budget and all.
    package mutating func void(by message: ParsedMessage) {
        guard let voided = TrackedState.announcementsVoided(by: message) else { return }
        if voided.gone {
            portals.forget(voided.link)
            prefixes.forget(voided.link)
        } else {
            portals.discardHeld(on: voided.link)
            prefixes.discardHeld(on: voided.link)
        }
    }

    /// Applies to `state` the held options whose link has budget again at `now` and drops
    /// the NAT64 prefixes that lapsed; whether any of it changed the tracked state. A link
    /// that went down meanwhile (a resync may have seen it without an event) keeps nothing
    /// of its old network.
    package mutating func release(now: ContinuousClock.Instant, to state: inout TrackedState) -> Bool {
        var changed = state.nat64Prefixes.expire(now: now)
        for (link, uri) in portals.release(now: now) where state.isConnected(link) {
            state.apply(.captivePortal(NDUserOption.CaptivePortal(interfaceIndex: link, apiURI: uri))) { _ in DeviceFacts() }
            changed = true
        }
        for case let (link, announcement?) in prefixes.release(now: now) where state.isConnected(link) {
            if state.learn(announcement.prefix, lifetime: announcement.lifetime, on: link, now: now) { changed = true }
        }
        return changed
    }
}
