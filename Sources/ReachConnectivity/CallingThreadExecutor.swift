import Synchronization

/// Runs an `async` function that never waits on anything outside it (swift-certificates'
/// `Verifier` over certificates held in memory) to its end on the calling thread.
///
/// reachd starts no Swift concurrency threads: the global executor is libdispatch's pool,
/// whose monitor would then wake an idle daemon every second. A task that prefers this
/// executor has its jobs run here, by `run`, and nowhere else.
final class CallingThreadExecutor: TaskExecutor {
    private let jobs = Mutex<[UnownedJob]>([])

    private init() {}

    /// Queues a job of the task; `run` runs it.
    func enqueue(_ job: UnownedJob) {
        jobs.withLock { $0.append(job) }
    }

    /// `body`'s value, or nil if it waited on something that never came (then its task is
    /// abandoned with the jobs it still had).
    static func run<Value: Sendable>(_ body: sending @escaping () async -> Value) -> Value? {
        let executor = CallingThreadExecutor()
        let result = Mutex<Value?>(nil)
        Task(executorPreference: executor) {
            let value = await body()
            result.withLock { $0 = value }
        }
        while let job = executor.jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
            job.runSynchronously(on: executor.asUnownedTaskExecutor())
        }
        return result.withLock { $0 }
    }
}
