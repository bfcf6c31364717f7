import Foundation
import Glibc

/// The service manager's side of sd_notify: a Unix datagram socket the daemon writes
/// `KEY=VALUE` lines to through `NOTIFY_SOCKET`.
public final class NotifyListener {
    /// The socket path to put in `NOTIFY_SOCKET`.
    public let path: String
    private let fd: Int32
    /// Every datagram received so far, in order.
    public private(set) var messages: [String] = []

    /// Binds a datagram socket named `notify` in `directory`.
    public init(directory: String) throws {
        path = directory + "/notify"
        fd = try unixSocket(SOCK_DGRAM, path: path, .bind)
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// All lines received so far.
    public var lines: [String] { messages.flatMap { $0.split(separator: "\n").map(String.init) } }

    /// Reads datagrams until one line equals `line` (e.g. "READY=1") or the timeout passes.
    public func waitFor(_ line: String, timeout: TimeInterval = 10) -> Bool {
        waitUntil(timeout: timeout) { $0.contains(line) }
    }

    /// Reads datagrams until `predicate` holds for the lines received so far.
    public func waitUntil(timeout: TimeInterval = 10, _ predicate: ([String]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if predicate(lines) { return true }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return false }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, Int32(remaining * 1000) + 1) > 0 else { return predicate(lines) }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(fd, &buffer, buffer.count, 0)
            if count > 0 { messages.append(String(decoding: buffer[..<count], as: UTF8.self)) }
        }
    }

    /// Reads every datagram queued now, without waiting. A test that makes many changes
    /// calls it as it goes: the kernel queues only `net.unix.max_dgram_qlen` (often 10)
    /// datagrams, and a full queue blocks the daemon's next `sd_notify`.
    public func drain() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard count > 0 else { return }
            messages.append(String(decoding: buffer[..<count], as: UTF8.self))
        }
    }

    /// The `STATUS=` values received so far.
    public var statuses: [String] { lines.filter { $0.hasPrefix("STATUS=") }.map { String($0.dropFirst(7)) } }
}
