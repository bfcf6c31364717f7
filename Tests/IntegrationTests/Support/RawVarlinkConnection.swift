import Foundation
import Glibc

/// A deliberately plain Varlink connection: raw bytes over a blocking Unix socket, so
/// tests can send what no well-behaved client would (garbage, oversized messages).
final class RawVarlinkConnection {
    private let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in pathBytes.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, connected == 0 else { throw CommandFailed(command: "connect \(path)", status: errno, stderr: "") }
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
