import Logging
import NIOCore
import ReachSystemd

/// logind's word that the system is about to sleep or woke: a `LogindWatch` on the system
/// bus, run on the event loop (`LoopReadiness` says when its socket is ready, a scheduled
/// task when a call's deadline is due), holding a delay inhibitor while awake. Lives on the
/// event loop.
package final class SleepSource {
    private let eventLoop: any EventLoop
    private let logger: Logger
    /// Running from `start()` until `stop()` or its connection ends.
    private var driver: BusWatchDriver<LogindWatch>?
    /// Called on the loop: true when the system is about to sleep (call `paused()` once the
    /// work is paused), false when it woke or logind can no longer say.
    package var onSleep: (Bool) -> Void = { _ in }

    /// A source that follows logind once started.
    package init(eventLoop: any EventLoop, logger: Logger) {
        self.eventLoop = eventLoop
        self.logger = logger
    }

    /// Starts following logind and takes its inhibitor, when the system bus is there.
    package func start() {
        guard driver == nil else { return }
        guard let bus = LogindWatch(logger: logger, tell: { [weak self] in self?.onSleep($0) }) else { return }
        do {
            driver = try BusWatchDriver(bus, eventLoop: eventLoop, ended: { [weak self] in self?.stop() }, failed: { [weak self] in self?.lost($0) })
        } catch {
            bus.close()
            logger.error("the system bus cannot be watched: logind's sleep is not followed", metadata: ["reason": "\(error)"])
        }
    }

    /// Ends the watch and releases the inhibitor; nothing more is heard.
    package func stop() {
        driver?.close()
        driver?.watch.close()
        driver = nil
    }

    /// The daemon paused its work for the sleep: the inhibitor is released now, so logind goes on.
    package func paused() { driver?.watch.paused() }

    private func lost(_ error: any Error) {
        logger.error("the system bus cannot be watched: logind's sleep is no longer followed", metadata: ["reason": "\(error)"])
        // A daemon paused for a sleep resumes: nothing will say the system woke.
        driver?.watch.close(resume: true)
        stop()
    }
}
