#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import Logging
import NIOCore
import NIOPosix
import ReachabilityCore
import ReachConnectivity
import ReachMetrics
import ReachProtocol
import ReachServer
import ReachSystemd
import ReachTargets
import Synchronization
import XCTest

/// The published state of `makeSnapshot`'s network under the default policy.
package func makeState(ethGateway: String = "10.0.0.1", wifiGateway: String = "192.168.1.1", wifiCarrier: Bool = true) -> ReachabilityState {
    ReachabilityState(snapshot: makeSnapshot(ethGateway: ethGateway, wifiGateway: wifiGateway, wifiCarrier: wifiCarrier), policy: InterfacePolicy())
}

/// A hand-built network: eth0 (wired, primary) and wlan0 (wifi, backup default route).
package func makeSnapshot(ethGateway: String = "10.0.0.1", wifiGateway: String = "192.168.1.1", wifiCarrier: Bool = true) -> NetworkSnapshot {
    let eth = Link(index: 2, name: "eth0", flags: [.up, .running], operState: .up, carrier: true)
    let wlan = Link(
        index: 3, name: "wlan0", flags: [.up, .running], operState: wifiCarrier ? .up : .down, carrier: wifiCarrier,
        device: DeviceFacts(isWireless: true)
    )
    let lo = Link(index: 1, name: "lo", flags: [.up, .running, .loopback], operState: .unknown, carrier: true, hardwareType: ARPHardwareType.loopback)
    return NetworkSnapshot(
        links: [1: lo, 2: eth, 3: wlan],
        addresses: [
            InterfaceAddress(interfaceIndex: 1, address: IPAddress("127.0.0.1")!, prefixLength: 8, scope: .host),
            InterfaceAddress(interfaceIndex: 2, address: IPAddress("10.0.0.2")!, prefixLength: 24),
            InterfaceAddress(interfaceIndex: 3, address: IPAddress("192.168.1.5")!, prefixLength: 24),
        ],
        defaultRoutes: [
            DefaultRoute(family: .ipv4, metric: 100, nextHops: [NextHop(interfaceIndex: 2, gateway: IPAddress(ethGateway))]),
            DefaultRoute(family: .ipv4, metric: 600, nextHops: [NextHop(interfaceIndex: 3, gateway: IPAddress(wifiGateway))]),
        ],
        lookups: [.ipv4: .route(RouteLookupResult(outputInterface: 2, gateway: IPAddress(ethGateway)))],
        hasNameserver: true
    )
}

/// A server on a fresh temporary socket, with its own one-thread event loop.
public final class ServerFixture {
    public let directory: String
    public let socketPath: String
    public let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    package let server: VarlinkServer
    /// What the server asked of the engine.
    package let engine = ScriptedEngine()
    public static let instance = "test-instance"

    package init(snapshot: NetworkSnapshot = makeSnapshot(), subdirectory: Bool = false) {
        directory = (try? Paths.makeTemporaryDirectory("reachd-test")) ?? "/tmp/reachd-test-\(getpid())"
        socketPath = directory + (subdirectory ? "/run/sub" : "") + "/sock"
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        server = .forTests(socketPath: socketPath, instance: Self.instance, snapshot: snapshot, eventLoop: group.next(), logger: logger, engine: engine)
    }

    public func stop() async {
        server.shutdown()
        try? await group.shutdownGracefully()
        _ = try? FileManager.default.removeItem(atPath: directory)
    }
}

extension ServerSettings {
    /// What a server under test runs with: the socket at `socketPath` (mode 0666), the
    /// built-in limits, systemd-resolved's socket if it exists, no probes.
    package static func forTests(socketPath: String) -> ServerSettings {
        ServerSettings(
            socketPath: socketPath, socketMode: 0o666, limits: ServerLimits(), resolvedSocket: NameResolver.systemdResolvedSocket,
            connectivity: ConnectivitySettings(), probeTLS: nil, apiTLS: nil
        )
    }
}

extension VarlinkServer {
    /// A server under test: `ServerSettings.forTests`, the default interface policy, a
    /// notifier that tells nobody (outside systemd), counters nobody counts, and `engine` as
    /// its owner too (reloads applied, nothing re-read).
    package static func forTests(
        socketPath: String, instance: String, snapshot: NetworkSnapshot, eventLoop: any EventLoop, logger: Logger,
        engine: ScriptedEngine
    ) -> VarlinkServer {
        VarlinkServer(
            settings: .forTests(socketPath: socketPath), instance: instance, snapshot: snapshot, policy: InterfacePolicy(),
            eventLoop: eventLoop, logger: logger, notifier: SystemdNotifier(), engine: engine, owner: engine, counters: DaemonCounters()
        )
    }
}

/// An engine, and the server's owner, for servers under test: reloads are applied,
/// lookups answered by `route` (no route unless told otherwise), and every request is recorded.
package final class ScriptedEngine: EngineRequests, ServerOwner {
    /// One request the server made.
    package enum Request: Equatable, Sendable {
        /// The owner was asked to reload.
        case reload
        /// The engine was told what a reload put in force.
        case reloaded
        case lookUp([TargetKey])
        case monitorTargets(add: [TargetKey], remove: [TargetKey])
        case fail(String)
    }

    private let state = Mutex<(requests: [Request], route: @Sendable (TargetKey) -> RouteLookup)>(([], { _ in .failure(.noRoute) }))

    package init() {}

    /// Every request so far, oldest first.
    package var requests: [Request] { state.withLock { $0.requests } }

    /// How lookups are answered from now on.
    package func answerLookups(_ route: @escaping @Sendable (TargetKey) -> RouteLookup) {
        state.withLock { $0.route = route }
    }

    package func post(_ command: EngineCommand) {
        switch command {
        case .reloaded:
            state.withLock { $0.requests.append(.reloaded) }
        case let .lookUpTargets(keys, reply):
            let route = state.withLock { state in
                state.requests.append(.lookUp(keys))
                return state.route
            }
            reply.succeed(keys.map { TargetLookup($0, route: route($0)) })
        case let .monitorTargets(add, remove):
            state.withLock { $0.requests.append(.monitorTargets(add: add, remove: remove)) }
        case let .fail(reason):
            state.withLock { $0.requests.append(.fail(reason)) }
        case .someoneListens, .dns64Answered, .systemSleeps:
            break  // no sockets, resolver or sleep here
        }
    }

    package func reload(askedByClient: Bool, work: BlockingWork) -> EventLoopFuture<ReloadResult> {
        state.withLock { $0.requests.append(.reload) }
        return work.run { ReloadResult(.applied) }
    }

    package func restoreSocketFile(work: BlockingWork) {}
}
