import Foundation
import Glibc
import LinuxSystem
import NIOCore
import ReachProtocol
import SystemPackage

private typealias FileDescriptor = SystemPackage.FileDescriptor
import XCTest

/// The blocking connection against a peer played by the test: what it reads, when it
/// gives up, and what a one-shot call makes of each answer.
final class VarlinkConnectionTests: XCTestCase {
    private var directory = ""
    private var path: String { directory + "/peer" }

    override func setUpWithError() throws {
        directory = try FileManager.default.url(
            for: .itemReplacementDirectory, in: .userDomainMask, appropriateFor: URL(fileURLWithPath: NSTemporaryDirectory()), create: true
        ).path
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Accepts the connection waiting on `listener` (one whose connect returned).
    private static func accept(_ listener: FileDescriptor) throws -> FileDescriptor {
        var poller = PollSet([listener])
        guard try poller.wait(timeoutMilliseconds: 5000) == [true] else { throw Errno.timedOut }
        return FileDescriptor(rawValue: try systemCall { Glibc.accept(listener.rawValue, nil, nil) })
    }

    func testReadsAStreamInOrderThenTimesOutThenSeesTheClose() throws {
        let listener = try UnixSocket.listen(at: path, backlog: 4)
        defer { try? listener.close() }
        let connection = try VarlinkConnection(path: path, timeout: .seconds(5))
        let peer = try Self.accept(listener)
        defer { try? peer.close() }
        // Far more than one read, so the connection's buffer is read into and cut many times.
        let stream = (0..<5000).map { "{\"i\":\($0)}\0" }.joined() + "{\"last\""
        _ = try peer.writeAll(Array(stream.utf8))
        for index in 0..<5000 {
            XCTAssertEqual(try connection.receive(timeout: .seconds(5)), .message(ByteBuffer(string: "{\"i\":\(index)}")))
        }
        let started = ContinuousClock.now
        XCTAssertEqual(try connection.receive(timeout: .milliseconds(100)), .timedOut)
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .milliseconds(100))
        _ = try peer.writeAll(Array(":1}\0{\"partial\"".utf8))
        try peer.close()
        XCTAssertEqual(try connection.receive(timeout: .seconds(5)), .message(ByteBuffer(string: "{\"last\":1}")))
        XCTAssertEqual(try connection.receive(timeout: .seconds(5)), .closed, "a partial message at the close is dropped")
    }

    func testAReplyOverTheLimitBreaksTheConnection() throws {
        let listener = try UnixSocket.listen(at: path, backlog: 4)
        defer { try? listener.close() }
        let connection = try VarlinkConnection(path: path, timeout: .seconds(5), maximumMessageSize: 16)
        let peer = try Self.accept(listener)
        defer { try? peer.close() }
        _ = try peer.writeAll(Array("{\"small\":1}\0{\"far too large\":1}\0".utf8))
        XCTAssertEqual(try connection.receive(timeout: .seconds(5)), .message(ByteBuffer(string: "{\"small\":1}")))
        XCTAssertThrowsError(try connection.receive(timeout: .seconds(5))) {
            XCTAssertEqual($0 as? VarlinkFramingError, .messageTooLarge(limit: 16))
        }
    }

    func testSendsTheCallAsOneFrame() throws {
        let listener = try UnixSocket.listen(at: path, backlog: 4)
        defer { try? listener.close() }
        let connection = try VarlinkConnection(path: path, timeout: .seconds(5))
        let peer = try Self.accept(listener)
        defer { try? peer.close() }
        try connection.send(AnyVarlinkCall(method: "io.example.Thing.Do", parameters: ["n": .integer(1)], more: true))
        try connection.send(rawBytes: Array("raw\0".utf8))
        var received = [UInt8](repeating: 0, count: 256)
        var count = 0
        while received[..<count].filter({ $0 == 0 }).count < 2 {
            count += try received[count...].withUnsafeMutableBytes { try peer.read(into: $0) }
        }
        XCTAssertEqual(String(decoding: received[..<count], as: UTF8.self), "{\"method\":\"io.example.Thing.Do\",\"more\":true,\"parameters\":{\"n\":1}}\0raw\0")
    }

    /// What a one-shot call returns for each way a service answers (or does not).
    func testCallOutcomes() throws {
        enum Expected: Equatable { case reply(String), timedOut, unavailable }
        let cases: [(String, answer: String?, close: Bool, Expected)] = [
            ("a reply", #"{"parameters":{"ok":true}}"# + "\0", false, .reply(#"{"parameters":{"ok":true}}"#)),
            ("an error reply", #"{"error":"io.example.Failed","parameters":{}}"# + "\0", false, .reply(#"{"error":"io.example.Failed","parameters":{}}"#)),
            ("silence", nil, false, .timedOut),
            ("a close", nil, true, .unavailable),
            ("not JSON", "not json\0", false, .unavailable),
            ("an empty message", "\0", false, .unavailable),
        ]
        for (name, answer, close, expected) in cases {
            try? FileManager.default.removeItem(atPath: path)
            let listener = try UnixSocket.listen(at: path, backlog: 4)
            defer { try? listener.close() }
            let serving = Thread {
                guard let peer = try? Self.accept(listener) else { return }
                var byte: UInt8 = 1
                // Read the call to its NUL, then answer.
                while byte != 0, (try? withUnsafeMutableBytes(of: &byte) { try peer.read(into: $0) }) == 1 {}
                if let answer { _ = try? peer.writeAll(Array(answer.utf8)) }
                if !close { Thread.sleep(forTimeInterval: 0.5) }
                try? peer.close()
            }
            serving.start()
            let outcome = VarlinkConnection.call("io.example.Thing.Do", parameters: [:], socket: path, timeout: .milliseconds(300))
            let got: Expected
            switch outcome {
            case let .reply(reply): got = .reply(try VarlinkCoding.encodeText(reply))
            case .timedOut: got = .timedOut
            case .unavailable: got = .unavailable
            }
            XCTAssertEqual(got, expected, name)
            Thread.sleep(forTimeInterval: 0.6)  // the peer is done with the listener
        }
        guard case .unavailable = VarlinkConnection.call("io.example.Thing.Do", parameters: [:], socket: directory + "/nobody", timeout: .seconds(1)) else {
            return XCTFail("nothing listening")
        }
    }
}
