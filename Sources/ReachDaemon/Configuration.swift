import Logging
import ReachabilityCore

/// What `reachd.toml` configures, with every field at its built-in default.
///
/// Values here come from the file alone; `reachd` then lets its command line win over
/// them (command line > config file > defaults).
public struct ReachdConfiguration: Sendable, Equatable {
    /// Where the system configuration file lives.
    public static let defaultPath = "/etc/reachd/reachd.toml"
    /// Smallest accepted netlink receive buffer: 64 KiB.
    public static let minimumReceiveBufferSize = 64 << 10
    /// Largest accepted netlink receive buffer: 1 GiB.
    public static let maximumReceiveBufferSize = 1 << 30
    /// The built-in netlink receive buffer: 8 MiB.
    public static let defaultReceiveBufferSize = 8 << 20
    /// The longest socket path `sockaddr_un` can hold (107 bytes and a NUL).
    public static let maximumSocketPathLength = 107

    /// `[socket] path`: nil means computed (`SocketLocation.daemonDefault`).
    public var socketPath: String?
    /// `[socket] mode`: permission bits of the socket file.
    public var socketMode: UInt32 = 0o666
    /// `[log] level`.
    public var logLevel: Logger.Level = .info
    /// `[interfaces] ignore` and `[[interfaces.override]]`.
    public var policy = InterfacePolicy()
    /// `[netlink] receive-buffer-size`, in bytes.
    public var receiveBufferSize: Int = ReachdConfiguration.defaultReceiveBufferSize

    /// The built-in defaults.
    public init() {}
}

/// A dotted path to a value in the configuration, such as `interfaces.override[1].type`.
public struct ConfigurationKeyPath: Sendable, Hashable, CustomStringConvertible {
    /// One step: a table key or an array index.
    public enum Component: Sendable, Hashable {
        /// A key in a table.
        case key(String)
        /// A zero-based position in an array.
        case index(Int)
    }

    /// The steps from the document root.
    public var components: [Component]

    /// Creates a path from its steps.
    public init(_ components: [Component] = []) {
        self.components = components
    }

    /// This path extended by a key.
    public func appending(_ key: String) -> ConfigurationKeyPath {
        ConfigurationKeyPath(components + [.key(key)])
    }

    /// This path extended by an array index.
    public func appending(index: Int) -> ConfigurationKeyPath {
        ConfigurationKeyPath(components + [.index(index)])
    }

    /// This path without its last step (the root stays the root).
    public var parent: ConfigurationKeyPath {
        ConfigurationKeyPath(Array(components.dropLast()))
    }

    /// `socket.path`, `interfaces.override[0].type`; keys that are not bare TOML keys are quoted.
    public var description: String {
        var text = ""
        for component in components {
            switch component {
            case let .key(key):
                if !text.isEmpty { text += "." }
                text += Self.render(key)
            case let .index(index):
                text += "[\(index)]"
            }
        }
        return text
    }

    private static func render(_ key: String) -> String {
        let bare = !key.isEmpty && key.unicodeScalars.allSatisfy { scalar in
            switch scalar {
            case "A"..."Z", "a"..."z", "0"..."9", "-", "_": true
            default: false
            }
        }
        if bare { return key }
        var escaped = ""
        for character in key {
            if character == "\\" || character == "\"" { escaped.append("\\") }
            escaped.append(character)
        }
        return "\"\(escaped)\""
    }
}
