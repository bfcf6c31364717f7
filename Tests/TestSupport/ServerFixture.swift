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
        var template = Array("/tmp/reachd-test-XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        directory = created.map { String(cString: $0) } ?? "/tmp/reachd-test-fallback"
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

/// A blocking raw Varlink connection, to see exactly what goes over the wire.
public final class RawConnection {
    private let fd: CInt
    private var splitter = VarlinkFrameSplitter(maximumMessageSize: 1 << 20)

    public init(path: String) throws {
        fd = socket(AF_UNIX, CInt(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if result != 0 {
            let code = errno
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
    }

    deinit { close(fd) }

    public func send(_ text: String) {
        send(Array(text.utf8))
    }

    public func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return }
            offset += written
        }
    }

    /// Sends one call frame.
    public func call(_ method: String, _ parameters: JSONObject? = nil, more: Bool = false, oneway: Bool = false) {
        send(try! VarlinkCoding.encodeFrame(VarlinkCall(method: method, parameters: parameters, more: more, oneway: oneway)))
    }

    public enum Event: Equatable {
        case message(String)
        case closed
        case timeout
    }

    /// The next message, `.closed` at EOF, or `.timeout`.
    public func next(timeout: Double = 5) -> Event {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let message = try? splitter.next() { return .message(String(decoding: message, as: UTF8.self)) }
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { return .timeout }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(remaining * 1000) + 1) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return .closed }
            splitter.append(buffer[..<count])
        }
    }

    /// The next message decoded as a loosely typed reply.
    public func reply(timeout: Double = 5) throws -> AnyVarlinkReply {
        guard case let .message(text) = next(timeout: timeout) else { throw POSIXError(.ETIMEDOUT) }
        return try VarlinkCoding.decode(AnyVarlinkReply.self, from: Array(text.utf8))
    }

    /// The next message decoded as a status reply, with its `continues` flag.
    public func status(timeout: Double = 5) throws -> (StatusReply, Bool) {
        guard case let .message(text) = next(timeout: timeout) else { throw POSIXError(.ETIMEDOUT) }
        let reply = try VarlinkCoding.decode(VarlinkReply<StatusReply>.self, from: Array(text.utf8))
        return (try XCTUnwrap(reply.parameters), reply.isContinuing)
    }
}
