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
import ReachProtocol
import ReachDaemon
import XCTest

/// The published state of `makeSnapshot`'s network under the default policy.
public func makeState(ethGateway: String = "10.0.0.1", wifiGateway: String = "192.168.1.1", wifiCarrier: Bool = true) -> ReachabilityState {
    ReachabilityState(snapshot: makeSnapshot(ethGateway: ethGateway, wifiGateway: wifiGateway, wifiCarrier: wifiCarrier), policy: InterfacePolicy())
}

/// A hand-built network: eth0 (wired, primary) and wlan0 (wifi, backup default route).
public func makeSnapshot(ethGateway: String = "10.0.0.1", wifiGateway: String = "192.168.1.1", wifiCarrier: Bool = true) -> NetworkSnapshot {
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
    public let server: VarlinkServer
    public static let instance = "test-instance"

    public init(snapshot: NetworkSnapshot = makeSnapshot(), subdirectory: Bool = false) {
        directory = (try? Paths.makeTemporaryDirectory("reachd-test")) ?? "/tmp/reachd-test-\(getpid())"
        socketPath = directory + (subdirectory ? "/run/sub" : "") + "/sock"
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        server = VarlinkServer(
            socketPath: socketPath, instance: Self.instance, snapshot: snapshot, policy: InterfacePolicy(),
            eventLoop: group.next(), logger: logger
        )
    }

    public func stop() async {
        server.shutdown()
        try? await group.shutdownGracefully()
        _ = try? FileManager.default.removeItem(atPath: directory)
    }
}
