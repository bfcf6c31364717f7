import Foundation
import ReachClient
import ReachProtocol
import ReachabilityCore
import Synchronization

/// Records every path a real subscription delivers, so a test can wait for the one it
/// expects (and check what came before it).
final class PathRecorder: Sendable {
    private final class Storage: Sendable {
        let received = Mutex<[StatusReply]>([])
        let failure = Mutex<String?>(nil)
    }

    private let storage = Storage()
    private let task: Task<Void, Never>

    init(client: ReachabilityClient, filter: PathFilter = .none) {
        let storage = self.storage
        task = Task {
            do {
                for try await reply in client.subscribe(filter: filter) {
                    storage.received.withLock { $0.append(reply) }
                }
                storage.failure.withLock { $0 = "subscription ended" }
            } catch {
                storage.failure.withLock { $0 = "subscription failed: \(error)" }
            }
        }
    }

    deinit { task.cancel() }

    /// Everything received so far.
    var replies: [StatusReply] { storage.received.withLock { $0 } }

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
    var error: String? { storage.failure.withLock { $0 } }
}
