import ReachabilityCore

/// Which gateways' neighbour entries the monitor follows, what it knows of each, and what the
/// route-event filter lets through about them. Pure: `NetlinkMonitor` installs the filter and
/// reads the entries each `Step` asks for, and hands the answers and events back.
///
/// The filter lets only failures through about a gateway that answers, and everything about
/// one that does not (failed, being resolved, no entry). A gateway newly followed, or one whose
/// filter widens, is read after the wider filter is in place, so no event between the two is
/// missed; a read that changes what the filter should be takes another round.
package struct GatewayFollowing {
    /// Rounds of reading entries and refitting the filter before every event about the
    /// followed gateways is let through instead.
    static let maxRounds = 3

    /// What the monitor does next in `follow(used:)`'s rounds.
    package enum Step: Equatable {
        /// The installed filter fits the entries: nothing to do.
        case fitted
        /// Install `filter`, then read these gateways' entries (`record`), then ask `nextStep()`.
        case refit(read: Set<GatewayKey>)
        /// The entries kept changing while they were read: install `filter` (every event
        /// about each followed gateway passes) and stop.
        case keepAll
    }

    /// The followed gateways' entries (`GatewayNeighbours.next` judged each).
    private(set) var entries: [GatewayKey: GatewayNeighbour] = [:]
    /// What the installed filter lets through about each followed gateway.
    private(set) var filter: [GatewayKey: RouteEventFilter.GatewayEvents] = [:]
    /// The gateways the routes use now (`filter` may follow a few more).
    private(set) var used: Set<GatewayKey> = []
    /// The gateways the rounds fit the filter to (`GatewayNeighbours.followed`).
    private var followed: Set<GatewayKey> = []
    /// Rounds taken since `follow(used:)`.
    private var rounds = 0

    /// Follows nothing yet.
    package init() {}

    /// The entries of the gateways the routes use, for the snapshot.
    var usedEntries: [GatewayKey: GatewayNeighbour] { entries.filter { used.contains($0.key) } }

    /// Starts following the gateways the routes use now (`GatewayNeighbours.watched`), keeping
    /// a few no route uses any more (`GatewayNeighbours.followed`); the first step.
    package mutating func follow(used: Set<GatewayKey>) -> Step {
        let wanted = GatewayNeighbours.followed(wanted: used, before: Set(filter.keys))
        entries = entries.filter { wanted.contains($0.key) }
        self.used = used
        followed = wanted
        rounds = 0
        return nextStep()
    }

    /// The step after a refit's reads were recorded.
    package mutating func nextStep() -> Step {
        guard rounds < Self.maxRounds else {
            filter = Dictionary(uniqueKeysWithValues: followed.map { ($0, .all) })
            return .keepAll
        }
        rounds += 1
        let fitting = Dictionary(uniqueKeysWithValues: followed.map { key in
            (key, GatewayNeighbours.answers(entries[key]?.state) ? RouteEventFilter.GatewayEvents.failures : .all)
        })
        if fitting == filter { return .fitted }
        let unread = followed.filter { filter[$0] == nil || (fitting[$0] == .all && filter[$0] != .all) }
        filter = fitting
        return .refit(read: unread)
    }

    /// Forgets what the filter was made for, so the next `follow(used:)` reads every entry
    /// again (after a resync: events about them may have been lost too).
    package mutating func forgetFilter() {
        filter = [:]
    }

    /// Applies what the kernel said about a followed gateway's entry (nil: it is gone) at
    /// `now` (seconds since the epoch, read only for a new `since`); whether the kept state changed. `since` moves only
    /// when failed turns to not or back.
    @discardableResult
    package mutating func record(_ key: GatewayKey, _ reported: NeighbourState?, now: @autoclosure () -> Int) -> Bool {
        let previous = entries[key]
        guard let state = GatewayNeighbours.next(previous: previous?.state, reported: reported) else {
            entries[key] = nil
            return previous != nil
        }
        let since = previous.flatMap { ($0.state == .failed) == (state == .failed) ? $0.since : nil } ?? now()
        entries[key] = GatewayNeighbour(state: state, since: since)
        return previous?.state != state
    }

    /// Takes a neighbour event; whether it is news. Another neighbour (the filter is wider
    /// when it could not be fitted) is not; nor is a gateway still followed that no route
    /// uses, until one does.
    package mutating func event(_ key: GatewayKey, _ reported: NeighbourState?, now: @autoclosure () -> Int) -> Bool {
        guard filter[key] != nil else { return false }
        return record(key, reported, now: now()) && used.contains(key)
    }
}
