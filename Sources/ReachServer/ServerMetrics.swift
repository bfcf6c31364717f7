import Glibc
import Logging
import NIOCore
import ReachabilityCore
import ReachMetrics
import ReachSystemd
import Synchronization

/// A wake from sleep: when (seconds since the epoch) and after how long asleep.
struct SleepWake: Equatable {
    /// When the machine woke, seconds since the epoch.
    var at: Double
    /// How long it slept.
    var asleep: Duration
}

/// What the metrics say beyond the publication (when the path last changed, the engine's
/// counters) and where they go: the endpoint's listening socket and the textfile rewritten
/// on every change. On the event loop only.
final class ServerMetrics {
    /// What the engine counts (netlink events, resyncs).
    let counters: DaemonCounters
    /// When the path last changed (or the server started), seconds since the epoch.
    private(set) var lastChange = ServerMetrics.wallClockSeconds()
    /// The metrics endpoint's listening socket, when `[metrics] listen` is set.
    var channel: (any Channel)?
    /// Where `reachd.prom` is written on every change, when `[metrics] textfile-directory` is set.
    var textfileDirectory: String?
    private let logger: Logger
    private var logLimiter = LogLimiter()

    init(counters: DaemonCounters, logger: Logger) {
        self.counters = counters
        self.logger = logger
    }

    /// Wakes from sleep seen so far, and the last one.
    private(set) var wakes: (count: Int, last: SleepWake?) = (0, nil)

    /// The path changed now.
    func pathChanged() {
        lastChange = Self.wallClockSeconds()
    }

    /// The machine woke now after sleeping `asleep`; returns the wake as published.
    func woke(after asleep: Duration) -> SleepWake {
        let wake = SleepWake(at: Self.wallClockSeconds(), asleep: asleep)
        wakes = (wakes.count + 1, wake)
        return wake
    }

    /// The facts to render, given what the server holds now.
    func facts(
        state: ReachabilityState, sequence: Int, subscribers: Int, refusals: [RefusalReason: Int], probing: Bool
    ) -> MetricsFacts {
        var facts = MetricsFacts(
            state: state, sequence: sequence, lastChange: lastChange, subscribers: subscribers, refusals: refusals,
            netlinkEvents: counters.netlinkEvents.load(ordering: .relaxed),
            resyncs: [
                "lost-events": counters.resyncsAfterLostEvents.load(ordering: .relaxed),
                "receive-failure": counters.resyncsAfterReceiveFailure.load(ordering: .relaxed),
            ],
            probing: probing
        )
        facts.wakes = wakes.count
        facts.lastWake = wakes.last.map { ($0.at, Double($0.asleep.components.seconds)) }
        return facts
    }

    /// Replaces the textfile with `text`, if one is configured (`text` is built only then).
    /// A failure is logged (rate-limited) and the next change tries again.
    func writeTextfile(_ text: () -> String) {
        guard let directory = textfileDirectory else { return }
        do {
            try MetricsTextfile.write(text(), to: directory)
        } catch {
            let (allowed, suppressed) = logLimiter.allow("metrics textfile", now: .now)
            guard allowed else { return }
            let more = suppressed > 0 ? " (\(suppressed) more since the last such line)" : ""
            logger.warning("cannot write \(directory)/\(MetricsTextfile.name): \(error)\(more)")
        }
    }

    private static func wallClockSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
