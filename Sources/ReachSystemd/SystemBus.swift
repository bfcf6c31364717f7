import CSystemd
import Glibc

/// A client connection to the D-Bus system bus through libsystemd's sd-bus that never waits:
/// it connects, installs match rules and calls methods without blocking, and each answer
/// comes out of `processPending`, which its owner calls when `descriptor` is ready for
/// `events` or `timeoutMilliseconds` passed. Owned by one thread (sd-bus connections are not
/// thread-safe); errno stays at this edge as `SystemBus.Failure`.
package final class SystemBus {
    /// A call or the connection failed: the sd-bus error name (or errno's) and message.
    package struct Failure: Error, CustomStringConvertible {
        /// The D-Bus error name, or `errno N` when sd-bus gave none.
        package var name: String
        /// The error's message, when there is one.
        package var message: String
        /// `name: message`.
        package var description: String { message.isEmpty ? name : "\(name): \(message)" }
    }

    /// One message `processPending` found: a signal, or the reply to a call `send` made.
    package enum Arrival {
        /// A matched signal (or one sent to reachd directly).
        case signal(Message)
        /// The reply to the call with this cookie.
        case reply(cookie: UInt64, Message)
    }

    /// What `processPending` found: the signals nobody handled (the matched ones), the
    /// replies to `send`'s calls, and whether nothing is left.
    package struct Pending {
        /// The matched signals, in order.
        package var signals: [Message] = []
        /// The replies that arrived, each with the cookie `send` returned: an answer, an
        /// error, or sd-bus's own error when the call timed out or the connection went.
        package var replies: [(cookie: UInt64, reply: Message)] = []
        /// The signals and replies together, in the order they arrived.
        package var arrivals: [Arrival] = []
        /// False when the step limit was reached: call again before polling, the rest is
        /// queued in sd-bus, not on the socket.
        package var drained = true
    }

    private let bus: OpaquePointer
    /// Replies sd-bus handed to `received` during the current `processPending`.
    private var replies: [(cookie: UInt64, reply: Message)] = []

    /// Starts connecting to the system bus (`$DBUS_SYSTEM_BUS_ADDRESS`, else the standard
    /// socket) without waiting for it; a bus that refuses reachd shows in `processPending`.
    package init() throws(Failure) {
        var bus: OpaquePointer?
        let result = sd_bus_open_system(&bus)
        guard result >= 0, let bus else { throw Failure(errno: -result) }
        self.bus = bus
    }

    // Closed without sd_bus_flush, which waits for the connection to finish starting.
    deinit { _ = sd_bus_close_unref(bus) }

    /// The connection's descriptor, to poll with `events`.
    package var descriptor: Int32 { sd_bus_get_fd(bus) }

    /// What to poll the descriptor for (`POLLIN`, and `POLLOUT` while writes are queued).
    package var events: Int16 { Int16(truncatingIfNeeded: max(0, sd_bus_get_events(bus))) }

    /// Milliseconds until sd-bus must run again (a call's deadline); nil for none.
    package var timeoutMilliseconds: Int32? {
        var deadline: UInt64 = 0
        guard sd_bus_get_timeout(bus, &deadline) >= 0, deadline != UInt64.max else { return nil }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        return deadline <= nowMicroseconds ? 0 : Int32(clamping: (deadline - nowMicroseconds + 999) / 1000)
    }

    /// Asks the bus to route signals matching `rule` here. Not waited for: should the bus
    /// refuse it, sd-bus closes the connection, which `processPending` then reports.
    package func addMatch(_ rule: String) throws(Failure) {
        let result = sd_bus_add_match_async(bus, nil, rule, nil, nil, nil)
        guard result >= 0 else { throw Failure(errno: -result) }
    }

    /// Reads and dispatches what arrived, at most `limit` steps. Throws when the connection is gone.
    package func processPending(limit: Int = 256) throws(Failure) -> Pending {
        var pending = Pending()
        defer { replies = [] }
        for _ in 0..<limit {
            var message: OpaquePointer?
            let result = sd_bus_process(bus, &message)
            guard result >= 0 else { throw Failure(errno: -result) }
            // A step delivers at most one message: a reply through `received`, else a signal here.
            pending.arrivals += replies.dropFirst(pending.replies.count).map { .reply(cookie: $0.cookie, $0.reply) }
            pending.replies = replies
            if let message {
                let signal = Message(adopting: message)
                pending.signals.append(signal)
                pending.arrivals.append(.signal(signal))
            }
            if result == 0 { return pending }
        }
        pending.drained = false
        return pending
    }

    /// Sends a call of `member` and returns its cookie; the reply comes out of
    /// `processPending`, within `timeoutMicroseconds` (else sd-bus's timeout error comes).
    /// `arguments` are strings (the only kind reachd sends).
    package func send(
        destination: String, path: String, interface: String, member: String, arguments: [String] = [],
        timeoutMicroseconds: UInt64 = 2_000_000
    ) throws(Failure) -> UInt64 {
        var request: OpaquePointer?
        var result = sd_bus_message_new_method_call(bus, &request, destination, path, interface, member)
        guard result >= 0, let request else { throw Failure(errno: -result) }
        defer { sd_bus_message_unref(request) }
        // Passive: a call must never start the service it asks (D-Bus activation).
        _ = sd_bus_message_set_auto_start(request, 0)
        for argument in arguments {
            result = argument.withCString { sd_bus_message_append_basic(request, CChar(UInt8(ascii: "s")), $0) }
            guard result >= 0 else { throw Failure(errno: -result) }
        }
        // The slot floats (the connection owns it); sd-bus calls `received` from sd_bus_process only.
        result = sd_bus_call_async(bus, nil, request, { reply, owner, _ in
            guard let reply, let owner else { return 0 }
            Unmanaged<SystemBus>.fromOpaque(owner).takeUnretainedValue().received(reply)
            return 1
        }, Unmanaged.passUnretained(self).toOpaque(), timeoutMicroseconds)
        guard result >= 0 else { throw Failure(errno: -result) }
        var cookie: UInt64 = 0
        result = sd_bus_message_get_cookie(request, &cookie)
        guard result >= 0 else { throw Failure(errno: -result) }
        return cookie
    }

    private func received(_ reply: OpaquePointer) {
        var cookie: UInt64 = 0
        guard sd_bus_message_get_reply_cookie(reply, &cookie) >= 0 else { return }
        replies.append((cookie, Message(adopting: sd_bus_message_ref(reply))))
    }

    /// A received message (a reply or a signal), read front to back.
    package final class Message {
        private let message: OpaquePointer

        init(adopting message: OpaquePointer) { self.message = message }
        deinit { sd_bus_message_unref(message) }

        /// The error it carries, when it is an error reply.
        package var failure: Failure? {
            guard let error = sd_bus_message_get_error(message) else { return nil }
            return Failure(error: error.pointee, errno: sd_bus_message_get_errno(message))
        }

        /// Whether it is the signal `member` of `interface`.
        package func isSignal(interface: String, member: String) -> Bool {
            sd_bus_message_is_signal(message, interface, member) > 0
        }

        /// The unique name of the connection that sent it, when the bus said.
        package var sender: String? { sd_bus_message_get_sender(message).map { String(cString: $0) } }

        /// The object path it concerns.
        package var path: String? { sd_bus_message_get_path(message).map { String(cString: $0) } }

        /// Reads the next argument, a string or object path (at most `limit` bytes kept).
        package func readString(limit: Int = 256) throws(Failure) -> String {
            let type = try peekType()
            guard type.type == "s" || type.type == "o" else { throw Failure(name: "unexpected type \(type.type)", message: "") }
            return try readBasicString(type.type, limit: limit)
        }

        /// Reads the next argument, a boolean.
        package func readBool() throws(Failure) -> Bool {
            var value: Int32 = 0
            let result = sd_bus_message_read_basic(message, CChar(UInt8(ascii: "b")), &value)
            guard result > 0 else { throw Failure(errno: result < 0 ? -result : EBADMSG) }
            return value != 0
        }

        /// Reads the next argument, a unix descriptor (`h`), and returns a duplicate of it
        /// (close-on-exec) that the caller owns: the message closes its own with itself.
        package func readFileDescriptor() throws(Failure) -> Int32 {
            var descriptor: Int32 = -1
            let result = sd_bus_message_read_basic(message, CChar(UInt8(ascii: "h")), &descriptor)
            guard result > 0 else { throw Failure(errno: result < 0 ? -result : EBADMSG) }
            let duplicate = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
            guard duplicate >= 0 else { throw Failure(errno: errno) }
            return duplicate
        }

        /// Reads the next argument, an `a{sv}` (properties), into at most `limit` entries;
        /// values of a kind `BusValue` does not keep are skipped.
        package func readProperties(limit: Int = 256) throws(Failure) -> [String: BusValue] {
            try enter("a", "{sv}")
            var properties: [String: BusValue] = [:]
            while try enterIfPresent("e", "sv") {
                let name = try readBasicString("s", limit: 128)
                let variant = try peekType()
                guard variant.type == "v" else { throw Failure(name: "malformed a{sv}", message: "") }
                try enter("v", variant.contents)
                let value = try readValue(signature: variant.contents)
                try exit()
                try exit()
                if properties.count < limit { properties[name] = value }
            }
            try exit()
            return properties
        }

        private func readValue(signature: String) throws(Failure) -> BusValue {
            switch signature {
            case "u":
                var value: UInt32 = 0
                try readBasic("u", &value)
                return .uint32(value)
            case "b":
                var value: Int32 = 0
                try readBasic("b", &value)
                return .bool(value != 0)
            case "s", "o":
                return .string(try readBasicString(Character(signature), limit: 256))
            case "ao":
                try enter("a", "o")
                var paths: [String] = []
                while sd_bus_message_at_end(message, 0) == 0 {
                    let path = try readBasicString("o", limit: 256)
                    if paths.count < 256 { paths.append(path) }
                }
                try exit()
                return .objectPaths(paths)
            default:
                let result = sd_bus_message_skip(message, signature)
                guard result >= 0 else { throw Failure(errno: -result) }
                return .other
            }
        }

        private func peekType() throws(Failure) -> (type: Character, contents: String) {
            var type: CChar = 0
            var contents: UnsafePointer<CChar>?
            let result = sd_bus_message_peek_type(message, &type, &contents)
            guard result > 0 else { throw Failure(errno: result < 0 ? -result : EBADMSG) }
            return (Character(UnicodeScalar(UInt8(bitPattern: type))), contents.map { String(cString: $0) } ?? "")
        }

        private func readBasic<Value>(_ type: Character, _ value: inout Value) throws(Failure) {
            let result = withUnsafeMutablePointer(to: &value) { sd_bus_message_read_basic(message, CChar(type.asciiValue!), $0) }
            guard result > 0 else { throw Failure(errno: result < 0 ? -result : EBADMSG) }
        }

        private func readBasicString(_ type: Character, limit: Int) throws(Failure) -> String {
            var pointer: UnsafePointer<CChar>?
            try readBasic(type, &pointer)
            guard let pointer else { return "" }
            let length = strnlen(pointer, limit)
            return String(decoding: UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: length), as: UTF8.self)
        }

        private func enter(_ type: Character, _ contents: String) throws(Failure) {
            guard try enterIfPresent(type, contents) else { throw Failure(name: "expected \(type)\(contents)", message: "") }
        }

        private func enterIfPresent(_ type: Character, _ contents: String) throws(Failure) -> Bool {
            let result = sd_bus_message_enter_container(message, CChar(type.asciiValue!), contents)
            guard result >= 0 else { throw Failure(errno: -result) }
            return result > 0
        }

        private func exit() throws(Failure) {
            let result = sd_bus_message_exit_container(message)
            guard result >= 0 else { throw Failure(errno: -result) }
        }
    }
}

/// A property value as reachd keeps it: the kinds NetworkManager's properties it reads have.
package enum BusValue: Sendable, Hashable {
    /// `u`.
    case uint32(UInt32)
    /// `b`.
    case bool(Bool)
    /// `s` or `o`.
    case string(String)
    /// `ao`.
    case objectPaths([String])
    /// Any other kind, skipped.
    case other
}

extension SystemBus.Failure {
    init(errno code: Int32) {
        self.init(name: "errno \(code)", message: String(cString: strerror(code)))
    }

    init(error: sd_bus_error, errno code: Int32) {
        if let name = error.name {
            self.init(name: String(cString: name), message: error.message.map { String(cString: $0) } ?? "")
        } else {
            self.init(errno: code)
        }
    }
}
