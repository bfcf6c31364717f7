/// When to probe one interface's connectivity (one family), as a pure state machine in
/// swift-nio style: inputs (path changes, probe results, timers, a client's request, the
/// time) in, actions out; the owner carries out the IO. The one place that decides the
/// probe schedule.
///
/// - A relevant path change (the interface gained or lost its route, address or DNS)
///   probes at once; a round still running is superseded (its result is dropped).
/// - While not `full`, it retries with backoff: `initialDelay` doubling up to `maximumDelay`
///   (NetworkManager: 1 s to 300 s; Android: 1 s to 10 min). A portal is re-checked the
///   same way, so logging in is noticed.
/// - Once `full` it checks again after `recheckInterval` (`[probe]` defaults to 300 s, as
///   NetworkManager: a lost upstream changes nothing the kernel reports), or
///   `sessionMargin` before an RFC 8908 session's known end; with neither, no timer at all.
/// - A client's request (`reachctl probe`) probes now unless a round is already running.
package struct ProbeSchedule: Sendable, Equatable {
    /// The schedule's settings (`[probe]` in the configuration).
    package struct Configuration: Sendable, Equatable {
        /// First retry delay after a round that was not `full`.
        package var initialDelay: Duration
        /// The longest retry delay.
        package var maximumDelay: Duration
        /// Re-check a `full` interface this often; nil: never (`recheck-interval = 0`).
        package var recheckInterval: Duration?
        /// How long before a captive session's end to look again.
        package var sessionMargin: Duration

        /// Settings; by default 1 s doubling to 300 s, no re-check once full (the
        /// configuration passes its own default).
        package init(initialDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(300),
                    recheckInterval: Duration? = nil, sessionMargin: Duration = .seconds(30)) {
            self.initialDelay = initialDelay
            self.maximumDelay = maximumDelay
            self.recheckInterval = recheckInterval
            self.sessionMargin = sessionMargin
        }
    }

    /// What the owner must do.
    package enum Action: Sendable, Equatable {
        /// Start a probe round; report its result with this round number.
        case startProbe(round: Int)
        /// Call `timerFired` at this time (replacing any armed timer).
        case armTimer(at: ContinuousClock.Instant)
        /// Disarm the timer.
        case cancelTimer
    }

    private enum State: Sendable, Equatable {
        /// Not eligible (no usable route through the interface): nothing runs.
        case idle
        /// A round runs.
        case probing
        /// Waiting for the timer to probe again.
        case waiting
        /// `full`, and nothing planned.
        case settled
    }

    /// The settings in force.
    package let configuration: Configuration
    private var state = State.idle
    private var round = 0
    private var failures = 0

    /// A schedule with nothing to do yet.
    package init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The interface's path changed; `eligible`: it has a usable route to probe over.
    package mutating func pathChanged(eligible: Bool) -> [Action] {
        failures = 0
        guard eligible else {
            let wasActive = state == .probing || state == .waiting
            state = .idle
            round += 1  // a running round's result no longer applies
            return wasActive ? [.cancelTimer] : []
        }
        return [.cancelTimer] + start()
    }

    /// A round finished with `connectivity`; `sessionEnds` is when an RFC 8908 session ends.
    package mutating func probeFinished(round finished: Int, connectivity result: Connectivity,
                                       sessionEnds: ContinuousClock.Instant? = nil, now: ContinuousClock.Instant) -> [Action] {
        guard isCurrent(round: finished) else { return [] }  // superseded
        if result == .full {
            failures = 0
            let recheck = configuration.recheckInterval.map { now + min($0, Self.longestWait) }
            let sessionCheck = sessionEnds.map { min($0, now + Self.longestWait) - configuration.sessionMargin }
            guard let next = [recheck, sessionCheck].compactMap({ $0 }).min() else {
                state = .settled
                return []
            }
            state = .waiting
            return [.armTimer(at: max(next, now))]
        }
        state = .waiting
        failures += 1
        return [.armTimer(at: now + delay(afterFailures: failures - 1))]
    }

    /// The armed timer fired.
    package mutating func timerFired() -> [Action] {
        guard state == .waiting else { return [] }
        return start()
    }

    /// A client asked for a round now.
    package mutating func probeRequested() -> [Action] {
        switch state {
        case .idle, .probing: return []
        case .waiting: return [.cancelTimer] + start()
        case .settled: return start()
        }
    }

    /// Whether a round runs now (a client asking for one waits for its end).
    package var isProbing: Bool { state == .probing }

    /// Whether `finished` is the round running now (not superseded by a later one).
    package func isCurrent(round finished: Int) -> Bool { state == .probing && finished == round }

    /// The longest a timer is ever armed for: a round at least once a day, whatever an
    /// RFC 8908 session claims (the configured delays are at most a day too).
    package static let longestWait: Duration = .seconds(86_400)

    /// `seconds` after `now`, from a number the network sent: never before `now`, never
    /// past `longestWait` (no arithmetic on the number itself, so none can overflow).
    package static func instant(seconds: Int, after now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        let longest = Int(longestWait.components.seconds)
        return now + .seconds(min(max(seconds, 0), longest))
    }

    /// The retry delay after `failures` earlier failed rounds: doubling, capped.
    func delay(afterFailures failures: Int) -> Duration {
        let longest = min(configuration.maximumDelay, Self.longestWait)
        var delay = min(configuration.initialDelay, longest)
        // Doubles only below the cap (a day at most): it cannot overflow.
        for _ in 0..<min(failures, 32) where delay < longest { delay *= 2 }
        return min(delay, longest)
    }

    private mutating func start() -> [Action] {
        state = .probing
        round += 1
        return [.startProbe(round: round)]
    }

}

