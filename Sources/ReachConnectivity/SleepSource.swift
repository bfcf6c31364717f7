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
    private var watch: (bus: LogindWatch, readiness: LoopReadiness)?
    /// When the watch must run if its socket stays quiet.
    private var timer: Scheduled<Void>?
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
        guard watch == nil else { return }
        guard let bus = LogindWatch(logger: logger, tell: { [weak self] in self?.told($0) }) else { return }
        do {
            let readiness = try LoopReadiness(bus.descriptor, eventLoop: eventLoop, ready: { [weak self] _ in self?.step() },
                                              failed: { [weak self] in self?.lost($0) })
            watch = (bus, readiness)
        } catch {
            bus.close()
            logger.error("the system bus cannot be watched: logind's sleep is not followed", metadata: ["reason": "\(error)"])
            return
        }
        arm()
    }

    /// Ends the watch and releases the inhibitor; nothing more is heard.
    package func stop() {
        timer?.cancel()
        timer = nil
        watch?.readiness.close()
        watch?.bus.close()
        watch = nil
    }

    /// The daemon paused its work for the sleep: the inhibitor is released now, so logind goes on.
    package func paused() { watch?.bus.paused() }

    private func told(_ sleeping: Bool) { onSleep(sleeping) }

    /// The socket is ready or a deadline passed: the watch handles it, then is watched again.
    private func step() {
        guard let bus = watch?.bus else { return }
        guard bus.process() else { return stop() }
        arm()
    }

    /// Watches the socket for what sd-bus wants next, and schedules the call's deadline.
    private func arm() {
        guard let watch else { return }
        watch.readiness.request(watch.bus.events)
        timer?.cancel()
        timer = watch.bus.timeout.map { wait in
            eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(wait)) { [weak self] in self?.step() }
        }
    }

    private func lost(_ error: any Error) {
        logger.error("the system bus cannot be watched: logind's sleep is no longer followed", metadata: ["reason": "\(error)"])
        // A daemon paused for a sleep resumes: nothing will say the system woke.
        watch?.bus.close(resume: true)
        stop()
    }
}
