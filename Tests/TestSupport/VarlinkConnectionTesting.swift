import Foundation
import NIOCore
import ReachProtocol
import XCTest

/// What tests add to the product's blocking `VarlinkConnection`: waits in seconds, replies
/// read as text or loosely typed, and the assertion that the daemon hangs up. Bytes no
/// well-behaved client would send (garbage, oversized messages, calls after a
/// subscription) go out through `send(rawBytes:)`.
extension VarlinkConnection {
    /// Connects to the socket at `path`, waiting at most 5 s to be accepted.
    package convenience init(path: String) throws {
        try self.init(path: path, timeout: .seconds(5))
    }

    /// Sends one call frame.
    package func call(_ method: String, _ parameters: JSONObject? = nil, more: Bool = false, oneway: Bool = false) throws {
        try send(AnyVarlinkCall(method: method, parameters: parameters, more: more, oneway: oneway))
    }

    /// Sends `json` as one frame and returns the reply to it.
    package func request(_ json: String, timeout: Double = 5) throws -> AnyVarlinkReply {
        try send(rawBytes: Array(json.utf8) + [VarlinkFraming.terminator])
        return try reply(timeout: timeout)
    }

    /// What the connection produced next, as tests compare it.
    package enum Event: Equatable {
        /// One message, without its NUL.
        case message(String)
        /// The daemon closed the connection.
        case closed
        /// Nothing within the timeout.
        case timeout
        /// The bytes could not be cut into messages, or the socket failed.
        case failed(String)
    }

    /// The next message, `.closed` at EOF (or reset), or `.timeout`.
    package func next(timeout: Double = 5) -> Event {
        do {
            switch try receive(timeout: .milliseconds(Int(timeout * 1000))) {
            case let .message(message): return .message(String(buffer: message))
            case .closed: return .closed
            case .timedOut: return .timeout
            }
        } catch {
            return .failed("\(error)")
        }
    }

    /// The next message decoded as a loosely typed reply.
    package func reply(timeout: Double = 5) throws -> AnyVarlinkReply {
        let event = next(timeout: timeout)
        guard case let .message(text) = event else { throw CommandFailed(command: "read a reply", status: 0, stderr: "\(event)") }
        return try VarlinkCoding.decode(AnyVarlinkReply.self, from: Array(text.utf8))
    }

    /// The next message decoded as a status reply, with its `continues` flag.
    package func status(timeout: Double = 5) throws -> (StatusReply, Bool) {
        let event = next(timeout: timeout)
        guard case let .message(text) = event else { throw CommandFailed(command: "read a status", status: 0, stderr: "\(event)") }
        let reply = try VarlinkCoding.decode(VarlinkReply<StatusReply>.self, from: Array(text.utf8))
        return (try XCTUnwrap(reply.parameters), reply.isContinuing)
    }

    /// Sends `bytes` (a send error is fine: the daemon may close first) and asserts the
    /// daemon closes the connection without replying.
    package func sendAndExpectClose(_ bytes: [UInt8], timeout: Double = 5) throws {
        try? send(rawBytes: bytes)
        let event = next(timeout: timeout)
        guard event == .closed else {
            throw CommandFailed(command: "expected the daemon to close the connection", status: 0, stderr: "\(event)")
        }
    }
}
