import Foundation
import Glibc
import Logging
import NetlinkMonitor
import ReachabilityCore
import Synchronization

/// Settings the engine needs to watch the network.
public struct EngineConfiguration: Sendable {
    /// Where sysfs is mounted (tests point this at fixture trees).
    public var sysfsRoot: String = "/sys"
    /// The resolver configuration read for `supportsDNS`.
    public var resolvConfPath: String = "/etc/resolv.conf"
    /// systemd-resolved's upstream list, consulted when resolv.conf names only the stub.
    public var resolvedUpstreamPath: String = "/run/systemd/resolve/resolv.conf"
    /// Netlink receive buffer; generous so floods rarely overflow (DESIGN.md rule 4).
    public var receiveBufferSize: Int = 8 << 20
    /// Interface policy in force.
    public var policy: InterfacePolicy = InterfacePolicy()

    /// Creates the default configuration.
    public init() {}
}

/// Why the engine could not start.
public struct EngineError: Error, CustomStringConvertible {
    /// What went wrong, for the log and the exit message.
    public var description: String
}

/// The one owner of the network state.
///
/// A dedicated thread blocks in `poll(2)` on the rtnetlink event socket, the resolver
/// watcher and a wake-up pipe — nothing else, and no timeout unless the systemd
/// watchdog asks for pings, so an idle daemon never wakes up. When netlink is readable it
/// drains everything queued, evaluates once (two FIB lookups), and hands a new
/// `ReachabilityState` to `onChange` only if the snapshot differs from the last one
/// (DESIGN.md rule 5). The first change after quiet goes out at once: there is no debounce.
public final class ReachabilityEngine: Sendable {
    private struct Mailbox {
        var stopRequested = false
        var pendingPolicy: InterfacePolicy?
    }

    private let configuration: EngineConfiguration
    private let logger: Logger
    private let notifier: SystemdNotifier
    private let onChange: @Sendable (ReachabilityState) -> Void
    private let mailbox = Mutex(Mailbox())
    /// Self-pipe: other threads write a byte to wake the engine's poll.
    private let wakePipe: (read: Int32, write: Int32)
    private let lifecycle = Mutex(Lifecycle.running)
    /// Signalled once when the engine thread has left its loop.
    private let exited = DispatchSemaphore(value: 0)

    private enum Lifecycle {
        case running
        case stopping
        case exited
    }

    /// Creates an engine; `onChange` is called on the engine thread for every changed state.
    public init(
        configuration: EngineConfiguration, logger: Logger, notifier: SystemdNotifier = SystemdNotifier(),
        onChange: @escaping @Sendable (ReachabilityState) -> Void
    ) {
        self.configuration = configuration
        self.logger = logger
        self.notifier = notifier
        self.onChange = onChange
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        wakePipe = (fds[0], fds[1])
    }

    deinit {
        close(wakePipe.read)
        close(wakePipe.write)
    }

    /// Starts the engine thread and returns the first derived state, once the kernel has
    /// been dumped and looked up: nothing is published before the answer is known.
    /// Blocks the caller until then (a few milliseconds).
    public func start() throws(EngineError) -> ReachabilityState {
        let firstStateReady = DispatchSemaphore(value: 0)
        let first = Mutex<Result<ReachabilityState, EngineError>?>(nil)
        let thread = Thread { [self] in
            // Linux threads inherit the creator's name; name this one for `top -H` and gdb.
            Thread.current.name = "reachd-engine"
            self.run(firstState: { result in
                first.withLock { $0 = result }
                firstStateReady.signal()
            })
        }
        thread.start()
        firstStateReady.wait()
        return try first.withLock { $0! }.get()
    }

    /// Replaces the interface policy; the engine re-evaluates with it.
    public func apply(policy: InterfacePolicy) {
        mailbox.withLock { $0.pendingPolicy = policy }
        wake()
    }

    /// Asks the engine thread to exit and waits until it has.
    public func stop() {
        let running = lifecycle.withLock { state -> Bool in
            guard case .running = state else { return false }
            state = .stopping
            return true
        }
        guard running else { return }
        mailbox.withLock { $0.stopRequested = true }
        wake()
        exited.wait()
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)
    }

    // MARK: - Engine thread

    private func run(firstState: (Result<ReachabilityState, EngineError>) -> Void) {
        let monitor: NetlinkMonitor
        do {
            monitor = try NetlinkMonitor(sysfsRoot: configuration.sysfsRoot, receiveBufferSize: configuration.receiveBufferSize)
            try monitor.start()
        } catch {
            firstState(.failure(EngineError(description: "cannot watch the kernel's network state: \(error)")))
            markExited()
            return
        }
        let resolver = ResolverWatcher(
            resolvConfPath: configuration.resolvConfPath, resolvedUpstreamPath: configuration.resolvedUpstreamPath
        )
        var policy = configuration.policy
        var snapshot = Self.evaluate(monitor, resolver)
        firstState(.success(ReachabilityState(snapshot: snapshot, policy: policy)))

        let watchdogInterval = notifier.watchdogIntervalMicroseconds.map { Int32(clamping: $0 / 2 / 1000) }
        var lastPing = Self.monotonicMilliseconds()
        var fds = [
            pollfd(fd: monitor.eventDescriptor.rawValue, events: Int16(POLLIN), revents: 0),
            pollfd(fd: resolver.fileDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let ready = poll(&fds, nfds_t(fds.count), watchdogInterval ?? -1)
            if ready < 0 && errno != EINTR {
                logger.critical("poll failed: \(String(cString: strerror(errno)))")
                break
            }
            var dirty = false
            var policyChanged = false
            if fds[2].revents != 0 {
                var buffer = [UInt8](repeating: 0, count: 64)
                while read(wakePipe.read, &buffer, buffer.count) > 0 {}
                let (stop, newPolicy) = mailbox.withLock { box in
                    defer { box.pendingPolicy = nil }
                    return (box.stopRequested, box.pendingPolicy)
                }
                if stop { break }
                if let newPolicy, newPolicy != policy {
                    policy = newPolicy
                    policyChanged = true
                }
            }
            if fds[0].revents != 0 {
                do {
                    dirty = try monitor.drain().changed || dirty
                } catch {
                    // A socket error we cannot read past: log it and resynchronise by
                    // starting over, rather than serving a stale answer.
                    logger.error("netlink receive failed: \(error); resynchronising")
                    dirty = (try? monitor.resynchronize()) != nil || dirty
                }
            }
            if fds[1].revents != 0 && resolver.refresh() { dirty = true }
            if dirty || policyChanged {
                let next = Self.evaluate(monitor, resolver)
                if next != snapshot || policyChanged {
                    snapshot = next
                    onChange(ReachabilityState(snapshot: snapshot, policy: policy))
                }
            }
            if let watchdogInterval {
                // Pinged from this loop itself: if the loop is stuck, systemd restarts us.
                let now = Self.monotonicMilliseconds()
                if now - lastPing >= Int64(watchdogInterval) {
                    notifier.watchdog()
                    lastPing = now
                }
            }
        }
        markExited()
    }

    private func markExited() {
        lifecycle.withLock { $0 = .exited }
        exited.signal()
    }

    private static func evaluate(_ monitor: NetlinkMonitor, _ resolver: ResolverWatcher) -> NetworkSnapshot {
        var snapshot = monitor.snapshot()
        snapshot.hasNameserver = resolver.hasNameserver
        return snapshot
    }

    private static func monotonicMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
