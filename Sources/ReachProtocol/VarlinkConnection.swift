import Glibc
import LinuxSystem
import NIOCore
import SystemPackage

/// A Varlink connection on a blocking Unix socket, for a thread that may wait: a resolver
/// thread asking systemd-resolved or systemd-networkd, a test talking to reachd. Never the
/// event loop or the engine. Replies are cut by `VarlinkFrameDecoder`, as everywhere else.
package final class VarlinkConnection {
    /// What `receive(timeout:)` found.
    package enum Received: Equatable, Sendable {
        /// One message, without its NUL.
        case message(ByteBuffer)
        /// The peer closed (or reset) the connection.
        case closed
        /// Nothing within the timeout.
        case timedOut
    }

    /// The socket, for a loop that polls it before `receive`.
    package let descriptor: SystemPackage.FileDescriptor
    private var decoder: VarlinkFrameDecoder
    private var buffer = ByteBuffer()

    /// Connects to the socket at `path`; `timeout` bounds the wait to be accepted (a listener
    /// whose backlog is full) and each send.
    package init(path: String, timeout: Duration, maximumMessageSize: Int = VarlinkFraming.maximumReplySize) throws(Errno) {
        descriptor = try UnixSocket.connect(to: path, timeout: timeout)
        decoder = VarlinkFrameDecoder(maximumMessageSize: maximumMessageSize)
    }

    deinit { try? descriptor.close() }

    /// Sends one call.
    package func send(_ call: VarlinkCall<some Encodable>) throws {
        try send(rawBytes: VarlinkCoding.encodeFrame(call))
    }

    /// Sends bytes as they are, framed or not: what a test needs to be a hostile client.
    package func send(rawBytes bytes: [UInt8]) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            // MSG_NOSIGNAL: a peer that closed first is EPIPE here, not a SIGPIPE that ends the process.
            offset += try systemCall {
                bytes[offset...].withUnsafeBytes { Glibc.send(descriptor.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
        }
    }

    /// The next message, waiting at most `timeout` for it.
    ///
    /// - Throws: `VarlinkFramingError` when the peer's bytes cannot be cut into messages
    ///   (the connection is unusable then), `Errno` when the socket fails.
    package func receive(timeout: Duration) throws -> Received {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let message = try decoder.decode(buffer: &buffer) { return .message(message) }
            let remaining = deadline - .now
            guard remaining > .zero else { return .timedOut }
            var poll = PollSet([descriptor])
            guard try poll.wait(timeoutMilliseconds: Int32(clamping: Int((remaining / .milliseconds(1)).rounded(.up))))[0] else { continue }
            // What was cut off the front is given back before the buffer grows again.
            if buffer.readerIndex > 1024 && buffer.readerIndex > buffer.capacity / 2 { buffer.discardReadBytes() }
            let count: Int
            do {
                count = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 64 * 1024) { try descriptor.read(into: $0) }
            } catch Errno.connectionReset {
                return .closed
            }
            if count == 0 { return .closed }
        }
    }
}

extension VarlinkConnection {
    /// What `call(_:parameters:socket:timeout:)` got back.
    package enum Outcome: Sendable {
        /// The service's reply (parameters or an error).
        case reply(AnyVarlinkReply)
        /// No answer within the timeout.
        case timedOut
        /// The service cannot be asked: not running, refusing, not speaking Varlink.
        case unavailable
    }

    /// Calls `method` on the service at `socket` (systemd-resolved, systemd-networkd) and
    /// waits at most `timeout` for its answer, on a connection of its own.
    package static func call(_ method: String, parameters: JSONObject, socket: String, timeout: Duration) -> Outcome {
        guard let connection = try? VarlinkConnection(path: socket, timeout: timeout),
              (try? connection.send(AnyVarlinkCall(method: method, parameters: parameters))) != nil
        else { return .unavailable }
        switch try? connection.receive(timeout: timeout) {
        case let .message(message)?:
            guard let reply = try? VarlinkCoding.decode(AnyVarlinkReply.self, from: message.readableBytesView) else { return .unavailable }
            return .reply(reply)
        case .timedOut?:
            return .timedOut
        case .closed?, nil:
            return .unavailable
        }
    }
}
