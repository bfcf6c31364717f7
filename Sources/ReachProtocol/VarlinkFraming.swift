/// Varlink framing: every message is one JSON object followed by a NUL byte.
///
/// The limits and the errors of the one framer, `VarlinkFrameDecoder`, which the server, the
/// NIO client and the blocking `VarlinkConnection` all cut with.
package enum VarlinkFraming {
    /// The largest request the server accepts, terminator excluded (64 KiB).
    package static let defaultMaximumMessageSize = 64 * 1024

    /// The largest reply a client accepts (16 MiB): replies grow with the host (a container
    /// host's ListInterfaces is hundreds of KiB), so the request limit is no limit for them.
    package static let maximumReplySize = 16 << 20

    /// The message terminator.
    package static let terminator: UInt8 = 0
}

/// Why a byte stream cannot be cut into Varlink messages. The connection is unusable after it.
package enum VarlinkFramingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A message is longer than the limit.
    case messageTooLarge(limit: Int)
    /// A NUL arrived with no message before it.
    case emptyMessage

    /// One line for logs.
    package var description: String {
        switch self {
        case let .messageTooLarge(limit): return "message larger than \(limit) bytes"
        case .emptyMessage: return "empty message"
        }
    }
}
