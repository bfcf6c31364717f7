import NIOCore
import ReachabilityCore

/// The one way to ask the engine, the thread that owns the kernel view: post a command.
/// The engine's mailbox conforms; tests script stand-ins. Callable from any thread.
package protocol EngineRequests: Sendable {
    /// Queues `command` for the engine; a command it will never carry out is abandoned
    /// (`EngineCommand.abandon`), so no promise is dropped.
    func post(_ command: EngineCommand)
}

/// What other threads may ask of the engine. A command that wants an answer carries it.
package enum EngineCommand: Sendable, Equatable {
    /// Something the daemon cannot live without failed: stop with this reason.
    case fail(String)
    /// The event loop reloaded the configuration: the interface policy now in force; the
    /// resolver files are read again too.
    case reloaded(policy: InterfacePolicy)
    /// A client asked about target addresses: look them up now.
    case lookUpTargets([TargetKey], reply: EventLoopPromise<[TargetLookup]>)
    /// Target addresses to look up with every snapshot from now on (counted: a key asked
    /// for twice must be released twice), and ones no longer wanted.
    case monitorTargets(add: [TargetKey], remove: [TargetKey])
    /// Whether someone listens for stalls (a subscriber, the metrics): the TCP sockets are
    /// read while someone does and the path is satisfied.
    case someoneListens(Bool)
    /// The RFC 7050 query on this link came back (`EngineAction.askDNS64`).
    case dns64Answered(Int32, DNS64Discovery.Answer)
    /// logind said the machine is about to sleep (true) or woke (false).
    case systemSleeps(Bool)

    /// Answers a command the engine will never carry out (it stopped): a lookup fails, so
    /// no client waits forever and no promise is dropped.
    package func abandon() {
        switch self {
        case let .lookUpTargets(_, reply): reply.fail(EngineStopped())
        case .fail, .reloaded, .monitorTargets, .someoneListens, .dns64Answered, .systemSleeps: break
        }
    }
}

/// The engine stopped before it could answer.
package struct EngineStopped: Error {}

/// How a reload ended: what `io.systemd.service.Reload` answers and systemd is told.
package enum ReloadOutcome: Sendable, Equatable {
    /// The configuration was read and what may change while running was applied.
    case applied
    /// The configuration could not be used (the reason, one line); the running one is kept.
    case refused(String)
}

/// What the engine tells the event loop. Each crosses in one hop (`VarlinkServer.deliver`)
/// and is handled there: the loop holds everything published and the configuration.
package enum EngineEvent: Sendable {
    /// The kernel view changed, or may have: the loop decides whether the answer did.
    case snapshot(NetworkSnapshot)
    /// The interfaces whose TCP traffic is stalled changed: each stalled one, since when and
    /// on what evidence.
    case stalls([Int32: DataStall])
    /// The link-quality estimates changed: every interface's after a read of the sockets.
    case linkQuality([Int32: LinkQualityEstimate])
    /// Time to ping the systemd watchdog (only when it asked for pings); pinged from the
    /// loop, so a ping proves the loop alive too.
    case watchdogDue
    /// SIGHUP: reload the configuration.
    case reloadRequested
    /// An event in the socket's directory named the socket file (or named nothing): put it
    /// back if it was deleted.
    case socketFileMayBeGone
    /// The machine woke after sleeping this long: probe again, re-read what sources outside
    /// the kernel said, and say so (`EngineMachine`'s `SleepWatch` decides).
    case woke(after: Duration)
    /// Run `body` (the DNS64 query) where the loop's other blocking work runs, or `dropped`
    /// when it never runs.
    case runBlocking(@Sendable () -> Void, dropped: @Sendable () -> Void)
}
