/// A TCP socket's state, as far as the stall rule cares.
package enum TCPSocketState: Sendable, Hashable {
    /// Its SYN is out and unanswered.
    case synSent
    /// Anything else the poll reads (established, closing, …).
    case other
}

/// One TCP socket's counters as the kernel's `tcp_info` gave them at one poll, attributed to
/// the interface holding its source address (or the one it is bound to).
package struct TCPSocketSample: Sendable, Hashable {
    /// The kernel's socket cookie: unique for the socket's life, never reused.
    package var cookie: UInt64
    /// The interface its traffic is attributed to.
    package var interfaceIndex: Int32
    /// Its state.
    package var state: TCPSocketState
    /// The remote address it talks to.
    package var destination: IPAddress
    /// The uid owning it, as the kernel names it to reachd.
    package var uid: UInt32
    /// `tcpi_segs_out`: segments sent, retransmissions included.
    package var segmentsSent: UInt32
    /// `tcpi_segs_in`: segments received.
    package var segmentsReceived: UInt32
    /// `tcpi_total_retrans`: segments retransmitted.
    package var retransmitted: UInt32
    /// `tcpi_lost`: segments now presumed lost (a gauge, not a count).
    package var lost: UInt32
    /// `tcpi_unacked`: segments sent and not yet acknowledged.
    package var unacknowledged: UInt32
    /// Its RTTs, delivery rate and byte counts: what the link-quality estimates use.
    package var timing: TCPTiming

    /// Creates a sample.
    package init(cookie: UInt64, interfaceIndex: Int32, state: TCPSocketState = .other, destination: IPAddress, uid: UInt32 = 0,
                segmentsSent: UInt32 = 0, segmentsReceived: UInt32 = 0, retransmitted: UInt32 = 0, lost: UInt32 = 0,
                unacknowledged: UInt32 = 0, timing: TCPTiming = TCPTiming()) {
        self.timing = timing
        self.cookie = cookie
        self.interfaceIndex = interfaceIndex
        self.state = state
        self.destination = destination
        self.uid = uid
        self.segmentsSent = segmentsSent
        self.segmentsReceived = segmentsReceived
        self.retransmitted = retransmitted
        self.lost = lost
        self.unacknowledged = unacknowledged
    }
}

/// A destination as the breadth rule counts it: an IPv4 /24 or an IPv6 /64, so the hosts of
/// one firewalled network (or one host's many addresses) are one destination.
package enum DestinationPrefix: Sendable, Hashable {
    /// The first three bytes of an IPv4 address.
    case v4(UInt32)
    /// The first eight bytes of an IPv6 address.
    case v6(UInt64)

    /// The prefix `address` lies in.
    package init(_ address: IPAddress) {
        switch address {
        case let .v4(a, b, c, _):
            self = .v4(UInt32(a) << 16 | UInt32(b) << 8 | UInt32(c))
        case let .v6(bytes):
            self = .v6(bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) })
        }
    }
}

/// When an interface's TCP traffic counts as stalled (`[stall]`): Android's rule, and the
/// breadth that makes it the path's rather than one server's.
package struct DataStallRule: Sendable, Hashable {
    /// Retransmitted plus lost segments, in percent of those sent, that make a stall.
    package var failPercent = 80
    /// Segments that must have been sent since anything was last received before the
    /// percentage means anything.
    package var minimumSegments = 10
    /// SYN_SENT sockets whose SYN was retransmitted, with nothing received, that make a stall.
    package var synSentMinimum = 3
    /// Distinct destinations (`DestinationPrefix`) whose traffic must go unanswered: one host
    /// or network that does not answer is down or firewalled, not the path (DESIGN rule 11).
    package var minimumDestinations = 3

    /// Android's rule, over three destinations.
    package init() {}
}

/// What a stall verdict rests on: the unanswered sockets since anything was last received on
/// the interface, the destinations they went to and the users owning them.
package struct DataStall: Sendable, Hashable {
    /// When the interface was judged stalled, in seconds since the epoch.
    package var since: Int
    /// Sockets whose traffic went unanswered.
    package var sockets: Int
    /// The distinct destinations (IPv4 /24s, IPv6 /64s) they went to.
    package var destinations: Int
    /// The distinct uids owning them.
    package var users: Int

    /// Creates a verdict's evidence.
    package init(since: Int, sockets: Int = 0, destinations: Int = 0, users: Int = 0) {
        self.since = since
        self.sockets = sockets
        self.destinations = destinations
        self.users = users
    }
}

