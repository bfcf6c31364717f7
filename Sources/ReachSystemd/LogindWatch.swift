import Glibc
import LinuxSystem
import Logging
import SystemPackage

/// Follows logind's `PrepareForSleep` over the system bus and holds a delay inhibitor while
/// awake, so the daemon can pause before the system sleeps (`LogindSleep` decides). Nothing is
/// asked while logind is not on the bus. It never waits: its owner (the event loop, through
/// `LoopReadiness`) runs `process` when `descriptor` is ready for `events` or `timeout`
/// passed, and every call is asynchronous. The connection is its owner's thread's alone.
package final class LogindWatch {
    private static let service = "org.freedesktop.login1"
    /// The signal, from logind's name, and its name's owner changes.
    private static let matchRules = [
        "type='signal',sender='org.freedesktop.login1',interface='org.freedesktop.login1.Manager',member='PrepareForSleep',path='/org/freedesktop/login1'",
        "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',path='/org/freedesktop/DBus',arg0='org.freedesktop.login1'",
    ]

    private let bus: SystemBus
    private let logger: Logger
    private let tell: (Bool) -> Void
    private var sleep = LogindSleep()
    /// The questions asked, by the cookie of their call.
    private var asked: [UInt64: LogindSleep.Question] = [:]
    private var isOver = false

    /// Starts connecting to the system bus and asks for logind's owner, without waiting;
    /// `tell` hears during `process` (or `close`) that the system is about to sleep (true) or
    /// woke (false). Nil, with the reason logged, when there is no system bus.
    package init?(logger: Logger, tell: @escaping (Bool) -> Void) {
        do {
            bus = try SystemBus()
            for rule in Self.matchRules { try bus.addMatch(rule) }
        } catch {
            logger.debug("no system bus: logind's sleep is not followed", metadata: ["reason": "\(error)"])
            return nil
        }
        (self.logger, self.tell) = (logger, tell)
        // Queued behind the match rules, so no owner change after the answer is missed.
        perform(sleep.start())
    }

    // An inhibitor still held goes with the watch.
    deinit { if let descriptor = sleep.inhibitor { Glibc.close(descriptor) } }

    /// The connection's descriptor, to watch for `events`.
    package var descriptor: FileDescriptor { FileDescriptor(rawValue: bus.descriptor) }

    /// What to watch the descriptor for (`POLLIN`, and `POLLOUT` while writes are queued).
    package var events: Int16 { bus.events }

    /// How long `process` may wait for the descriptor (a call's deadline); nil for as long as it takes.
    package var timeout: Duration? { bus.timeoutMilliseconds.map { .milliseconds($0) } }

    /// Handles what arrived. False once the watch is over (the connection closed, said in the log).
    package func process() -> Bool {
        var drained = false
        while !drained, !isOver {
            let pending: SystemBus.Pending
            do {
                pending = try bus.processPending()
            } catch {
                end(error)
                return false
            }
            for arrival in pending.arrivals where !isOver {
                switch arrival {
                case let .signal(signal): perform(handle(signal))
                case let .reply(cookie, reply):
                    guard let question = asked.removeValue(forKey: cookie) else { continue }
                    perform(sleep.answered(question, with: Self.answer(reply, to: question)))
                }
            }
            drained = pending.drained
        }
        return !isOver
    }

    /// The daemon paused its work for the sleep: the inhibitor is released now.
    package func paused() { perform(sleep.paused()) }

    /// Ends the watch: the inhibitor is released; nothing more is heard, except, with
    /// `resume`, that the system woke when the daemon paused for a sleep.
    package func close(resume: Bool = false) {
        guard !isOver else { return }
        isOver = true
        asked = [:]
        for action in sleep.closed() {
            switch action {
            case let .release(descriptor): release(descriptor)
            case .awake where resume: tell(false)
            default: break
            }
        }
    }

    private func handle(_ signal: SystemBus.Message) -> [LogindSleep.Action] {
        if signal.isSignal(interface: "org.freedesktop.DBus", member: "NameOwnerChanged") {
            // The bus driver's alone: one sent to reachd directly says nothing.
            guard signal.sender == "org.freedesktop.DBus", (try? signal.readString()) == Self.service,
                  (try? signal.readString()) != nil, let owner = try? signal.readString()
            else { return [] }
            return sleep.ownerChanged(to: owner)
        }
        guard signal.isSignal(interface: "org.freedesktop.login1.Manager", member: "PrepareForSleep"),
              signal.path == "/org/freedesktop/login1", let sleeping = try? signal.readBool()
        else { return [] }
        return sleep.prepareForSleep(sleeping, from: signal.sender ?? "")
    }

    private func perform(_ actions: [LogindSleep.Action]) {
        for action in actions {
            switch action {
            case let .ask(question):
                guard !isOver else { continue }
                do {
                    asked[try send(question)] = question
                } catch {
                    end(error)
                }
            case let .release(descriptor):
                release(descriptor)
            case .sleeping:
                logger.info("logind says the system is about to sleep")
                tell(true)
            case .awake:
                logger.info("the system woke")
                tell(false)
            case .inhibited:
                logger.debug("took logind's delay inhibitor for sleep")
            case .absent:
                logger.debug("logind is not on the system bus: no sleep inhibitor is taken")
            case let .refused(reason):
                logger.notice("logind refused a delay inhibitor: sleep is followed without one", metadata: ["reason": "\(reason)"])
            case let .notPermitted(reason):
                // Without polkit logind lets only root inhibit; with it, 50-reachd.rules allows reachd.
                logger.info("logind's policy gives reachd no delay inhibitor (no polkit?): sleep is followed without one")
                logger.debug("logind's answer to Inhibit", metadata: ["reason": "\(reason)"])
            case let .ignored(sender):
                logger.debug("ignored a PrepareForSleep not from logind", metadata: ["sender": "\(sender)"])
            }
        }
    }

    private func release(_ descriptor: Int32) {
        Glibc.close(descriptor)
        logger.debug("released logind's delay inhibitor")
    }

    private func send(_ question: LogindSleep.Question) throws(SystemBus.Failure) -> UInt64 {
        switch question {
        case .owner:
            return try bus.send(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                                member: "GetNameOwner", arguments: [Self.service])
        case let .inhibit(owner):
            // To the unique name: the inhibitor is that logind's.
            return try bus.send(destination: owner, path: "/org/freedesktop/login1", interface: "org.freedesktop.login1.Manager",
                                member: "Inhibit", arguments: ["sleep", "reachd", "pausing probes and the stall watch", "delay"])
        }
    }

    private static func answer(_ reply: SystemBus.Message, to question: LogindSleep.Question) -> LogindSleep.Answer {
        if let failure = reply.failure {
            if question == .owner && failure.name == "org.freedesktop.DBus.Error.NameHasNoOwner" { return .owner(nil) }
            let policy = ["org.freedesktop.DBus.Error.AccessDenied", "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"]
            return policy.contains(failure.name) ? .denied("\(failure)") : .failed("\(failure)")
        }
        do {
            switch question {
            case .owner: return .owner(try reply.readString())
            case .inhibit: return .inhibitor(try reply.readFileDescriptor())
            }
        } catch {
            return .failed("\(error)")
        }
    }

    /// The connection is gone: said once, the inhibitor released, a paused daemon resumed.
    private func end(_ error: SystemBus.Failure) {
        logger.notice("the system bus connection closed: logind's sleep is no longer followed", metadata: ["reason": "\(error)"])
        isOver = true
        asked = [:]
        perform(sleep.closed())
    }
}
