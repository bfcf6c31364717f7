import Logging
import NIOCore
import ReachabilityCore
import ReachSystemd

/// NetworkManager's word on its devices (`[network-manager] read`): a `NetworkManagerWatch`
/// on the system bus, run on the event loop (`LoopReadiness` says when its socket is ready, a
/// scheduled task when a call's deadline or a read is due), whose answers it keeps by
/// interface name. Lives on the event loop.
final class NetworkManagerSource {
    /// `[network-manager] read`.
    private let isEnabled: Bool
    private let eventLoop: any EventLoop
    private let logger: Logger
    /// Running from `start()` until `stop()` or its connection ends.
    private var watch: (bus: NetworkManagerWatch, readiness: LoopReadiness)?
    /// When the watch must run if its socket stays quiet.
    private var timer: Scheduled<Void>?
    /// What NetworkManager said last of its devices, by interface name.
    private(set) var devices: [String: NetworkManagerDevice] = [:]
    /// Called on the loop after each answer of the watch.
    var onChange: () -> Void = {}

    /// A source that follows NetworkManager once started, when `isEnabled`.
    init(isEnabled: Bool, eventLoop: any EventLoop, logger: Logger) {
        self.isEnabled = isEnabled
        self.eventLoop = eventLoop
        self.logger = logger
    }

    /// Starts following NetworkManager, when enabled and the system bus is there.
    func start() {
        guard isEnabled, watch == nil else { return }
        guard let bus = NetworkManagerWatch(logger: logger, deliver: { [weak self] in self?.apply($0) }) else { return }
        do {
            let readiness = try LoopReadiness(bus.descriptor, eventLoop: eventLoop, ready: { [weak self] _ in self?.step() },
                                              failed: { [weak self] in self?.lost($0) })
            watch = (bus, readiness)
        } catch {
            lost(error)
            return
        }
        arm()
    }

    /// Ends the watch; an answer on its way is dropped.
    func stop() {
        timer?.cancel()
        timer = nil
        watch?.readiness.close()
        watch = nil
    }

    private func apply(_ devices: [String: NetworkManagerDevice]) {
        guard watch != nil else { return }  // stopped meanwhile
        self.devices = devices
        onChange()
    }

    /// The socket is ready or a deadline passed: the watch handles it, then is watched again.
    private func step() {
        guard let bus = watch?.bus else { return }
        guard bus.process() else { return stop() }
        arm()
    }

    /// Watches the socket for what sd-bus wants next, and schedules the watch's deadline.
    private func arm() {
        guard let watch else { return }
        watch.readiness.request(watch.bus.events)
        timer?.cancel()
        timer = watch.bus.timeout(now: .now).map { wait in
            eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(wait)) { [weak self] in self?.step() }
        }
    }

    private func lost(_ error: any Error) {
        logger.error("the system bus cannot be watched: NetworkManager is no longer read", metadata: ["reason": "\(error)"])
        stop()
    }
}
