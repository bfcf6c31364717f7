#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

/// Cuts a byte stream into Varlink messages, one `ByteBuffer` each (NUL stripped): the one
/// framer, used by the server (`RequestFramingHandler`), by `ReachabilityClient` (wrapped in
/// a `ByteToMessageHandler`) and by the blocking `VarlinkConnection`.
///
/// A message over the limit, or an empty one, throws `VarlinkFramingError`; the stream is
/// broken then and the connection should close. Scanning is incremental: bytes already
/// searched for a NUL are not searched again, so a message that trickles in byte by byte
/// costs linear time, not quadratic.
package struct VarlinkFrameDecoder: NIOSingleStepByteToMessageDecoder {
    /// One message, terminator removed.
    package typealias InboundOut = ByteBuffer

    /// Messages longer than this are refused.
    package let maximumMessageSize: Int
    /// Leading readable bytes already known to hold no NUL.
    private var scanned = 0

    /// Creates a decoder with the given size limit.
    package init(maximumMessageSize: Int = VarlinkFraming.defaultMaximumMessageSize) {
        self.maximumMessageSize = maximumMessageSize
    }

    /// Takes one message off the front of `buffer`, if a whole one is there.
    ///
    /// - Throws: `.messageTooLarge` once the message (complete or not) exceeds the limit,
    ///   `.emptyMessage` for a NUL with nothing before it.
    package mutating func decode(buffer: inout ByteBuffer) throws(VarlinkFramingError) -> ByteBuffer? {
        let (start, limit) = (scanned, maximumMessageSize)
        switch buffer.withUnsafeReadableBytes({ Self.search($0, from: start, maximumMessageSize: limit) }) {
        case let .incomplete(searched):
            scanned = searched
            return nil
        case .tooLarge:
            throw .messageTooLarge(limit: maximumMessageSize)
        case .frame(0):
            throw .emptyMessage
        case let .frame(length):
            scanned = 0
            let message = buffer.readSlice(length: length)
            buffer.moveReaderIndex(forwardBy: 1)
            return message
        }
    }

    /// At end of stream, a partial message is dropped: the peer never finished it.
    package mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws(VarlinkFramingError) -> ByteBuffer? {
        try decode(buffer: &buffer)
    }

    private enum Search {
        case frame(Int)
        case tooLarge
        case incomplete(searched: Int)
    }

    /// The first NUL in `bytes` at or after `start` and within the size limit, if any.
    /// memchr finds it in a 64 KiB message in microseconds, even in a debug build.
    private static func search(_ bytes: UnsafeRawBufferPointer, from start: Int, maximumMessageSize: Int) -> Search {
        // A NUL at index `maximumMessageSize` still ends an acceptable message; past it,
        // nothing more needs to be seen.
        let end = min(bytes.count, maximumMessageSize + 1)
        if start < end, let base = bytes.baseAddress, let hit = memchr(base + start, Int32(VarlinkFraming.terminator), end - start) {
            return .frame(UnsafeRawPointer(hit) - base)
        }
        return bytes.count > maximumMessageSize ? .tooLarge : .incomplete(searched: bytes.count)
    }
}

extension ByteBuffer {
    /// Writes `value` as one Varlink frame (JSON then NUL).
    @discardableResult
    package mutating func writeVarlinkMessage(_ value: some Encodable) throws -> Int {
        let bytes = try VarlinkCoding.encodeFrame(value)
        return writeBytes(bytes)
    }
}
