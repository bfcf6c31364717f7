import Foundation
import Glibc
import ReachProtocol
import XCTest

/// A deliberately plain Varlink connection: raw bytes over a blocking Unix socket, so
/// tests see exactly what goes over the wire and can send what no well-behaved client
/// would (garbage, oversized messages, calls after a subscription).
public final class RawVarlinkConnection {
    private let fd: Int32
    private var splitter = VarlinkFrameSplitter(maximumMessageSize: 1 << 22)

    /// Connects to the socket at `path`.
    public init(path: String) throws {
        fd = try unixSocket(SOCK_STREAM, path: path, .connect)
    }

    deinit { close(fd) }

    /// Sends bytes as they are.
    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw CommandFailed(command: "send", status: errno, stderr: String(cString: strerror(errno))) }
            offset += sent
        }
    }

    /// Sends one call frame.
    public func call(_ method: String, _ parameters: JSONObject? = nil, more: Bool = false, oneway: Bool = false) throws {
        try send(VarlinkCoding.encodeFrame(VarlinkCall(method: method, parameters: parameters, more: more, oneway: oneway)))
    }

    /// Sends `json` as one frame and returns the reply to it.
    public func request(_ json: String, timeout: Double = 5) throws -> AnyVarlinkReply {
        try send(Array(json.utf8) + [VarlinkFraming.terminator])
        return try reply(timeout: timeout)
    }

    /// What the connection produced next.
    public enum Event: Equatable {
        /// One message, without its NUL.
        case message(String)
        /// The daemon closed the connection.
        case closed
        /// Nothing within the timeout.
        case timeout
    }

    /// The next message, `.closed` at EOF (or reset), or `.timeout`.
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
        let event = next(timeout: timeout)
        guard case let .message(text) = event else { throw CommandFailed(command: "read a reply", status: 0, stderr: "\(event)") }
        return try VarlinkCoding.decode(AnyVarlinkReply.self, from: Array(text.utf8))
    }

    /// The next message decoded as a status reply, with its `continues` flag.
    public func status(timeout: Double = 5) throws -> (StatusReply, Bool) {
        let event = next(timeout: timeout)
        guard case let .message(text) = event else { throw CommandFailed(command: "read a status", status: 0, stderr: "\(event)") }
        let reply = try VarlinkCoding.decode(VarlinkReply<StatusReply>.self, from: Array(text.utf8))
        return (try XCTUnwrap(reply.parameters), reply.isContinuing)
    }

    /// Sends `bytes` (a send error is fine: the daemon may close first) and asserts the
    /// daemon closes the connection without replying.
    public func sendAndExpectClose(_ bytes: [UInt8], timeout: Double = 5) throws {
        try? send(bytes)
        let event = next(timeout: timeout)
        guard event == .closed else {
            throw CommandFailed(command: "expected the daemon to close the connection", status: 0, stderr: "\(event)")
        }
    }
}
