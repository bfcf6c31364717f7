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
    private var driver: BusWatchDriver<NetworkManagerWatch>?
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
        guard isEnabled, driver == nil else { return }
        guard let bus = NetworkManagerWatch(logger: logger, deliver: { [weak self] in self?.apply($0) }) else { return }
        do {
            driver = try BusWatchDriver(bus, eventLoop: eventLoop, ended: { [weak self] in self?.stop() }, failed: { [weak self] in self?.lost($0) })
        } catch {
            lost(error)
        }
    }

    /// Ends the watch; an answer on its way is dropped.
    func stop() {
        driver?.close()
        driver = nil
    }

    private func apply(_ devices: [String: NetworkManagerDevice]) {
        guard driver != nil else { return }  // stopped meanwhile
        self.devices = devices
        onChange()
    }

    private func lost(_ error: any Error) {
        logger.error("the system bus cannot be watched: NetworkManager is no longer read", metadata: ["reason": "\(error)"])
        stop()
    }
}
