import Foundation
import Glibc

/// A deliberately plain Varlink connection: raw bytes over a blocking Unix socket, so
/// tests can send what no well-behaved client would (garbage, oversized messages).
final class RawVarlinkConnection {
    private let fd: Int32

    init(path: String) throws {
        fd = try unixSocket(SOCK_STREAM, path: path, connecting: true)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw CommandFailed(command: "send", status: errno, stderr: "") }
            offset += sent
        }
    }

    /// Sends one request and returns the decoded reply object.
    func call(_ request: String) throws -> [String: Any] {
        try send(Array(request.utf8) + [0])
        var reply: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = recv(fd, &byte, 1, 0)
            guard count == 1 else { throw CommandFailed(command: "recv reply to \(request)", status: errno, stderr: "") }
            if byte == 0 { break }
            reply.append(byte)
        }
        guard let object = try JSONSerialization.jsonObject(with: Data(reply)) as? [String: Any] else {
            throw CommandFailed(command: "decode reply", status: 0, stderr: String(decoding: reply, as: UTF8.self))
        }
        return object
    }

    /// Sends `bytes` (errors while sending are fine: the daemon may close first) and
    /// asserts the daemon closes the connection within the receive timeout.
    func sendAndExpectClose(_ bytes: [UInt8]) throws {
        try? send(bytes)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count == 0 { return }  // closed by the daemon
            if count < 0 {
                if errno == ECONNRESET { return }
                throw CommandFailed(command: "expected the daemon to close the connection", status: errno, stderr: "")
            }
        }
    }
}
