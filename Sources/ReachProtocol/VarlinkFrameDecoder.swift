import NIOCore

/// NIO decoder producing one `ByteBuffer` per Varlink message (NUL stripped).
///
/// Wrap it in `ByteToMessageHandler`. A message over the limit, or an empty one, fails
/// the pipeline with `VarlinkFramingError`; the connection should then be closed.
public struct VarlinkFrameDecoder: NIOSingleStepByteToMessageDecoder {
    /// One message, terminator removed.
    public typealias InboundOut = ByteBuffer

    /// Messages longer than this are refused.
    public let maximumMessageSize: Int
    /// Leading readable bytes already known to hold no NUL.
    private var scanned = 0

    /// Creates a decoder with the given size limit.
    public init(maximumMessageSize: Int = VarlinkFraming.defaultMaximumMessageSize) {
        self.maximumMessageSize = maximumMessageSize
    }

    /// Takes one message off the front of `buffer`, if a whole one is there.
    public mutating func decode(buffer: inout ByteBuffer) throws -> ByteBuffer? {
        guard let length = try VarlinkFraming.frameLength(in: buffer.readableBytesView, maximumMessageSize: maximumMessageSize, scanned: &scanned) else {
            return nil
        }
        let message = buffer.readSlice(length: length)
        buffer.moveReaderIndex(forwardBy: 1)
        return message
    }

    /// At end of stream, a partial message is dropped: the peer never finished it.
    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> ByteBuffer? {
        try decode(buffer: &buffer)
    }
}

extension ByteBuffer {
    /// Writes `value` as one Varlink frame (JSON then NUL).
    @discardableResult
    public mutating func writeVarlinkMessage(_ value: some Encodable) throws -> Int {
        let bytes = try VarlinkCoding.encodeFrame(value)
        return writeBytes(bytes)
    }
}
