/// Whether a stall the engine found is published at once or first checked by a probe round
/// (Android's order: the socket counters raise a suspicion, validation decides).
///
/// Without probes on the interface, the breadth rule (`DataStallDetector`) alone decides: the
/// stall is published as found. With probes, a round runs and the stall is published only
/// when it finished; `ProbeVerdict.cause` then lets that round's verdict decide (a round that
/// reached its server since the stall began leaves connectivity as the probes say). Rounds a
/// stall asks for are at least `probeInterval` apart per interface, so traffic that keeps
/// raising and clearing suspicions cannot make reachd hammer the probe server. A verdict's
/// evidence is the one it was found on: the same stall found again changes nothing.
package struct StallConfirmation: Sendable, Equatable {
    /// What the carrier does next.
    package enum Action: Sendable, Equatable {
        /// Publish the interface's stall (nil: it cleared).
        case publish(Int32, DataStall?)
        /// Run a probe round on the interface at that instant (now or later), if the stall is
        /// still awaited then (`isAwaiting`), and report `probeFinished` when it ends.
        case probe(Int32, DataStall, at: ContinuousClock.Instant)
    }

    /// The least time between two rounds stalls ask for on one interface (Android: a minute).
    package static let probeInterval: Duration = .seconds(60)

    /// Stalls waiting for their probe round.
    package private(set) var awaitingProbe: [Int32: DataStall] = [:]
    /// When each interface's last stall round was due.
    private var lastRound: [Int32: ContinuousClock.Instant] = [:]

    /// Nothing found yet.
    package init() {}

    /// The engine's verdicts changed.
    ///
    /// - Parameters:
    ///   - found: the engine's stalled interfaces.
    ///   - published: the stalls published now.
    ///   - probed: the interfaces probes run on.
    ///   - now: the time.
    package mutating func engineFound(_ found: [Int32: DataStall], published: [Int32: DataStall], probed: Set<Int32>,
                                     now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        for index in Set(found.keys).union(published.keys).union(awaitingProbe.keys).sorted() {
            guard let stall = found[index] else {
                awaitingProbe[index] = nil
                if published[index] != nil { actions.append(.publish(index, nil)) }
                continue
            }
            if published[index]?.since == stall.since || awaitingProbe[index]?.since == stall.since { continue }
            guard probed.contains(index) else {
                actions.append(.publish(index, stall))
                continue
            }
            awaitingProbe[index] = stall
            let due = lastRound[index].map { max(now, $0 + Self.probeInterval) } ?? now
            lastRound[index] = due
            actions.append(.probe(index, stall, at: due))
        }
        for index in lastRound.keys where !probed.contains(index) { lastRound[index] = nil }
        return actions
    }

    /// Whether the round for `stall` is still wanted.
    package func isAwaiting(_ stall: DataStall, on index: Int32) -> Bool { awaitingProbe[index] == stall }

    /// The probe round asked for `stall` finished (or could not run): publish it, unless it
    /// cleared or was replaced meanwhile.
    package mutating func probeFinished(on index: Int32, for stall: DataStall) -> [Action] {
        guard awaitingProbe[index] == stall else { return [] }
        awaitingProbe[index] = nil
        return [.publish(index, stall)]
    }
}
