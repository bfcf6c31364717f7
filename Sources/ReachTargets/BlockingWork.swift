import LinuxSystem
import NIOCore

/// Where every blocking call of the event loop's side runs (names, probes' TLS chains,
/// networkd's answers, lease and hosts files) and the engine's DNS64 query: each on a
/// detached thread of its own, started when `BlockingSchedule` gives its owner a turn; the
/// only place reachd starts a thread. Owned by the event loop: every method runs there.
package final class BlockingWork {
    /// One piece of work, from `submit` until it finished or was dropped.
    package typealias Ticket = Int

    /// `run`'s failure: the work never ran (its caller gave up while it waited, the work
    /// was shut down, or the system had no thread for it).
    package struct NotRun: Error, Equatable {}

    private let eventLoop: any EventLoop
    private var schedule: BlockingSchedule
    /// Queued work: how to start it, and how to tell its caller it never ran.
    private var queued: [Ticket: (start: () -> Void, drop: () -> Void)] = [:]
    private var lastTicket = 0
    private var isShutDown = false

    /// Work scheduled on `eventLoop`, within `limits`.
    package init(eventLoop: any EventLoop, limits: BlockingSchedule.Limits = .init()) {
        self.eventLoop = eventLoop
        self.schedule = BlockingSchedule(limits: limits)
    }

    /// Runs `body` for `owner` on a thread of its own once the owner's share allows;
    /// `completion` gets its value on the loop, or nil when it never ran. Never calls
    /// `completion` before returning.
    @discardableResult
    package func submit<Value: Sendable>(
        for owner: WorkOwner, _ body: @escaping @Sendable () -> Value, completion: @escaping (Value?) -> Void
    ) -> Ticket {
        lastTicket += 1
        let ticket = lastTicket
        let loop = eventLoop
        let done = NIOLoopBound(completion, eventLoop: loop)
        guard !isShutDown else {
            loop.execute { done.value(nil) }
            return ticket
        }
        let work = NIOLoopBound(self, eventLoop: loop)
        queued[ticket] = (
            start: {
                let started = DetachedThread.start {
                    let value = body()
                    loop.execute {
                        work.value.finished(ticket)
                        done.value(value)
                    }
                }
                if !started {
                    loop.execute {
                        work.value.finished(ticket)
                        done.value(nil)
                    }
                }
            },
            drop: { loop.execute { done.value(nil) } }
        )
        perform(schedule.enqueue(ticket, owner: owner))
        return ticket
    }

    /// `submit` as a future; it fails with `NotRun` when the work never ran.
    package func run<Value: Sendable>(for owner: WorkOwner = .daemon, _ body: @escaping @Sendable () -> Value) -> EventLoopFuture<Value> {
        let promise = eventLoop.makePromise(of: Value.self)
        submit(for: owner, body) { value in
            if let value { promise.succeed(value) } else { promise.fail(NotRun()) }
        }
        return promise.futureResult
    }

    /// The caller of `ticket` stopped waiting: queued work is dropped (its completion gets
    /// nil); running work keeps its thread, counted in its owner's share, until it returns.
    package func callerGaveUp(_ ticket: Ticket) {
        perform(schedule.callerGaveUp(ticket))
    }

    /// A caller waits again for running work whose caller gave up; false if it is not running.
    package func callerReturned(_ ticket: Ticket) -> Bool {
        schedule.callerReturned(ticket)
    }

    /// Drops every queued piece and starts no more. Running work ends on its thread, and
    /// its completion still gets the value.
    package func shutdown() {
        isShutDown = true
        let dropped = queued
        queued = [:]
        for entry in dropped.values { entry.drop() }
    }

    private func finished(_ ticket: Ticket) {
        perform(schedule.finished(ticket))
    }

    private func perform(_ actions: [BlockingSchedule.Action]) {
        for action in actions {
            switch action {
            case let .start(ticket): queued.removeValue(forKey: ticket)?.start()
            case let .drop(ticket): queued.removeValue(forKey: ticket)?.drop()
            }
        }
    }
}
