import Logging
import NIOCore
import ReachabilityCore
import ReachSystemd

/// NetworkManager's word on its devices (`[network-manager] read`): a `NetworkManagerWatch`
/// on the system bus, whose answers it keeps by interface name. Lives on the event loop.
final class NetworkManagerSource {
    /// `[network-manager] read`.
    private let isEnabled: Bool
    private let eventLoop: any EventLoop
    private let logger: Logger
    /// Running from `start()` to `stop()`.
    private var watch: NetworkManagerWatch?
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
        guard let watch = try? NetworkManagerWatch(logger: logger) else { return }
        let (loop, source) = (eventLoop, NIOLoopBound(self, eventLoop: eventLoop))
        let started = watch.start { devices in
            loop.execute { source.value.apply(devices) }
        }
        if started { self.watch = watch }
    }

    private func apply(_ devices: [String: NetworkManagerDevice]) {
        guard watch != nil else { return }  // stopped meanwhile
        self.devices = devices
        onChange()
    }

    /// Ends the watch; an answer on its way is dropped.
    func stop() {
        watch?.stop()
        watch = nil
    }
}
