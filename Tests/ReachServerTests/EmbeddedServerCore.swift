import Logging
import NIOCore
import ReachabilityCore
import ReachMetrics
@testable import ReachServer
import ReachSystemd
import TestSupport
import ReachTargets

extension ServerCore {
    /// A core on `loop` serving `makeSnapshot()`'s network under `ServerSettings.forTests`;
    /// `owner` answers reloads (by default `engine`, when it is a `ScriptedEngine`).
    static func embedded(_ loop: any EventLoop, engine: any EngineRequests, owner: (any ServerOwner)? = nil, logger: Logger) -> ServerCore {
        ServerCore(
            publication: Publication(instance: "embedded", snapshot: makeSnapshot(), policy: InterfacePolicy()),
            settings: .forTests(socketPath: "/embedded"), eventLoop: loop, logger: logger, notifier: SystemdNotifier(),
            engine: engine, owner: owner ?? (engine as? ScriptedEngine) ?? ScriptedEngine(), counters: DaemonCounters()
        )
    }
}
