import Dispatch
import Glibc

extension ReachctlMain {
    /// reachctl from a synchronous `main`: the multi-call reachd's, which stays synchronous
    /// so that the daemon starts before any thread exists. Does what an async `@main` does:
    /// the command runs as a main-actor task while the main thread serves the main queue,
    /// and the process exits when it returns (ArgumentParser exits by itself on an error).
    package static func runFromSynchronousMain() -> Never {
        // Before the first worker thread, as `main()` wants it (it sets it too, too late here).
        setenv("LIBDISPATCH_LOG", "NO", 0)
        Task { @MainActor in
            await main()
            exit(EXIT_SUCCESS)
        }
        dispatchMain()
    }
}
