#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Varlink framing: every message is one JSON object followed by a NUL byte.
///
/// The scanning rule lives here once; `VarlinkFrameSplitter` (plain bytes) and
/// `VarlinkFrameDecoder` (NIO) both apply it, so server and client cut frames alike.
public enum VarlinkFraming {
    /// The largest request the server accepts, terminator excluded (64 KiB).
    public static let defaultMaximumMessageSize = 64 * 1024

    /// The largest reply a client accepts (16 MiB): replies grow with the host (a container
    /// host's ListInterfaces is hundreds of KiB), so the request limit is no limit for them.
    public static let maximumReplySize = 16 << 20

    /// The message terminator.
    public static let terminator: UInt8 = 0

    /// Finds the first complete frame in `bytes`.
    ///
    /// - Returns: the length of the message before its NUL, or nil when more bytes are needed.
    /// - Throws: `.messageTooLarge` when the message (complete or not) exceeds the limit,
    ///   `.emptyMessage` for a NUL with nothing before it.
    public static func frameLength(in bytes: some Collection<UInt8>, maximumMessageSize: Int) throws(VarlinkFramingError) -> Int? {
        var scanned = 0
        return try frameLength(in: bytes, maximumMessageSize: maximumMessageSize, scanned: &scanned)
    }

    /// Like `frameLength(in:maximumMessageSize:)`, skipping the first `scanned` bytes,
    /// which an earlier call already found free of NULs.
    ///
    /// Incremental scanning keeps a message that trickles in byte by byte linear in cost,
    /// not quadratic. On return `scanned` is the new NUL-free prefix length (0 after a frame).
    public static func frameLength(
        in bytes: some Collection<UInt8>, maximumMessageSize: Int, scanned: inout Int
    ) throws(VarlinkFramingError) -> Int? {
        // Contiguous bytes (a ByteBuffer, an Array) are searched with memchr: a message of
        // 64 KiB is found in microseconds even in a debug build.
        var position = scanned
        if let found = bytes.withContiguousStorageIfAvailable({ buffer in
            Self.search(buffer, from: position, maximumMessageSize: maximumMessageSize)
        }) {
            switch found {
            case let .frame(length):
                if length == 0 { throw .emptyMessage }
                scanned = 0
                return length
            case .tooLarge:
                throw .messageTooLarge(limit: maximumMessageSize)
            case let .incomplete(searched):
                scanned = searched
                return nil
            }
        }
        for byte in bytes.dropFirst(position) {
            if byte == terminator {
                if position == 0 { throw .emptyMessage }
                scanned = 0
                return position
            }
            position += 1
            // Stop scanning as soon as the limit is crossed: no need to see the rest.
            if position > maximumMessageSize { throw .messageTooLarge(limit: maximumMessageSize) }
        }
        scanned = position
        return nil
    }

    private enum Search {
        case frame(Int)
        case tooLarge
        case incomplete(searched: Int)
    }

    /// The NUL in `buffer` at or after `start` and within the size limit, if any.
    private static func search(_ buffer: UnsafeBufferPointer<UInt8>, from start: Int, maximumMessageSize: Int) -> Search {
        // A NUL at index `maximumMessageSize` still ends an acceptable message.
        let end = min(buffer.count, maximumMessageSize + 1)
        if start < end, let base = buffer.baseAddress, let hit = memchr(base + start, Int32(terminator), end - start) {
            return .frame(UnsafeRawPointer(hit) - UnsafeRawPointer(base))
        }
        return buffer.count > maximumMessageSize ? .tooLarge : .incomplete(searched: buffer.count)
    }
}

/// Why a byte stream cannot be cut into Varlink messages. The connection is unusable after it.
public enum VarlinkFramingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A message is longer than the limit.
    case messageTooLarge(limit: Int)
    /// A NUL arrived with no message before it.
    case emptyMessage

    /// One line for logs.
    public var description: String {
        switch self {
        case let .messageTooLarge(limit): return "message larger than \(limit) bytes"
        case .emptyMessage: return "empty message"
        }
    }
}

/// Cuts a byte stream into Varlink messages, without NIO.
///
/// Feed it bytes as they arrive with `append(_:)`; take messages with `next()` until it
/// returns nil. After it throws, the stream is broken and the connection should close.
public struct VarlinkFrameSplitter: Sendable {
    /// Messages longer than this are refused.
    public let maximumMessageSize: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var scanned = 0

    /// Creates a splitter with the given size limit.
    public init(maximumMessageSize: Int = VarlinkFraming.defaultMaximumMessageSize) {
        self.maximumMessageSize = maximumMessageSize
    }

    /// Bytes received but not yet returned as a message.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    /// The next complete message (without its NUL), or nil when more bytes are needed.
    public mutating func next() throws(VarlinkFramingError) -> [UInt8]? {
        let pending = buffer[start...]
        guard let length = try VarlinkFraming.frameLength(in: pending, maximumMessageSize: maximumMessageSize, scanned: &scanned) else {
            return nil
        }
        let message = Array(buffer[start..<(start + length)])
        start += length + 1
        // Compact once the consumed prefix dominates, so the buffer never grows unbounded.
        if start > 4096 && start * 2 > buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
        return message
    }
}
