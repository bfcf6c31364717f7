import NIOCore
import ReachProtocol
import XCTest

final class FramingTests: XCTestCase {
    private struct Case {
        var name: String
        var chunks: [String]
        var limit = 64
        var messages: [String]
        var error: VarlinkFramingError?
        var leftover = 0
    }

    private let cases: [Case] = [
        Case(name: "empty input", chunks: [], messages: []),
        Case(name: "empty chunk", chunks: [""], messages: []),
        Case(name: "one message", chunks: ["{}\0"], messages: ["{}"]),
        Case(name: "split across chunks", chunks: ["{\"me", "thod\":", "\"a.b\"}", "\0"], messages: ["{\"method\":\"a.b\"}"]),
        Case(name: "several in one chunk", chunks: ["{\"a\":1}\0{\"b\":2}\0{\"c\""], messages: ["{\"a\":1}", "{\"b\":2}"], leftover: 4),
        Case(name: "terminator in its own chunk", chunks: ["[1]", "\0", "[2]\0"], messages: ["[1]", "[2]"]),
        Case(name: "exactly at the limit", chunks: [String(repeating: "x", count: 64) + "\0"], messages: [String(repeating: "x", count: 64)]),
        Case(name: "oversize complete", chunks: [String(repeating: "x", count: 65) + "\0"], messages: [], error: .messageTooLarge(limit: 64)),
        Case(name: "oversize without terminator", chunks: [String(repeating: "x", count: 40), String(repeating: "x", count: 40)], messages: [], error: .messageTooLarge(limit: 64)),
        Case(name: "good then oversize", chunks: ["{}\0" + String(repeating: "y", count: 100)], messages: ["{}"], error: .messageTooLarge(limit: 64)),
        Case(name: "lone terminator", chunks: ["\0"], messages: [], error: .emptyMessage),
        Case(name: "terminator after a message", chunks: ["{}\0", "\0"], messages: ["{}"], error: .emptyMessage),
    ]

    /// What one decoder makes of `chunks` written one after another into one buffer.
    private struct Cut: Equatable {
        var messages: [String] = []
        var error: VarlinkFramingError?
        var leftover = 0
    }

    private func cut(_ chunks: [[UInt8]], limit: Int) -> Cut {
        var decoder = VarlinkFrameDecoder(maximumMessageSize: limit)
        var buffer = ByteBuffer()
        var result = Cut()
        for chunk in chunks {
            buffer.writeBytes(chunk)
            do {
                while let message = try decoder.decode(buffer: &buffer) { result.messages.append(String(buffer: message)) }
            } catch {
                result.error = error
                break
            }
        }
        result.leftover = buffer.readableBytes
        return result
    }

    func testTable() {
        for test in cases {
            let result = cut(test.chunks.map { Array($0.utf8) }, limit: test.limit)
            XCTAssertEqual(result.messages, test.messages, test.name)
            XCTAssertEqual(result.error, test.error, test.name)
            if test.error == nil { XCTAssertEqual(result.leftover, test.leftover, test.name) }
        }
    }

    /// However the bytes arrive, they are cut as if they came in one read: the incremental
    /// scan never skips a NUL or lets a message past the limit.
    func testEveryDeliveryCutsAlike() {
        for test in cases {
            let stream = Array(test.chunks.joined().utf8)
            let whole = cut([stream], limit: test.limit)
            XCTAssertEqual(whole.messages, test.messages, test.name)
            XCTAssertEqual(whole.error, test.error, test.name)
            for size in [1, 2, 3, 7, 64] {
                let pieces = stride(from: 0, to: stream.count, by: size).map { Array(stream[$0..<min($0 + size, stream.count)]) }
                var pieced = cut(pieces, limit: test.limit)
                if whole.error != nil { pieced.leftover = whole.leftover }  // where it stopped reading differs
                XCTAssertEqual(pieced, whole, "\(test.name) in pieces of \(size)")
            }
        }
    }

    func testDefaultLimitIs64KiB() throws {
        XCTAssertEqual(VarlinkFraming.defaultMaximumMessageSize, 65536)
        var decoder = VarlinkFrameDecoder()
        var buffer = ByteBuffer(bytes: [UInt8](repeating: 0x20, count: 65536) + [0])
        XCTAssertEqual(try decoder.decode(buffer: &buffer)?.readableBytes, 65536)
        buffer.writeBytes([UInt8](repeating: 0x20, count: 65537))
        XCTAssertThrowsError(try decoder.decode(buffer: &buffer)) { XCTAssertEqual($0 as? VarlinkFramingError, .messageTooLarge(limit: 65536)) }
    }

    func testLongStreamThroughOneBuffer() throws {
        var decoder = VarlinkFrameDecoder()
        var buffer = ByteBuffer()
        var count = 0
        for index in 0..<5000 {
            buffer.writeString("{\"i\":\(index)}\0")
            while let message = try decoder.decode(buffer: &buffer) {
                XCTAssertEqual(String(buffer: message), "{\"i\":\(count)}")
                count += 1
            }
            if index % 100 == 0 { buffer.discardReadBytes() }
        }
        XCTAssertEqual(count, 5000)
        XCTAssertEqual(buffer.readableBytes, 0)
    }

    /// A message that trickles in is searched for its NUL once, not again with every read:
    /// rescanning would read about 2 TB here (hours); once takes seconds even on a loaded machine.
    func testTricklingMessageIsScannedOnce() throws {
        let size = 16 << 20, piece = [UInt8](repeating: 0x20, count: 64)
        var decoder = VarlinkFrameDecoder(maximumMessageSize: size)
        var buffer = ByteBuffer()
        buffer.reserveCapacity(size + 1)
        let start = ContinuousClock.now
        for _ in 0..<(size / piece.count) {
            buffer.writeBytes(piece)
            XCTAssertNil(try decoder.decode(buffer: &buffer))
        }
        buffer.writeInteger(UInt8(0))
        XCTAssertEqual(try decoder.decode(buffer: &buffer)?.readableBytes, size)
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(60))
    }
}
