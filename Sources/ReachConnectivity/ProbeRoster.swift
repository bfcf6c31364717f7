import ReachabilityCore
import ReachConfiguration

/// Which probe schedules run, and on what: the targets a snapshot makes eligible against the
/// schedules running. Pure; `ConnectivityMonitor` carries out the changes.
enum ProbeRoster {
    /// One change to the schedules running.
    enum Change: Equatable {
        /// The key is no longer eligible: stop its schedule, cancel its round, answer its
        /// waiters, and say its family's connectivity is unknown.
        case stop(ProbeKey)
        /// A schedule for a key not running yet, on `context`.
        case start(ProbeKey, ProbeContext)
        /// A running key's context moved (another address, gateway or announced API): the
        /// schedule starts over on it.
        case retarget(ProbeKey, ProbeContext)
    }

    /// What may be probed or fetched under `settings`: `ProbeSchedule.eligibleTargets`, and
    /// with probes off only the interfaces whose network announced an API. Nothing when
    /// neither probes nor API fetches are configured.
    static func eligible(
        _ snapshot: NetworkSnapshot, policy: InterfacePolicy, settings: ConnectivitySettings, announcedAPIs: [Int32: String]
    ) -> [ProbeKey: ProbeContext] {
        guard settings.probe.isEnabled || settings.captivePortal.fetchAPI else { return [:] }
        let eligible = ProbeSchedule.eligibleTargets(snapshot, policy: policy, families: settings.probe.families, announcedAPIs: announcedAPIs)
        return settings.probe.isEnabled ? eligible : eligible.filter { $0.value.announcedAPI != nil }
    }

    /// The changes that make `running` what `eligible` says, stops first, each group in key order.
    static func changes(running: [ProbeKey: ProbeContext], eligible: [ProbeKey: ProbeContext]) -> [Change] {
        let stops = running.keys.sorted().filter { eligible[$0] == nil }.map(Change.stop)
        let starts = eligible.sorted { $0.key < $1.key }.compactMap { key, context -> Change? in
            switch running[key] {
            case nil: .start(key, context)
            case context?: nil
            case _?: .retarget(key, context)
            }
        }
        return stops + starts
    }
}

/// What the log says when a stall is published or cleared on an interface. Pure.
enum StallNews: Equatable {
    /// Nothing worth a line.
    case none
    /// The stall limits connectivity now (notice).
    case stalled
    /// It looked stalled, but a captive portal already explains it (info).
    case behindPortal
    /// It looked stalled, but a probe round since reached its server (info).
    case contradictedByProbe
    /// A stall that limited connectivity cleared (notice).
    case flowsAgain

    /// The news of publishing `stall` (nil: cleared) on an interface whose facts are now
    /// `facts`; `wasLimiting`: whether something limited its connectivity before.
    static func of(_ stall: DataStall?, facts: InterfaceConnectivity, wasLimiting: Bool) -> StallNews {
        guard stall != nil else { return wasLimiting ? .flowsAgain : .none }
        if facts.cause == .dataStall { return .stalled }
        return facts.requiresIntervention ? .behindPortal : .contradictedByProbe
    }
}
