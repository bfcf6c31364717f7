import CLinux
import Glibc

/// A detached thread for one blocking call, which exists only while the call runs (one stuck
/// in glibc, which cannot be cancelled, holds nothing but its own thread). `BlockingWork`
/// alone starts them (docs/DESIGN.md rule 11; `scripts/house-rules` rule 8).
package enum DetachedThread {
    /// Starts `body` on a new detached thread; false if the system refuses one.
    package static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        let context = Unmanaged.passRetained(WorkerBody(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let status = pthread_create(&thread, &attributes, { context in
            Unmanaged<WorkerBody>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<WorkerBody>.fromOpaque(context).release()
            return false
        }
        return true
    }
}

private final class WorkerBody {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}