/// Whether the TCP traffic over each interface is stalled: the pure rule, fed one poll of
/// the host's sockets at a time and diffed by cookie (a new socket counts from zero, a
/// vanished one drops out).
///
/// Per interface, counted since a segment was last received on any of its sockets:
/// - a poll window in which a segment was received (an acknowledgement, an answer, a new
///   connection's SYN-ACK) means the path carries traffic: a stall clears, and the count
///   starts over from what is still unanswered (the segments in flight, and those of them
///   presumed lost, with their sockets' destinations), since the window may have ended in silence;
/// - a window in which nothing was received adds what was sent, retransmitted and newly
///   presumed lost, and the sockets that retransmitted, lost segments or retried a SYN;
///   then it is a stall when that unanswered traffic went to at least `minimumDestinations`
///   destinations and either at least `minimumSegments` were sent with retransmitted plus
///   lost ones reaching `failPercent` of them, or `synSentMinimum` connections sit in
///   SYN_SENT with their SYN retransmitted;
/// - an interface with nothing in flight (no unacknowledged segment, no SYN out) has
///   nothing to be stalled: the count starts over and a stall clears.
///
/// A connection may answer, carry its request and close between two polls, never seen
/// receiving. So the poll also takes the sockets destroyed in its window (`destroyed`: the
/// kernel's sock_diag destroy broadcast, watched while a stall stands): one whose
/// `segmentsReceived` passed what the previous poll saw of it (or is above zero, never seen)
/// received in the window, as a living socket would have; one that received nothing (a
/// SYN_SENT given up) adds nothing, as it failed already while it lived.
///
/// After a sleep (`startAfresh`) the sockets opened before it count only for what they
/// receive: after hours asleep their NAT mappings and peers may be gone, which says nothing
/// about the path; new traffic that goes unanswered still does.
///
/// Judged only on a window of silence, so a stall takes two polls at least. An idle host,
/// a refused connection (its RST is received), a slow download (segments keep coming), light
/// random loss (acknowledgements keep coming within any window) and any number of
/// connections, ports and users towards one host or one /24 (/64) are no stall.
package struct DataStallDetector: Sendable {
    /// The unanswered sockets, their destinations and their owners.
    private struct Evidence: Sendable, Hashable {
        var sockets: Set<UInt64> = []
        var destinations: Set<DestinationPrefix> = []
        var users: Set<UInt32> = []

        mutating func add(_ sample: TCPSocketSample) {
            sockets.insert(sample.cookie)
            destinations.insert(DestinationPrefix(sample.destination))
            users.insert(sample.uid)
        }

        mutating func formUnion(_ other: Evidence) {
            sockets.formUnion(other.sockets)
            destinations.formUnion(other.destinations)
            users.formUnion(other.users)
        }
    }

    /// What an interface sent and lost since it last received anything, and towards whom.
    private struct Tally: Sendable, Hashable {
        var sent = 0
        var failed = 0
        var unanswered = Evidence()
    }

    /// One interface's verdict.
    private enum Verdict: Sendable, Hashable {
        /// Not stalled; what it sent and lost since it last received anything.
        case flowing(Tally)
        /// Stalled, and what the verdict rests on.
        case stalled(DataStall)
    }

    /// One poll window of one interface.
    private struct Window {
        var sent = 0
        var failed = 0
        var received = false
        var retryingSYNs = 0
        var inFlight = false
        var outstanding = 0
        var presumedLost = 0
        /// The sockets that failed in this window.
        var failing = Evidence()
        /// The sockets still holding segments presumed lost.
        var stillLost = Evidence()
    }

    /// The rule in force.
    package let rule: DataStallRule
    private var previous: [UInt64: TCPSocketSample] = [:]
    private var verdicts: [Int32: Verdict] = [:]
    /// Sockets opened before the machine slept: what they send and lose is no evidence of a
    /// stall (their NAT mappings and peers may have expired meanwhile), what they receive
    /// still shows the path works. Taken at the first poll after `startAfresh`, kept until
    /// each is gone.
    private var beforeSleep: Set<UInt64> = []
    private var takesCensus = false

    /// A detector that has seen nothing.
    package init(rule: DataStallRule = DataStallRule()) {
        self.rule = rule
    }

    /// The stalled interfaces and what each verdict rests on.
    package var stalls: [Int32: DataStall] {
        verdicts.compactMapValues { verdict in
            if case let .stalled(stall) = verdict { return stall }
            return nil
        }
    }

    /// Takes one poll of the sockets (`time`: now, in seconds since the epoch) and the sockets
    /// destroyed since the last one (their last counters; possibly also in `samples`, when the
    /// dump caught them first), and returns the stalled interfaces after it.
    @discardableResult
    package mutating func poll(_ samples: [TCPSocketSample], destroyed: [TCPSocketSample] = [], at time: Int) -> [Int32: DataStall] {
        var windows: [Int32: Window] = [:]
        var current: [UInt64: TCPSocketSample] = [:]
        current.reserveCapacity(samples.count)
        if takesCensus {
            beforeSleep = Set(samples.lazy.map(\.cookie))
            takesCensus = false
        } else if !beforeSleep.isEmpty {
            beforeSleep.formIntersection(samples.lazy.map(\.cookie))
        }
        for sample in samples {
            current[sample.cookie] = sample
            let before = previous[sample.cookie]
            var window = windows[sample.interfaceIndex] ?? Window()
            if beforeSleep.contains(sample.cookie) {
                if before != nil, sample.segmentsReceived != before?.segmentsReceived { window.received = true }
                windows[sample.interfaceIndex] = window
                continue
            }
            let retransmitted = Int(sample.retransmitted &- (before?.retransmitted ?? 0))
            let newlyLost = max(0, Int(sample.lost) - Int(before?.lost ?? 0))
            window.sent += Int(sample.segmentsSent &- (before?.segmentsSent ?? 0))
            window.failed += retransmitted + newlyLost
            if sample.segmentsReceived != (before?.segmentsReceived ?? 0) { window.received = true }
            if sample.state == .synSent {
                window.inFlight = true
                if sample.retransmitted > 0 { window.retryingSYNs += 1 }
            }
            if retransmitted > 0 || newlyLost > 0 || (sample.state == .synSent && sample.retransmitted > 0) {
                window.failing.add(sample)
            }
            if sample.unacknowledged > 0 { window.inFlight = true }
            if sample.lost > 0 { window.stillLost.add(sample) }
            window.outstanding += Int(sample.unacknowledged)
            window.presumedLost += Int(sample.lost)
            windows[sample.interfaceIndex] = window
        }
        // Only what they received counts: what they sent and lost, the dump saw while they lived.
        // (`!=`: the counter only grows, and may wrap, as a living socket's.)
        for sample in destroyed where sample.segmentsReceived != previous[sample.cookie]?.segmentsReceived ?? 0 {
            windows[sample.interfaceIndex, default: Window()].received = true
        }
        previous = current

        var next: [Int32: Verdict] = [:]
        for (index, window) in windows {
            if !window.inFlight {
                next[index] = .flowing(Tally())
                continue
            }
            if window.received {
                next[index] = .flowing(Tally(sent: window.outstanding, failed: window.presumedLost, unanswered: window.stillLost))
                continue
            }
            switch verdicts[index] {
            case let .stalled(stall)?:
                next[index] = .stalled(stall)
            case let .flowing(tally)?:
                var unanswered = tally.unanswered
                unanswered.formUnion(window.failing)
                next[index] = judge(Tally(sent: tally.sent + window.sent, failed: tally.failed + window.failed, unanswered: unanswered),
                                    window.retryingSYNs, at: time)
            case nil:
                next[index] = judge(Tally(sent: window.sent, failed: window.failed, unanswered: window.failing), window.retryingSYNs, at: time)
            }
        }
        // An interface none of whose sockets is left has nothing to be stalled.
        verdicts = next
        return stalls
    }

    /// Forgets everything (polling stopped: what comes next is not a continuation).
    package mutating func reset() {
        previous = [:]
        verdicts = [:]
        beforeSleep = []
        takesCensus = false
    }

    /// The machine woke: forgets everything, and the sockets the next poll finds are taken
    /// as opened before the sleep (see `beforeSleep`).
    package mutating func startAfresh() {
        reset()
        takesCensus = true
    }

    private func judge(_ tally: Tally, _ retryingSYNs: Int, at time: Int) -> Verdict {
        let failing = tally.sent >= rule.minimumSegments && tally.failed * 100 >= rule.failPercent * tally.sent
        guard failing || retryingSYNs >= rule.synSentMinimum,
              tally.unanswered.destinations.count >= rule.minimumDestinations else { return .flowing(tally) }
        let evidence = tally.unanswered
        return .stalled(DataStall(since: time, sockets: evidence.sockets.count, destinations: evidence.destinations.count,
                                  users: evidence.users.count))
    }
}
