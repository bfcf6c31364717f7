import Glibc
import LinuxSystem
import Logging
import NetlinkMonitor
import ReachabilityCore
import Synchronization
import SystemPackage

/// Settings the engine needs to watch the network.
public struct EngineConfiguration: Sendable, Equatable {
    /// Where sysfs is mounted (tests point this at fixture trees).
    public var sysfsRoot: String = "/sys"
    /// The resolver configuration read for `supportsDNS`.
    public var resolvConfPath: String = "/etc/resolv.conf"
    /// systemd-resolved's upstream list, consulted when resolv.conf names only the stub.
    public var resolvedUpstreamPath: String = "/run/systemd/resolve/resolv.conf"
    /// Netlink receive buffer; generous so floods rarely overflow (DESIGN.md rule 4).
    public var receiveBufferSize: Int = ReachdConfiguration.Netlink().receiveBufferSize

    /// Creates the default configuration.
    public init() {}
}

/// Why the engine could not start, or stopped for good.
public struct EngineError: Error, CustomStringConvertible {
    /// What went wrong, for the log and the exit message.
    public var description: String
}

/// What the engine hands its owner, on the engine thread.
public struct EngineEvents {
    /// The kernel view changed (or may have: the receiver decides whether anything did).
    public var publish: (NetworkSnapshot) -> Void
    /// SIGHUP arrived: reload the configuration.
    public var reload: () -> Void
    /// Time to ping the systemd watchdog (only when it asked for pings).
    public var watchdog: () -> Void

    /// Creates the set of callbacks.
    public init(publish: @escaping (NetworkSnapshot) -> Void, reload: @escaping () -> Void, watchdog: @escaping () -> Void) {
        self.publish = publish
        self.reload = reload
        self.watchdog = watchdog
    }
}

/// What other threads may ask of the engine.
public enum EngineCommand: Sendable, Equatable {
    /// Something the daemon cannot live without failed: stop with this reason.
    case fail(String)
}

/// The engine's inbox: any thread posts, the engine takes the commands when its doorbell
/// (an eventfd it polls) rings.
public final class EngineMailbox: Sendable {
    private let commands = Mutex<[EngineCommand]>([])
    let doorbell: EventDescriptor

    init() throws(Errno) {
        doorbell = try EventDescriptor()
    }

    /// Queues `command` and wakes the engine. Callable from any thread.
    public func post(_ command: EngineCommand) {
        commands.withLock { $0.append(command) }
        doorbell.ring()
    }

    /// Everything posted so far, oldest first.
    func take() -> [EngineCommand] {
        doorbell.reset()
        return commands.withLock { commands in
            defer { commands = [] }
            return commands
        }
    }
}

/// The owner of the kernel view.
///
/// It runs on the thread that calls `run` (reachd's main thread) and blocks in `poll(2)`
/// on the rtnetlink event socket, the resolver watch, the signal descriptor and its
/// mailbox: nothing else, and no timeout unless the watchdog or a retry needs one, so an
/// idle daemon makes no system calls at all. When netlink is readable it drains
/// everything queued, takes one snapshot (two FIB lookups) and hands it on; the event
/// loop decides whether the answer changed (DESIGN.md rule 5: no debounce, one
/// evaluation per drained batch). It never derives paths, formats JSON or talks to clients.
public final class ReachabilityEngine {
    private let monitor: NetlinkMonitor
    private let resolver: ResolverWatcher
    private let signals: SignalDescriptor
    private let logger: Logger
    /// Where the event loop posts commands.
    public let mailbox: EngineMailbox
    /// The latest kernel view: after `init`, the first one.
    public private(set) var snapshot: NetworkSnapshot

    /// Opens the netlink sockets, dumps the kernel's state and takes the first snapshot,
    /// so the answer is known before anyone can ask.
    ///
    /// - Parameter signals: the signals the engine takes (created before any other thread).
    public init(configuration: EngineConfiguration, signals: SignalDescriptor, logger: Logger) throws(EngineError) {
        do {
            monitor = try NetlinkMonitor(sysfsRoot: configuration.sysfsRoot, receiveBufferSize: configuration.receiveBufferSize)
            try monitor.start()
        } catch {
            throw EngineError(description: "cannot watch the kernel's network state: \(error)")
        }
        do {
            mailbox = try EngineMailbox()
        } catch {
            throw EngineError(description: "cannot create the engine's wake-up descriptor: \(error)")
        }
        resolver = ResolverWatcher(
            resolvConfPath: configuration.resolvConfPath, resolvedUpstreamPath: configuration.resolvedUpstreamPath, logger: logger
        )
        self.signals = signals
        self.logger = logger
        snapshot = NetworkSnapshot()
        snapshot = evaluate()
    }

