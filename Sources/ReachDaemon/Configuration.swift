import Logging
import ReachabilityCore

/// What `reachd.toml` configures: one struct per TOML table, each property at its built-in
/// default, which is also what a key left out of the file means.
///
/// Values come from the file alone; `reachd` lets its command line win over them (command
/// line > config file > defaults). To add a table: a struct like `Log`, a property, a
/// `CodingKeys` case and a `read` line in `init(from:)`.
public struct ReachdConfiguration: Sendable, Equatable, Decodable {
    /// Where the system configuration file lives.
    public static let defaultPath = "/etc/reachd/reachd.toml"

    /// `[socket]`.
    public var socket = Socket()
    /// `[log]`.
    public var log = Log()
    /// `[interfaces]`.
    public var interfaces = Interfaces()
    /// `[netlink]`.
    public var netlink = Netlink()

    /// The built-in defaults.
    public init() {}

    /// Reads every table. The first problem in each table (or all its unknown keys) and every
    /// unknown table are thrown together (as `ConfigurationProblems`), so one run names them all.
    public init(from decoder: any Decoder) throws {
        var problems = try decoder.unknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func read<Table: Setting>(_ key: CodingKeys, _ table: inout Table) {
            do {
                table = try container.setting(Table.self, key) ?? table
            } catch {
                problems += (error as? ConfigurationProblems)?.errors ?? [error]
            }
        }
        read(.socket, &socket)
        read(.log, &log)
        read(.interfaces, &interfaces)
        read(.netlink, &netlink)
        if !problems.isEmpty { throw ConfigurationProblems(errors: problems) }
    }

    private enum CodingKeys: String, CodingKey, CaseIterable { case socket, log, interfaces, netlink }

    // Each table reads the keys present (the others keep their defaults), then rejects unknown
    // ones: within a table, decoding stops at the first bad value.

    /// `[socket]`: the Varlink socket file.
    public struct Socket: Sendable, Equatable, ConfigurationTable {
        /// `path`: nil means computed (`SocketLocation.daemonDefault`).
        public var path: String?
        /// `mode`: permission bits of the socket file.
        public var mode: UInt32 = 0o666

        init() {}
        /// Reads `path` and `mode`.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            path = try container.setting(SocketPath.self, .path)?.value ?? path
            mode = try container.setting(FileMode.self, .mode)?.value ?? mode
            try decoder.rejectUnknownKeys(CodingKeys.self)
        }
        private enum CodingKeys: String, CodingKey, CaseIterable { case path, mode }
    }

    /// `[log]`.
    public struct Log: Sendable, Equatable, ConfigurationTable {
        /// `level`: the least severe level logged.
        public var level: Logger.Level = .info

        init() {}
        /// Reads `level`.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            level = try container.setting(Choice<Logger.Level>.self, .level)?.value ?? level
            try decoder.rejectUnknownKeys(CodingKeys.self)
        }
        private enum CodingKeys: String, CodingKey, CaseIterable { case level }
    }

    /// `[interfaces]`: which interfaces to leave out, and per-interface overrides.
    public struct Interfaces: Sendable, Equatable, ConfigurationTable {
        /// `ignore` (globs) and `[[interfaces.override]]`, as the engine applies them.
        public var policy = InterfacePolicy()

        init() {}
        /// Reads `ignore` and `override`.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let ignore = try container.setting([InterfaceGlob].self, .ignore) { policy.ignoredPatterns = ignore.map(\.value) }
            if let overrides = try container.setting([Override].self, .override) { policy.overrides = overrides.map(\.value) }
            try decoder.rejectUnknownKeys(CodingKeys.self)
        }
        private enum CodingKeys: String, CodingKey, CaseIterable { case ignore, override }

        /// One `[[interfaces.override]]`: `match` is required, the rest optional.
        struct Override: ConfigurationTable {
            var value: InterfacePolicy.Override

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                guard let match = try container.setting(InterfaceGlob.self, .match) else {
                    throw DecodingError.keyNotFound(CodingKeys.match, .init(
                        codingPath: decoder.codingPath,
                        debugDescription: "missing required key \"match\" (the interface-name glob this override applies to)"
                    ))
                }
                value = InterfacePolicy.Override(
                    pattern: match.value,
                    type: try container.setting(Choice<InterfaceType>.self, .type)?.value,
                    isExpensive: try container.setting(Bool.self, .expensive),
                    isConstrained: try container.setting(Bool.self, .constrained)
                )
                try decoder.rejectUnknownKeys(CodingKeys.self)
            }
            private enum CodingKeys: String, CodingKey, CaseIterable { case match, type, expensive, constrained }
        }
    }

    /// `[netlink]`: the rtnetlink socket.
    public struct Netlink: Sendable, Equatable, ConfigurationTable {
        /// The sizes `receive-buffer-size` accepts: 64 KiB…1 GiB.
        public static let acceptedReceiveBufferSizes = (64 << 10)...(1 << 30)
        /// `receive-buffer-size`, in bytes.
        public var receiveBufferSize = 8 << 20

        init() {}
        /// Reads `receive-buffer-size`.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            receiveBufferSize = try container.setting(ReceiveBufferSize.self, .receiveBufferSize)?.value ?? receiveBufferSize
            try decoder.rejectUnknownKeys(CodingKeys.self)
        }
        private enum CodingKeys: String, CodingKey, CaseIterable { case receiveBufferSize = "receive-buffer-size" }
    }
}

