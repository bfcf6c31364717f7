import NIOCore
import ReachTargets

/// Reloads, one at a time: a request while one runs is carried out after it, and every
/// request that waited for that second read is answered by it (two SIGHUPs during a read
/// need one more read, not two). Pure; `ServerCore` carries out its actions.
struct ReloadQueue: Equatable {
    /// Who is waiting for a reload: the clients that asked (SIGHUP has nobody to answer).
    struct Waiting: Equatable {
        /// The clients' replies.
        var replies: [EventLoopPromise<ReloadOutcome>] = []
        /// Whether a client asked (else only SIGHUP did), for the log.
        var askedByClient: Bool { !replies.isEmpty }
    }

    /// Where the reloads stand.
    enum State: Equatable {
        /// None runs.
        case idle
        /// One runs for `current`; `next` waits for another read after it (nil: none asked).
        case reading(current: Waiting, next: Waiting?)
    }

    /// What to do.
    enum Action: Equatable {
        /// Read the configuration again (`askedByClient`: for the log).
        case read(askedByClient: Bool)
        /// Answer these clients with how the read ended.
        case answer([EventLoopPromise<ReloadOutcome>], ReloadOutcome)
    }

    /// Where they stand.
    private(set) var state = State.idle

    /// A reload was asked for: by a client (`reply`) or by SIGHUP (nil).
    mutating func requested(_ reply: EventLoopPromise<ReloadOutcome>?) -> [Action] {
        var asking = Waiting()
        if let reply { asking.replies.append(reply) }
        switch state {
        case .idle:
            state = .reading(current: asking, next: nil)
            return [.read(askedByClient: asking.askedByClient)]
        case let .reading(current, next):
            var waiting = next ?? Waiting()
            waiting.replies += asking.replies
            state = .reading(current: current, next: waiting)
            return []
        }
    }

    /// The read under way ended with `outcome`.
    mutating func finished(_ outcome: ReloadOutcome) -> [Action] {
        guard case let .reading(current, next) = state else { return [] }
        let answer: [Action] = current.replies.isEmpty ? [] : [.answer(current.replies, outcome)]
        guard let next else {
            state = .idle
            return answer
        }
        state = .reading(current: next, next: nil)
        return answer + [.read(askedByClient: next.askedByClient)]
    }
}
