import Logging
import NIOCore
import ReachConnectivity
import ReachSystemd
import ReachTargets

/// What the server hands work to and passes around, none of it the server's own state:
/// the threads for blocking calls, name resolution, connectivity probes and systemd's
/// notify socket. Built on the server's event loop; stopped with it.
struct ServerServices {
    /// Every blocking call made for the loop, each on a thread of its own, fairly per uid.
    let blockingWork: BlockingWork
    /// Resolves target names off the loop (for targets and connectivity probes).
    let resolver: NameResolver
    /// Connectivity probes and captive-portal APIs; what they find is published.
    let connectivity: ConnectivityMonitor
    /// systemd's notify socket: `READY=1`, `STATUS=`, the watchdog.
    let notifier: SystemdNotifier
    /// logind's sleep and wake, with the delay inhibitor held while awake.
    let sleep: SleepSource

    /// The services `settings` ask for, on `eventLoop`.
    init(settings: ServerSettings, eventLoop: any EventLoop, logger: Logger, notifier: SystemdNotifier) {
        blockingWork = BlockingWork(eventLoop: eventLoop)
        resolver = NameResolver(eventLoop: eventLoop, work: blockingWork, resolvedSocket: settings.resolvedSocket)
        connectivity = ConnectivityMonitor(
            settings: settings.connectivity, eventLoop: eventLoop, logger: logger, resolver: resolver, work: blockingWork,
            probeTLS: settings.probeTLS, apiTLS: settings.apiTLS
        )
        self.notifier = notifier
        sleep = SleepSource(eventLoop: eventLoop, logger: logger)
    }
}
