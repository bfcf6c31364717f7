import Foundation
import Glibc

/// The service manager's side of sd_notify: a Unix datagram socket the daemon writes
/// `KEY=VALUE` lines to through `NOTIFY_SOCKET`.
///
/// A thread reads every datagram as it arrives, as PID 1 does: the kernel queues only
/// `net.unix.max_dgram_qlen` datagrams (10 here; systemd raises it to 512), and a full queue
/// blocks the daemon's next `sd_notify`, so a listener that read only when asked would stop
/// the daemon it watches.
public final class NotifyListener {
    /// The socket path to put in `NOTIFY_SOCKET`.
    public let path: String
    private let inbox: Inbox

    /// Binds a datagram socket named `notify` in `directory` and starts reading it.
    public init(directory: String) throws {
        path = directory + "/notify"
        inbox = Inbox(socket: try unixSocket(SOCK_DGRAM, path: path, .bind))
        let inbox = self.inbox
        Thread.detachNewThread { inbox.read() }
    }

    deinit {
        inbox.stopAndWait()
        unlink(path)
    }

    /// Every datagram received so far, in order.
    public var messages: [String] { inbox.messages }

    /// All lines received so far.
    public var lines: [String] { Inbox.lines(of: messages) }

    /// The `STATUS=` values received so far.
    public var statuses: [String] { lines.filter { $0.hasPrefix("STATUS=") }.map { String($0.dropFirst(7)) } }

    /// Waits until one line equals `line` (e.g. "READY=1") or the timeout passes.
    public func waitFor(_ line: String, timeout: TimeInterval = 10) -> Bool {
        waitUntil(timeout: timeout) { $0.contains(line) }
    }

    /// Waits until `predicate` holds for the lines received so far, or the timeout passes.
    public func waitUntil(timeout: TimeInterval = 10, _ predicate: ([String]) -> Bool) -> Bool {
        inbox.waitUntil(Date().addingTimeInterval(timeout)) { predicate(Inbox.lines(of: $0)) }
    }
}

/// The socket, what its reader thread received, and the means to stop that thread.
private final class Inbox: @unchecked Sendable {
    private let socket: Int32
    /// A pipe whose far end is written once to end the reader.
    private let stop: (read: Int32, write: Int32)
    /// Guards everything below.
    private let condition = NSCondition()
    private var received: [String] = []
    private var reading = true

    init(socket: Int32) {
        self.socket = socket
        var ends: [Int32] = [-1, -1]
        precondition(pipe(&ends) == 0, "pipe: \(String(cString: strerror(errno)))")
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }  // not inherited by the daemon
        stop = (ends[0], ends[1])
    }

    var messages: [String] {
        condition.lock()
        defer { condition.unlock() }
        return received
    }

    static func lines(of messages: [String]) -> [String] {
        messages.flatMap { $0.split(separator: "\n").map(String.init) }
    }

    /// Waits until `predicate` holds for the messages, or `deadline`.
    func waitUntil(_ deadline: Date, _ predicate: ([String]) -> Bool) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !predicate(received) {
            guard condition.wait(until: deadline) else { return predicate(received) }
        }
        return true
    }

    /// The reader thread: every datagram, until `stopAndWait()`.
    func read() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            var polls = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0), pollfd(fd: stop.read, events: Int16(POLLIN), revents: 0)]
            if poll(&polls, 2, -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            if polls[1].revents != 0 { break }
            let count = recv(socket, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard count > 0 else { continue }
            condition.lock()
            received.append(String(decoding: buffer[..<count], as: UTF8.self))
            condition.broadcast()
            condition.unlock()
        }
        condition.lock()
        reading = false
        condition.broadcast()
        condition.unlock()
    }

    /// Ends the reader, waits for it, and closes the descriptors.
    func stopAndWait() {
        var one: UInt8 = 1
        _ = write(stop.write, &one, 1)
        condition.lock()
        while reading { condition.wait() }
        condition.unlock()
        close(stop.read)
        close(stop.write)
        close(socket)
    }
}