    /// Watches until SIGTERM or SIGINT and returns that signal; SIGHUP calls `events.reload`.
    ///
    /// - Parameter watchdogInterval: how often to call `events.watchdog` (nil: never).
    /// - Throws: `EngineError` when it cannot go on: `poll` failed, netlink stayed broken
    ///   through every retry, or another thread posted `.fail`.
    public func run(_ events: EngineEvents, watchdogInterval: Duration?) throws(EngineError) -> Int32 {
        let clock = ContinuousClock()
        var polls = PollSet([monitor.eventDescriptor, signals.descriptor, mailbox.doorbell.descriptor]
            + (resolver.watch.map { [$0.descriptor] } ?? []))
        let (netlink, signal, commands, resolverFiles) = (0, 1, 2, 3)
        var backoff = RetryBackoff.netlinkResync
        var retryAt: ContinuousClock.Instant?
        var nextPing = watchdogInterval.map { clock.now + $0 }

        while true {
            // While a resync waits for its retry, netlink is left out: a broken socket would
            // poll readable at once and spin.
            polls.setEnabled(retryAt == nil, at: netlink)
            let wakeUp = [retryAt, nextPing].compactMap { $0 }.min()
            let ready: [Bool]
            do {
                ready = try polls.wait(timeoutMilliseconds: wakeUp.map { Self.milliseconds(from: clock.now, to: $0) })
            } catch {
                throw EngineError(description: "poll failed: \(error)")
            }

            if ready[signal] {
                while let number = try? signals.next() {
                    guard number == SIGHUP else { return number }
                    events.reload()
                }
            }
            if ready[commands] {
                for case let .fail(reason) in mailbox.take() { throw EngineError(description: reason) }
            }

            var dirty = false
            if ready[netlink] {
                do {
                    let outcome = try monitor.drain()
                    if outcome.resynchronizedAfterLostEvents {
                        logger.warning("netlink events were lost (receive buffer overflow): re-read links, addresses and default routes (resync #\(monitor.resyncCount))")
                    }
                    dirty = outcome.changed
                } catch {
                    logger.error("netlink receive failed: \(error); resynchronising")
                    retryAt = clock.now
                }
            }
            if let due = retryAt, clock.now >= due {
                do {
                    try monitor.resynchronize()
                    logger.notice("netlink resynchronised after a receive failure (resync #\(monitor.resyncCount))")
                    backoff.succeeded()
                    retryAt = nil
                    dirty = true
                } catch {
                    guard let delay = backoff.failed() else {
                        throw EngineError(description: "netlink stayed broken through \(backoff.attempts) retries: \(error)")
                    }
                    logger.error("netlink resync failed: \(error); retrying in \(delay)")
                    retryAt = clock.now + delay
                }
            }
            if ready.count > resolverFiles && ready[resolverFiles] && resolver.refresh() { dirty = true }

            if dirty {
                snapshot = evaluate()
                events.publish(snapshot)
            }
            if let interval = watchdogInterval, let due = nextPing, clock.now >= due {
                events.watchdog()
                nextPing = clock.now + interval
            }
        }
    }

    private func evaluate() -> NetworkSnapshot {
        var snapshot = monitor.snapshot()
        snapshot.hasNameserver = resolver.hasNameserver
        return snapshot
    }

    /// Milliseconds from `now` to `deadline` for `poll(2)`, rounded up so a wait never
    /// ends just before its deadline (which would cost an extra wake-up).
    static func milliseconds(from now: ContinuousClock.Instant, to deadline: ContinuousClock.Instant) -> Int32 {
        guard deadline > now else { return 0 }
        let (seconds, attoseconds) = (deadline - now).components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
    }
}