// MARK: - Checked values: each refuses a bad value in `init(from:)`, with the message users see.

/// `[socket] path`: absolute, not a directory, no NUL, short enough for `sockaddr_un`
/// (107 bytes and a NUL).
struct SocketPath: Setting {
    static let expected = "a string"
    var value: String

    init(from decoder: any Decoder) throws {
        value = try decoder.scalar()
        let length = value.utf8.count
        if !value.hasPrefix("/") { throw decoder.invalid("\"\(value)\" is not an absolute path") }
        if value.hasSuffix("/") { throw decoder.invalid("\"\(value)\" names a directory, not a socket file") }
        if value.utf8.contains(0) { throw decoder.invalid("the path contains a NUL byte") }
        if length > 107 {
            throw decoder.invalid("the path is \(length) bytes long, more than a Unix socket address holds (107)")
        }
    }
}

/// `[socket] mode`: "666" or "0666", up to 0777; "0o666", "1777" or "0888" are refused.
struct FileMode: Setting {
    static let expected = "a string"
    var value: UInt32

    init(from decoder: any Decoder) throws {
        let text: String = try decoder.scalar()
        guard (3...4).contains(text.count), text.allSatisfy({ ("0"..."7").contains($0) }),
              let mode = UInt32(text, radix: 8), mode <= 0o777
        else {
            throw decoder.invalid("\"\(text)\" is not a file mode (expected 3 or 4 octal digits up to 0777, such as \"0666\")")
        }
        value = mode
    }
}

/// An interface-name glob: not empty, and without whitespace or "/", which no interface name has.
struct InterfaceGlob: Setting {
    static let expected = "a string"
    var value: String

    init(from decoder: any Decoder) throws {
        value = try decoder.scalar()
        if value.isEmpty { throw decoder.invalid("empty pattern (expected an interface-name glob such as \"docker*\")") }
        if value.contains(where: { $0.isWhitespace || $0 == "/" }) {
            throw decoder.invalid("pattern \"\(value)\" can never match: interface names contain no whitespace or \"/\"")
        }
    }
}

/// `[netlink] receive-buffer-size`: within `Netlink.acceptedReceiveBufferSizes`.
struct ReceiveBufferSize: Setting {
    static let expected = "an integer"
    var value: Int

    init(from decoder: any Decoder) throws {
        value = try decoder.scalar()
        let range = ReachdConfiguration.Netlink.acceptedReceiveBufferSizes
        if !range.contains(value) {
            throw decoder.invalid("\(value) is out of range (\(range.lowerBound)…\(range.upperBound) bytes, 64 KiB…1 GiB)")
        }
    }
}

/// A string naming a case of `Value`: a log level, an interface type.
struct Choice<Value: NamedChoice>: Setting {
    static var expected: String { "a string" }
    var value: Value

    init(from decoder: any Decoder) throws {
        let text: String = try decoder.scalar()
        guard let value = Value(rawValue: text) else {
            let names = Value.allCases.map(\.rawValue).joined(separator: ", ")
            throw decoder.invalid("unknown \(Value.settingName) \"\(text)\" (expected \(names))")
        }
        self.value = value
    }
}

/// An enumeration a setting names by raw value; `settingName` is what messages call it.
protocol NamedChoice: RawRepresentable<String>, CaseIterable {
    static var settingName: String { get }
}

extension Logger.Level: NamedChoice { static let settingName = "log level" }
extension InterfaceType: NamedChoice { static let settingName = "interface type" }
