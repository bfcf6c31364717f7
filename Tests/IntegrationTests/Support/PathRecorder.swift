import Foundation
import ReachClient
import ReachabilityCore
import Synchronization

/// Records every path a real subscription delivers, so a test can wait for the one it
/// expects (and check what came before it).
final class PathRecorder: Sendable {
    private let received = Mutex<[StatusReply]>([])
    private let failure = Mutex<String?>(nil)
    private let task: Task<Void, Never>

    init(client: ReachabilityClient, filter: PathFilter = .none) {
        let received = self.received, failure = self.failure
        task = Task {
            do {
                for try await reply in client.subscribe(filter: filter) {
                    received.withLock { $0.append(reply) }
                }
                failure.withLock { $0 = "subscription ended" }
            } catch {
                failure.withLock { $0 = "subscription failed: \(error)" }
            }
        }
    }

    deinit { task.cancel() }

    /// Everything received so far.
    var replies: [StatusReply] { received.withLock { $0 } }

    /// The latest path received.
    var latest: Path? { replies.last?.path }

    /// Waits until the latest path satisfies `predicate`; returns it, or nil on timeout.
    func waitFor(timeout: TimeInterval = 5, _ predicate: (Path) -> Bool) async -> Path? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let path = latest, predicate(path) { return path }
            try? await Task.sleep(for: .milliseconds(5))
        }
        if let path = latest, predicate(path) { return path }
        return nil
    }

    /// Why the subscription stopped, if it did.
    var error: String? { failure.withLock { $0 } }
}
