import Glibc
import Logging
import NIOCore
import ReachabilityCore
import ReachMetrics
import ReachSystemd
import Synchronization

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

    /// The path changed now.
    func pathChanged() {
        lastChange = Self.wallClockSeconds()
    }

    /// The facts to render, given what the server holds now.
    func facts(
        state: ReachabilityState, sequence: Int, subscribers: Int, refusals: [RefusalReason: Int], probing: Bool
    ) -> MetricsFacts {
        MetricsFacts(
            state: state, sequence: sequence, lastChange: lastChange, subscribers: subscribers, refusals: refusals,
            netlinkEvents: counters.netlinkEvents.load(ordering: .relaxed),
            resyncs: [
                "lost-events": counters.resyncsAfterLostEvents.load(ordering: .relaxed),
                "receive-failure": counters.resyncsAfterReceiveFailure.load(ordering: .relaxed),
            ],
            probing: probing
        )
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