/// One interface and family that may be probed.
package struct ProbeKey: Sendable, Hashable, Comparable {
    /// The interface's kernel index.
    package var interfaceIndex: Int32
    /// The family probed (the socket is bound to the interface and to this family).
    package var family: AddressFamily

    /// Creates a key.
    package init(interfaceIndex: Int32, family: AddressFamily) {
        self.interfaceIndex = interfaceIndex
        self.family = family
    }

    /// Index order, IPv4 before IPv6.
    package static func < (left: ProbeKey, right: ProbeKey) -> Bool {
        (left.interfaceIndex, left.family == .ipv4 ? 0 : 1) < (right.interfaceIndex, right.family == .ipv4 ? 0 : 1)
    }
}

/// What a probe's answer over one interface and family depends on: when any of it changes,
/// the interface is on another network, or differently, and is probed again at once.
package struct ProbeContext: Sendable, Hashable {
    /// The interface's name (the socket is bound by index; the name is for logs).
    package var interfaceName: String
    /// Its usable addresses of the family.
    package var addresses: Set<IPAddress>
    /// The gateways of its default routes of the family.
    package var gateways: Set<IPAddress>
    /// Whether a DNS server is configured.
    package var hasNameserver: Bool
    /// The captive-portal API the network announced on the interface (RFC 8910).
    package var announcedAPI: String?
}

extension ProbeSchedule {
    /// The interfaces and families probes may run over now, each with what its answer
    /// depends on: not ignored by policy, not loopback, up with carrier and not dormant, a
    /// running underlay, a usable address of the family, and a route of the family through
    /// it that is not `linkdown`: a unicast default route, or the route the family's FIB
    /// lookup chose (OpenVPN's `def1` halves, 0.0.0.0/1 and 128.0.0.0/1, carry the path
    /// without any default route). Probing follows routes, not the primary alone, so a
    /// second uplink's connectivity is known before it is needed.
    package static func eligibleTargets(
        _ snapshot: NetworkSnapshot, policy: InterfacePolicy, families: [AddressFamily], announcedAPIs: [Int32: String] = [:]
    ) -> [ProbeKey: ProbeContext] {
        var hops: [(family: AddressFamily, hop: NextHop)] = []
        for route in snapshot.defaultRoutes where route.type == .unicast && families.contains(route.family) {
            hops += route.nextHops.map { (route.family, $0) }
        }
        for family in families {
            guard case let .route(result)? = snapshot.lookups[family], result.type == .unicast else { continue }
            hops.append((family, NextHop(interfaceIndex: result.outputInterface, gateway: result.gateway, isLinkDown: result.isLinkDown)))
        }
        var targets: [ProbeKey: ProbeContext] = [:]
        let hostInternalBridges = InterfaceRoles.hostInternalBridges(in: snapshot)
        for (family, hop) in hops where !hop.isLinkDown {
            guard let link = snapshot.links[hop.interfaceIndex], !policy.isIgnored(link, hostInternalBridges: hostInternalBridges),
                  !link.flags.contains(.loopback), link.isUp, link.carrier, link.operState != .dormant,
                  !InterfaceRoles.underlayIsDown(link, in: snapshot)
            else { continue }
            let addresses = snapshot.addresses.filter {
                $0.interfaceIndex == link.index && $0.family == family && $0.isUsableForInternet
            }
            guard !addresses.isEmpty else { continue }
            let key = ProbeKey(interfaceIndex: link.index, family: family)
            var context = targets[key] ?? ProbeContext(
                interfaceName: link.name, addresses: Set(addresses.map(\.address)), gateways: [],
                hasNameserver: snapshot.hasNameserver, announcedAPI: announcedAPIs[link.index]
            )
            if let gateway = hop.gateway { context.gateways.insert(gateway) }
            targets[key] = context
        }
        return targets
    }
}
