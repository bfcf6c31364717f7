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
    ]

    func testSplitter() {
        for test in cases {
            var splitter = VarlinkFrameSplitter(maximumMessageSize: test.limit)
            var messages: [String] = []
            var failure: VarlinkFramingError?
            outer: for chunk in test.chunks {
                splitter.append(Array(chunk.utf8))
                do {
                    while let message = try splitter.next() { messages.append(String(decoding: message, as: UTF8.self)) }
                } catch {
                    failure = error
                    break outer
                }
            }
            XCTAssertEqual(messages, test.messages, test.name)
            XCTAssertEqual(failure, test.error, test.name)
            if test.error == nil { XCTAssertEqual(splitter.bufferedByteCount, test.leftover, test.name) }
        }
    }

    func testNIODecoder() {
        for test in cases {
            var decoder = VarlinkFrameDecoder(maximumMessageSize: test.limit)
            var buffer = ByteBuffer()
            var messages: [String] = []
            var failure: VarlinkFramingError?
            outer: for chunk in test.chunks {
                buffer.writeString(chunk)
                do {
                    while let message = try decoder.decode(buffer: &buffer) { messages.append(String(buffer: message)) }
                } catch {
                    failure = error as? VarlinkFramingError
                    break outer
                }
            }
            XCTAssertEqual(messages, test.messages, test.name)
            XCTAssertEqual(failure, test.error, test.name)
            if test.error == nil { XCTAssertEqual(buffer.readableBytes, test.leftover, test.name) }
        }
    }

    func testDefaultLimitIs64KiB() throws {
        XCTAssertEqual(VarlinkFraming.defaultMaximumMessageSize, 65536)
        var splitter = VarlinkFrameSplitter()
        splitter.append([UInt8](repeating: 0x20, count: 65536) + [0])
        XCTAssertEqual(try splitter.next()?.count, 65536)
        splitter.append([UInt8](repeating: 0x20, count: 65537))
        XCTAssertThrowsError(try splitter.next())
    }

    func testCompactionKeepsLongStreamsCorrect() throws {
        var splitter = VarlinkFrameSplitter()
        var count = 0
        for index in 0..<5000 {
            splitter.append(Array("{\"i\":\(index)}\0".utf8))
            while let message = try splitter.next() {
                XCTAssertEqual(String(decoding: message, as: UTF8.self), "{\"i\":\(count)}")
                count += 1
            }
        }
        XCTAssertEqual(count, 5000)
        XCTAssertEqual(splitter.bufferedByteCount, 0)
    }
}

extension FramingTests {
    /// A message that trickles in one byte at a time is scanned once, not once per byte.
    func testByteByByteDeliveryIsLinear() throws {
        let message = Array(String(repeating: "x", count: 60_000).utf8)
        var splitter = VarlinkFrameSplitter()
        var decoder = VarlinkFrameDecoder()
        var buffer = ByteBuffer()
        let start = ContinuousClock.now
        for byte in message {
            splitter.append([byte])
            XCTAssertNil(try splitter.next())
            buffer.writeInteger(byte)
            XCTAssertNil(try decoder.decode(buffer: &buffer))
        }
        splitter.append([0])
        buffer.writeInteger(UInt8(0))
        XCTAssertEqual(try splitter.next()?.count, message.count)
        XCTAssertEqual(try decoder.decode(buffer: &buffer)?.readableBytes, message.count)
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(5))
    }
}
