import NIOCore
import ReachSystemd
import SystemPackage

/// What the event loop needs of a system-bus watch to run it: its socket, what sd-bus waits
/// for on it, its next deadline, and a step that handles what arrived and what is due.
protocol LoopDrivenWatch: AnyObject {
    /// The bus connection's socket.
    var descriptor: SystemPackage.FileDescriptor { get }
    /// The poll events sd-bus waits for.
    var events: Int16 { get }
    /// How long the watch may wait for its socket; nil for as long as it takes.
    func timeout(now: ContinuousClock.Instant) -> Duration?
    /// Handles what arrived and what is due; false once the watch is over.
    func process(now: ContinuousClock.Instant) -> Bool
}

extension NetworkManagerWatch: LoopDrivenWatch {}

extension LogindWatch: LoopDrivenWatch {
    func timeout(now: ContinuousClock.Instant) -> Duration? { timeout }
    func process(now: ContinuousClock.Instant) -> Bool { process() }
}

/// Runs a `LoopDrivenWatch` on the event loop: `LoopReadiness` says when its socket is
/// ready, a scheduled task when its deadline is due; after each step it is watched again
/// for what sd-bus wants next. Lives on the event loop.
final class BusWatchDriver<Watch: LoopDrivenWatch> {
    /// The watch it runs.
    let watch: Watch
    private let eventLoop: any EventLoop
    private var readiness: LoopReadiness?
    /// When the watch must run if its socket stays quiet.
    private var timer: Scheduled<Void>?
    private let ended: () -> Void

    /// Starts running `watch`. `ended`: the watch said it is over; `failed`: its socket
    /// cannot be watched any more. Throws when it cannot be watched at all.
    init(_ watch: Watch, eventLoop: any EventLoop, ended: @escaping () -> Void, failed: @escaping (any Error) -> Void) throws {
        self.watch = watch
        self.eventLoop = eventLoop
        self.ended = ended
        readiness = try LoopReadiness(watch.descriptor, eventLoop: eventLoop, ready: { [weak self] _ in self?.step() }, failed: failed)
        arm()
    }

    /// Stops watching; the watch itself is its owner's to close.
    func close() {
        timer?.cancel()
        timer = nil
        readiness?.close()
        readiness = nil
    }

    private func step() {
        guard readiness != nil else { return }
        guard watch.process(now: .now) else { return ended() }
        arm()
    }

    private func arm() {
        guard let readiness else { return }
        readiness.request(watch.events)
        timer?.cancel()
        timer = watch.timeout(now: .now).map { wait in
            eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(wait)) { [weak self] in self?.step() }
        }
    }
}
