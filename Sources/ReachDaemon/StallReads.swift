import Logging
import NetlinkMonitor
import ReachabilityCore
import ReachConfiguration

/// What the engine's reads of the TCP sockets mean: each read judged by `DataStallDetector`,
/// the verdicts handed on only when they changed, a failing or truncated read logged once.
/// Pure but for the log; the engine reads.
struct StallReads {
    /// `[stall]`: how many sockets one read keeps, and the rule they are judged by.
    let settings: ReachdConfiguration.Stall
    private var detector: DataStallDetector
    /// The verdicts last handed on.
    private var published: [Int32: DataStall] = [:]
    /// What the log already said: once at warning, as a sandbox refusing sock_diag refuses every read.
    private var reported: (failure: Bool, skipped: Bool) = (false, false)

    init(settings: ReachdConfiguration.Stall) {
        self.settings = settings
        detector = DataStallDetector(rule: settings.rule)
    }

    /// Judges one read of the sockets (`KernelView.readSockets`, at most `settings.socketLimit`)
    /// made at `now` (seconds): the verdicts when they changed, else nil.
    mutating func judge(_ read: Result<TCPSocketDiagnostics.Reading, NetlinkError>, at now: Int, logger: Logger) -> [Int32: DataStall]? {
        let reading: TCPSocketDiagnostics.Reading
        switch read {
        case let .success(value):
            reading = value
        case let .failure(error):
            logger.log(level: reported.failure ? .debug : .warning, "cannot read the TCP sockets' state: \(error)")
            reported.failure = true
            return nil
        }
        if reading.skipped > 0 && !reported.skipped {
            reported.skipped = true
            logger.notice("more than \(settings.socketLimit) TCP sockets (socket-limit): the stall check skips the rest")
        }
        return changed(detector.poll(reading.samples, at: now))
    }

    /// Forgets what the reads saw (nobody listens, or the path is gone): no stalls, when
    /// that is a change.
    mutating func forget() -> [Int32: DataStall]? {
        detector.reset()
        return changed([:])
    }

    /// The machine woke: what the reads saw before the sleep is forgotten, and the sockets
    /// the next read finds are taken as opened before it (`DataStallDetector.startAfresh`);
    /// no stalls, when that is a change.
    mutating func startAfresh() -> [Int32: DataStall]? {
        detector.startAfresh()
        return changed([:])
    }

    private mutating func changed(_ stalls: [Int32: DataStall]) -> [Int32: DataStall]? {
        guard stalls != published else { return nil }
        published = stalls
        return stalls
    }
}
