/// A TCP socket's state, as far as the stall rule cares.
public enum TCPSocketState: Sendable, Hashable {
    /// Its SYN is out and unanswered.
    case synSent
    /// Anything else the poll reads (established, closing, …).
    case other
}

/// One TCP socket's counters as the kernel's `tcp_info` gave them at one poll, attributed to
/// the interface holding its source address (or the one it is bound to).
public struct TCPSocketSample: Sendable, Hashable {
    /// The kernel's socket cookie: unique for the socket's life, never reused.
    public var cookie: UInt64
    /// The interface its traffic is attributed to.
    public var interfaceIndex: Int32
    /// Its state.
    public var state: TCPSocketState
    /// `tcpi_segs_out`: segments sent, retransmissions included.
    public var segmentsSent: UInt32
    /// `tcpi_segs_in`: segments received.
    public var segmentsReceived: UInt32
    /// `tcpi_total_retrans`: segments retransmitted.
    public var retransmitted: UInt32
    /// `tcpi_lost`: segments now presumed lost (a gauge, not a count).
    public var lost: UInt32
    /// `tcpi_unacked`: segments sent and not yet acknowledged.
    public var unacknowledged: UInt32

    /// Creates a sample.
    public init(cookie: UInt64, interfaceIndex: Int32, state: TCPSocketState = .other, segmentsSent: UInt32 = 0,
                segmentsReceived: UInt32 = 0, retransmitted: UInt32 = 0, lost: UInt32 = 0, unacknowledged: UInt32 = 0) {
        self.cookie = cookie
        self.interfaceIndex = interfaceIndex
        self.state = state
        self.segmentsSent = segmentsSent
        self.segmentsReceived = segmentsReceived
        self.retransmitted = retransmitted
        self.lost = lost
        self.unacknowledged = unacknowledged
    }
}

/// When an interface's TCP traffic counts as stalled (`[stall]`); Android's defaults.
public struct DataStallRule: Sendable, Hashable {
    /// Retransmitted plus lost segments, in percent of those sent, that make a stall.
    public var failPercent = 80
    /// Segments that must have been sent since anything was last received before the
    /// percentage means anything.
    public var minimumSegments = 10
    /// SYN_SENT sockets whose SYN was retransmitted, with nothing received, that make a stall.
    public var synSentMinimum = 3

    /// Android's rule.
    public init() {}
}

/// Whether the TCP traffic over each interface is stalled: the pure rule, fed one poll of
/// the host's sockets at a time and diffed by cookie (a new socket counts from zero, a
/// vanished one drops out).
///
/// Per interface, counted since a segment was last received on any of its sockets:
/// - a poll window in which a segment was received (an acknowledgement, an answer, a new
///   connection's SYN-ACK) means the path carries traffic: a stall clears, and the count
///   starts over from what is still unanswered (the segments in flight, and those of them
///   presumed lost), since the window may have ended in silence;
/// - a window in which nothing was received adds what was sent, retransmitted and newly
///   presumed lost; then it is a stall when at least `minimumSegments` were sent and
///   retransmitted plus lost ones reach `failPercent` of them, or when `synSentMinimum`
///   connections sit in SYN_SENT with their SYN retransmitted;
/// - an interface with nothing in flight (no unacknowledged segment, no SYN out) has
///   nothing to be stalled: the count starts over and a stall clears.
///
/// Judged only on a window of silence, so a stall takes two polls at least. An idle host,
/// a refused connection (its RST is received), a slow download (segments keep coming) and
/// light random loss (acknowledgements keep coming within any window) are no stall.
public struct DataStallDetector: Sendable {
    /// What an interface sent and lost since it last received anything.
    private struct Tally: Sendable, Hashable {
        var sent = 0
        var failed = 0
    }

    /// One interface's verdict.
    private enum Verdict: Sendable, Hashable {
        /// Not stalled; what it sent and lost since it last received anything.
        case flowing(Tally)
        /// Stalled since this time (seconds since the epoch).
        case stalled(since: Int)
    }

    /// The rule in force.
    public let rule: DataStallRule
    private var previous: [UInt64: TCPSocketSample] = [:]
    private var verdicts: [Int32: Verdict] = [:]

    /// A detector that has seen nothing.
    public init(rule: DataStallRule = DataStallRule()) {
        self.rule = rule
    }

    /// The stalled interfaces and since when (seconds since the epoch).
    public var stalls: [Int32: Int] {
        verdicts.compactMapValues { verdict in
            if case let .stalled(since) = verdict { return since }
            return nil
        }
    }

    /// Takes one poll of the sockets (`time`: now, in seconds since the epoch) and returns
    /// the stalled interfaces after it.
    @discardableResult
    public mutating func poll(_ samples: [TCPSocketSample], at time: Int) -> [Int32: Int] {
        struct Window {
            var sent = 0
            var failed = 0
            var received = false
            var retryingSYNs = 0
            var inFlight = false
            var outstanding = 0
            var presumedLost = 0
        }
        var windows: [Int32: Window] = [:]
        var current: [UInt64: TCPSocketSample] = [:]
        current.reserveCapacity(samples.count)
        for sample in samples {
            current[sample.cookie] = sample
            let before = previous[sample.cookie]
            var window = windows[sample.interfaceIndex] ?? Window()
            window.sent += Int(sample.segmentsSent &- (before?.segmentsSent ?? 0))
            window.failed += Int(sample.retransmitted &- (before?.retransmitted ?? 0))
            window.failed += max(0, Int(sample.lost) - Int(before?.lost ?? 0))
            if sample.segmentsReceived != (before?.segmentsReceived ?? 0) { window.received = true }
            if sample.state == .synSent {
                window.inFlight = true
                if sample.retransmitted > 0 { window.retryingSYNs += 1 }
            }
            if sample.unacknowledged > 0 { window.inFlight = true }
            window.outstanding += Int(sample.unacknowledged)
            window.presumedLost += Int(sample.lost)
            windows[sample.interfaceIndex] = window
        }
        previous = current

        var next: [Int32: Verdict] = [:]
        for (index, window) in windows {
            if !window.inFlight {
                next[index] = .flowing(Tally())
                continue
            }
            if window.received {
                next[index] = .flowing(Tally(sent: window.outstanding, failed: window.presumedLost))
                continue
            }
            switch verdicts[index] {
            case let .stalled(since)?:
                next[index] = .stalled(since: since)
            case let .flowing(tally)?:
                next[index] = judge(Tally(sent: tally.sent + window.sent, failed: tally.failed + window.failed), window.retryingSYNs, at: time)
            case nil:
                next[index] = judge(Tally(sent: window.sent, failed: window.failed), window.retryingSYNs, at: time)
            }
        }
        // An interface none of whose sockets is left has nothing to be stalled.
        verdicts = next
        return stalls
    }

    /// Forgets everything (polling stopped: what comes next is not a continuation).
    public mutating func reset() {
        previous = [:]
        verdicts = [:]
    }

    private func judge(_ tally: Tally, _ retryingSYNs: Int, at time: Int) -> Verdict {
        if tally.sent >= rule.minimumSegments && tally.failed * 100 >= rule.failPercent * tally.sent { return .stalled(since: time) }
        if retryingSYNs >= rule.synSentMinimum { return .stalled(since: time) }
        return .flowing(tally)
    }
}
