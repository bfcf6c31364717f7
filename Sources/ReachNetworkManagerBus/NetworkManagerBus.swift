import CSystemd
import Glibc
import ReachNetworkManager

/// reachd-nm's connection to the system bus through sd-bus: it owns
/// `org.freedesktop.NetworkManager`, hands every method call on any object to `handler`
/// and sends its reply, and emits signals. Owned by one thread; never waits on the bus.
package final class NetworkManagerBus {
    /// A bus call failed: sd-bus's errno.
    package struct Failure: Error, CustomStringConvertible {
        /// What was being done.
        package var operation: String
        /// The negative errno sd-bus returned, made positive.
        package var code: Int32
        /// `operation: strerror`.
        package var description: String { "\(operation): \(String(cString: strerror(code)))" }
    }

    /// What happened to the name, as `processPending` reports it.
    package enum NameEvent: Sendable, Equatable {
        /// The bus gave reachd-nm the name.
        case acquired
        /// The bus refused the name (someone owns it, or the policy forbids it): the error's name.
        case refused(String)
        /// The name was taken away (NetworkManager replaced reachd-nm).
        case lost
    }

    /// Answers one call; `reply` is sent for it, unless `.checkConnectivity` (the handler
    /// keeps the call with `retain` and answers later) or `.notHandled`.
    package typealias Handler = (NetworkManagerCall) -> NetworkManagerReply

    private let bus: OpaquePointer
    private var handler: Handler = { _ in .notHandled }
    private var nameEvents: [NameEvent] = []
    /// Calls the handler deferred, answered by `answerDeferred`.
    private var deferred: [OpaquePointer] = []
    /// At most this many deferred calls wait; more are refused at once.
    private let deferredLimit = 64

    /// Connects to the system bus (`$DBUS_SYSTEM_BUS_ADDRESS`, else the standard socket).
    package init() throws(Failure) {
        var bus: OpaquePointer?
        let result = sd_bus_open_system(&bus)
        guard result >= 0, let bus else { throw Failure(operation: "connecting to the system bus", code: -result) }
        self.bus = bus
    }

    deinit {
        deferred.forEach { sd_bus_message_unref($0) }
        _ = sd_bus_flush_close_unref(bus)
    }

    /// The connection's descriptor, to poll with `events`.
    package var descriptor: Int32 { sd_bus_get_fd(bus) }
    /// What to poll the descriptor for.
    package var events: Int16 { Int16(truncatingIfNeeded: max(0, sd_bus_get_events(bus))) }
    /// Milliseconds until sd-bus must run again; nil for none.
    package var timeoutMilliseconds: Int32? {
        var deadline: UInt64 = 0
        guard sd_bus_get_timeout(bus, &deadline) >= 0, deadline != UInt64.max else { return nil }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        return deadline <= nowMicroseconds ? 0 : Int32(clamping: (deadline - nowMicroseconds + 999) / 1000)
    }

    /// Serves every object path with `handler` and asks for `name` (allowing replacement:
    /// NetworkManager may take it). The outcome comes out of `processPending`.
    package func serve(name: String, handler: @escaping Handler) throws(Failure) {
        self.handler = handler
        let owner = Unmanaged.passUnretained(self).toOpaque()
        var result = sd_bus_add_fallback(bus, nil, "/", { message, owner, _ in
            guard let message, let owner else { return 0 }
            return Unmanaged<NetworkManagerBus>.fromOpaque(owner).takeUnretainedValue().received(message)
        }, owner)
        guard result >= 0 else { throw Failure(operation: "serving objects", code: -result) }
        result = sd_bus_match_signal_async(bus, nil, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameLost", { message, owner, _ in
            guard let message, let owner else { return 0 }
            Unmanaged<NetworkManagerBus>.fromOpaque(owner).takeUnretainedValue().nameLost(message)
            return 0
        }, nil, owner)
        guard result >= 0 else { throw Failure(operation: "watching the name", code: -result) }
        result = sd_bus_request_name_async(bus, nil, name, UInt64(SD_BUS_NAME_ALLOW_REPLACEMENT), { reply, owner, _ in
            guard let reply, let owner else { return 0 }
            Unmanaged<NetworkManagerBus>.fromOpaque(owner).takeUnretainedValue().nameReplied(reply)
            return 1
        }, owner)
        guard result >= 0 else { throw Failure(operation: "asking for \(name)", code: -result) }
    }

    /// Runs what arrived: calls go to the handler, replies are sent. Returns the name's events.
    /// Throws when the connection is gone.
    package func processPending(limit: Int = 256) throws(Failure) -> [NameEvent] {
        defer { nameEvents = [] }
        for _ in 0..<limit {
            let result = sd_bus_process(bus, nil)
            guard result >= 0 else { throw Failure(operation: "reading the bus", code: -result) }
            if result == 0 { break }
        }
        return nameEvents
    }

    /// Emits `PropertiesChanged` for each path and interface of `changes`.
    package func emitPropertiesChanged(_ changes: [String: [String: [String: BusReplyValue]]]) throws(Failure) {
        for (path, interfaces) in changes.sorted(by: { $0.key < $1.key }) {
            for (interface, properties) in interfaces.sorted(by: { $0.key < $1.key }) {
                try emit(path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                         [.string(interface), .properties(properties), .strings([])])
            }
        }
    }

    /// Emits `member` of `interface` on `path` with `arguments`.
    package func emit(path: String, interface: String, member: String, _ arguments: [BusWireValue]) throws(Failure) {
        var signal: OpaquePointer?
        var result = sd_bus_message_new_signal(bus, &signal, path, interface, member)
        guard result >= 0, let signal else { throw Failure(operation: "building \(member)", code: -result) }
        defer { sd_bus_message_unref(signal) }
        for argument in arguments { try append(argument, to: signal) }
        result = sd_bus_send(bus, signal, nil)
        guard result >= 0 else { throw Failure(operation: "sending \(member)", code: -result) }
    }

    /// Answers every deferred call with `value`.
    package func answerDeferred(_ value: BusReplyValue) {
        let calls = deferred
        deferred = []
        for call in calls {
            send(.values([value]), to: call)
            sd_bus_message_unref(call)
        }
    }

    /// Whether calls wait for `answerDeferred`.
    package var hasDeferred: Bool { !deferred.isEmpty }

    private func received(_ message: OpaquePointer) -> Int32 {
        guard sd_bus_message_is_method_call(message, nil, nil) > 0 else { return 0 }
        let call = NetworkManagerCall(
            path: sd_bus_message_get_path(message).map { String(cString: $0) } ?? "/",
            interface: sd_bus_message_get_interface(message).map { String(cString: $0) },
            member: sd_bus_message_get_member(message).map { String(cString: $0) } ?? "",
            strings: leadingStrings(message)
        )
        let reply = handler(call)
        switch reply {
        case .notHandled:
            return 0
        case .checkConnectivity:
            guard deferred.count < deferredLimit else {
                send(.error(name: "org.freedesktop.NetworkManager.Failed", message: "too many connectivity checks waiting"), to: message)
                return 1
            }
            deferred.append(sd_bus_message_ref(message))
            return 1
        case .values, .error:
            send(reply, to: message)
            return 1
        }
    }

    private func send(_ reply: NetworkManagerReply, to call: OpaquePointer) {
        // A caller that asked for no reply gets none (sd-bus would drop it anyway).
        guard sd_bus_message_get_expect_reply(call) > 0 else { return }
        switch reply {
        case let .values(values):
            var message: OpaquePointer?
            guard sd_bus_message_new_method_return(call, &message) >= 0, let message else { return }
            defer { sd_bus_message_unref(message) }
            do {
                for value in values { try append(.value(value), to: message) }
            } catch {
                return
            }
            _ = sd_bus_send(bus, message, nil)
        case let .error(name, text):
            name.withCString { name in
                text.withCString { text in
                    var error = sd_bus_error(name: name, message: text, _need_free: 0)
                    _ = sd_bus_reply_method_error(call, &error)
                }
            }
        case .checkConnectivity, .notHandled:
            break
        }
    }

    /// The call's first arguments while they are strings (at most three, each at most 256 bytes).
    private func leadingStrings(_ message: OpaquePointer) -> [String] {
        var strings: [String] = []
        while strings.count < 3 {
            var type: CChar = 0
            guard sd_bus_message_peek_type(message, &type, nil) > 0, type == CChar(UInt8(ascii: "s")) else { break }
            var pointer: UnsafePointer<CChar>?
            guard sd_bus_message_read_basic(message, type, &pointer) > 0, let pointer else { break }
            let length = strnlen(pointer, 256)
            strings.append(String(decoding: UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: length), as: UTF8.self))
        }
        return strings
    }

    private func nameReplied(_ reply: OpaquePointer) {
        if let error = sd_bus_message_get_error(reply), let name = error.pointee.name {
            nameEvents.append(.refused(String(cString: name)))
            return
        }
        var code: UInt32 = 0
        guard sd_bus_message_read_basic(reply, CChar(UInt8(ascii: "u")), &code) > 0 else { return nameEvents.append(.refused("malformed reply")) }
        // DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER (1), _ALREADY_OWNER (4); queued (2) or exists (3) is no name.
        nameEvents.append(code == 1 || code == 4 ? .acquired : .refused("the name has an owner"))
    }

    private func nameLost(_ message: OpaquePointer) {
        var pointer: UnsafePointer<CChar>?
        guard sd_bus_message_read_basic(message, CChar(UInt8(ascii: "s")), &pointer) > 0, let pointer,
              String(cString: pointer) == NetworkManagerObjects.managerInterface else { return }
        nameEvents.append(.lost)
    }

    private func append(_ value: BusWireValue, to message: OpaquePointer) throws(Failure) {
        func check(_ result: Int32) throws(Failure) {
            guard result >= 0 else { throw Failure(operation: "building a message", code: -result) }
        }
        func basic(_ type: Character, _ pointer: UnsafeRawPointer) throws(Failure) {
            try check(sd_bus_message_append_basic(message, CChar(type.asciiValue!), pointer))
        }
        func string(_ type: Character, _ text: String) throws(Failure) {
            let result = text.withCString { sd_bus_message_append_basic(message, CChar(type.asciiValue!), $0) }
            try check(result)
        }
        func container(_ type: Character, _ contents: String, _ body: () throws(Failure) -> Void) throws(Failure) {
            try check(sd_bus_message_open_container(message, CChar(type.asciiValue!), contents))
            try body()
            try check(sd_bus_message_close_container(message))
        }
        switch value {
        case let .strings(strings):
            try container("a", "s") { () throws(Failure) in for text in strings { try string("s", text) } }
        case let .value(value):
            switch value {
            case let .uint32(number):
                var number = number
                try basic("u", &number)
            case let .bool(flag):
                var flag: Int32 = flag ? 1 : 0
                try basic("b", &flag)
            case let .string(text): try string("s", text)
            case let .objectPath(path): try string("o", path)
            case let .objectPaths(paths):
                try container("a", "o") { () throws(Failure) in for path in paths { try string("o", path) } }
            case let .uint32s(numbers):
                try container("a", "u") { () throws(Failure) in
                    for var number in numbers { try basic("u", &number) }
                }
            case let .uint32Pair(first, second):
                try container("r", "uu") { () throws(Failure) in
                    var first = first, second = second
                    try basic("u", &first)
                    try basic("u", &second)
                }
            case let .properties(properties):
                try container("a", "{sv}") { () throws(Failure) in
                    for (name, property) in properties.sorted(by: { $0.key < $1.key }) {
                        try container("e", "sv") { () throws(Failure) in
                            try string("s", name)
                            try container("v", property.signature) { () throws(Failure) in try append(.value(property), to: message) }
                        }
                    }
                }
            case let .stringMap(map):
                try container("a", "{ss}") { () throws(Failure) in
                    for (key, text) in map.sorted(by: { $0.key < $1.key }) {
                        try container("e", "ss") { () throws(Failure) in
                            try string("s", key)
                            try string("s", text)
                        }
                    }
                }
            case let .variant(inner):
                try container("v", inner.signature) { () throws(Failure) in try append(.value(inner), to: message) }
            case let .objects(tree):
                try container("a", "{oa{sa{sv}}}") { () throws(Failure) in
                    for (path, interfaces) in tree.sorted(by: { $0.key < $1.key }) {
                        try container("e", "oa{sa{sv}}") { () throws(Failure) in
                            try string("o", path)
                            try append(.interfaces(interfaces), to: message)
                        }
                    }
                }
            }
        case let .interfaces(interfaces):
            try container("a", "{sa{sv}}") { () throws(Failure) in
                for (interface, properties) in interfaces.sorted(by: { $0.key < $1.key }) {
                    try container("e", "sa{sv}") { () throws(Failure) in
                        try string("s", interface)
                        try append(.value(.properties(properties)), to: message)
                    }
                }
            }
        }
    }
}

/// A signal's argument: a value, or the `as` and `a{sa{sv}}` that object signals carry.
package enum BusWireValue: Sendable, Hashable {
    /// One value with its own signature.
    case value(BusReplyValue)
    /// `as` (`PropertiesChanged`' invalidated names, `InterfacesRemoved`' interfaces).
    case strings([String])
    /// `a{sa{sv}}` (`InterfacesAdded`).
    case interfaces([String: [String: BusReplyValue]])

    /// `.value(.string(text))`.
    package static func string(_ text: String) -> BusWireValue { .value(.string(text)) }
    /// `.value(.properties(properties))`.
    package static func properties(_ properties: [String: BusReplyValue]) -> BusWireValue { .value(.properties(properties)) }
}
