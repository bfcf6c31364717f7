import Logging
import NetlinkMonitor
import ReachabilityCore
import ReachConfiguration

/// What the engine's reads of the TCP sockets mean: each read judged by `DataStallDetector`
/// and measured by `LinkQualityEstimator` (with the Wi-Fi stations read beside it), the
/// verdicts and estimates handed on only when they changed, a failing or truncated read logged once.
/// Also whether the sockets destroyed between reads are watched (`watchesDestroyedSockets`:
/// while a stall stands, so a connection that answers and closes between two reads clears
/// it). Pure but for the log; the engine reads, and opens and closes the watch.
struct StallReads {
    /// `[stall]`: how many sockets one read keeps, and the rule they are judged by.
    let settings: ReachdConfiguration.Stall
    private var detector: DataStallDetector
    private var estimator = LinkQualityEstimator()
    /// The verdicts and estimates last handed on.
    private var published: (stalls: [Int32: DataStall], quality: [Int32: LinkQualityEstimate]) = ([:], [:])
    /// The first read's instant: the estimator's clock counts seconds from it.
    private var origin: ContinuousClock.Instant?
    /// What the log already said: once at warning, as a sandbox refusing sock_diag refuses every read.
    private var reported: (failure: Bool, skipped: Bool, station: Bool) = (false, false, false)
    /// The same for the destroy watch: it could not be opened or read, it overflowed, it had more than a read's limit.
    private var reportedWatch: (failure: Bool, overflow: Bool, limit: Bool) = (false, false, false)

    init(settings: ReachdConfiguration.Stall) {
        self.settings = settings
        detector = DataStallDetector(rule: settings.rule)
    }

    /// Whether the sockets destroyed between reads are to be watched: while a stall stands on
    /// any interface (only then can they clear one; otherwise the watch would cost a
    /// descriptor and the kernel a message per closed socket for nothing).
    var watchesDestroyedSockets: Bool { !detector.stalls.isEmpty }

    /// What a read (or its end) changed: each part nil when it did not change.
    struct Findings: Equatable {
        /// The stalled interfaces, when that changed.
        var stalls: [Int32: DataStall]?
        /// Every interface's link-quality estimate, when one changed.
        var linkQuality: [Int32: LinkQualityEstimate]?
    }

    /// Which of `wireless` (the Wi-Fi interfaces that are up) a read's sockets use: the ones
    /// whose station is worth reading with it (`judge`'s `stations`), none when nobody sends.
    func stationsToRead(_ read: Result<TCPSocketDiagnostics.Reading, NetlinkError>, wireless: Set<Int32>) -> Set<Int32> {
        guard !wireless.isEmpty, case let .success(reading) = read else { return [] }
        return Set(reading.samples.lazy.map(\.interfaceIndex).filter(wireless.contains))
    }

    /// Judges one read of the sockets (`KernelView.readSockets`, at most `settings.socketLimit`)
    /// made at `now` (seconds since the epoch; `instant` on the monotonic clock), with what the
    /// destroy watch drained after it (nil: not watched) and the Wi-Fi stations read beside it
    /// (`stationsToRead`). A failed or overflowed drain is unknown, not evidence: the read is
    /// judged on what the drain did return; a station that cannot be read has no radio term.
    mutating func judge(
        _ read: Result<TCPSocketDiagnostics.Reading, NetlinkError>, destroyed: Result<TCPSocketDiagnostics.Destroyed, NetlinkError>? = nil,
        stations: [Int32: Result<WirelessStation?, NetlinkError>] = [:], at now: Int, instant: ContinuousClock.Instant = .now, logger: Logger
    ) -> Findings {
        let reading: TCPSocketDiagnostics.Reading
        switch read {
        case let .success(value):
            reading = value
        case let .failure(error):
            logger.log(level: reported.failure ? .debug : .warning, "cannot read the TCP sockets' state: \(error)")
            reported.failure = true
            return Findings()
        }
        if reading.skipped > 0 && !reported.skipped {
            reported.skipped = true
            logger.notice("more than \(settings.socketLimit) TCP sockets (socket-limit): the stall check skips the rest")
        }
        let stalls = detector.poll(reading.samples, destroyed: drained(destroyed, logger: logger), at: now)
        let origin = origin ?? instant
        self.origin = origin
        let elapsed = (instant - origin).components
        var radios: [Int32: WirelessStation] = [:]
        for (index, station) in stations {
            switch station {
            case let .success(station?): radios[index] = station
            case .success(nil): break  // not associated
            case let .failure(error):
                logger.log(level: reported.station ? .debug : .warning, "cannot read the Wi-Fi station of interface \(index): \(error); its class has no radio term")
                reported.station = true
            }
        }
        let quality = estimator.poll(reading.samples, stations: radios, at: Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
        return changed(stalls, quality)
    }

    /// The destroy watch could not be opened (the engine tries again at the next read).
    mutating func watchFailed(_ error: NetlinkError, logger: Logger) {
        logger.log(level: reportedWatch.failure ? .debug : .warning, "cannot watch TCP sockets' destruction: \(error); a stall clears only on what the reads see")
        reportedWatch.failure = true
    }

    /// The destroyed sockets a drain returned; logs what went wrong, once each.
    private mutating func drained(_ destroyed: Result<TCPSocketDiagnostics.Destroyed, NetlinkError>?, logger: Logger) -> [TCPSocketSample] {
        switch destroyed {
        case nil:
            return []
        case let .failure(error):
            watchFailed(error, logger: logger)
            return []
        case let .success(drain):
            if drain.overflowed && !reportedWatch.overflow {
                reportedWatch.overflow = true
                logger.notice("the kernel dropped TCP socket destruction records (ENOBUFS): those sockets are unknown to the stall check")
            }
            if drain.atLimit && !reportedWatch.limit {
                reportedWatch.limit = true
                logger.notice("more than \(settings.socketLimit) TCP sockets destroyed between two reads (socket-limit): the rest wait for the next read")
            }
            return drain.samples
        }
    }

    /// Forgets what the reads saw (nobody listens, or the path is gone): no stalls and no
    /// estimates, when that is a change.
    mutating func forget() -> Findings {
        detector.reset()
        estimator.reset()
        return changed([:], [:])
    }

    /// The machine woke: what the reads saw before the sleep is forgotten, and the sockets
    /// the next read finds are taken as opened before it (`DataStallDetector.startAfresh`);
    /// no stalls and no estimates (the link may be another one now), when that is a change.
    mutating func startAfresh() -> Findings {
        detector.startAfresh()
        estimator.reset()
        return changed([:], [:])
    }

    private mutating func changed(_ stalls: [Int32: DataStall], _ quality: [Int32: LinkQualityEstimate]) -> Findings {
        var findings = Findings()
        if stalls != published.stalls { findings.stalls = stalls }
        if quality != published.quality { findings.linkQuality = quality }
        published = (stalls, quality)
        return findings
    }
}
