import Glibc
import LinuxSystem
import NIOCore
import NIOPosix
import SystemPackage
import XCTest

@testable import ReachConnectivity

/// The event loop told when a pipe nobody on it reads is ready (`LoopReadiness` over
/// `PollRequests`): once per request, never by reading the pipe itself.
final class LoopReadinessTests: XCTestCase {
    private var group: MultiThreadedEventLoopGroup!
    private var loop: (any EventLoop)!
    private var pipe: (read: Int32, write: Int32) = (-1, -1)

    override func setUpWithError() throws {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        loop = group.next()
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(Glibc.pipe(&ends), 0)
        pipe = (ends[0], ends[1])
    }

    override func tearDown() {
        for end in [pipe.read, pipe.write] where end >= 0 { close(end) }
        try? group.syncShutdownGracefully()
    }

    private typealias Watch = (readiness: NIOLoopBoundBox<LoopReadiness?>, heard: NIOLoopBoundBox<[Int16]>)

    /// A readiness of `descriptor` on the loop, and what it heard so far.
    private func watch(_ descriptor: Int32) throws -> Watch {
        let loop = loop!
        return try loop.submit {
            let heard = NIOLoopBoundBox([Int16](), eventLoop: loop)
            let readiness = try LoopReadiness(SystemPackage.FileDescriptor(rawValue: descriptor), eventLoop: loop,
                                              ready: { heard.value.append($0) }, failed: { XCTFail("\($0)") })
            return (NIOLoopBoundBox(Optional(readiness), eventLoop: loop), heard)
        }.wait()
    }

    private func request(_ watch: Watch, _ events: Int32) throws {
        try loop.submit { watch.readiness.value?.request(Int16(events)) }.wait()
    }

    /// What `watch` heard once it heard `count` answers, or after 2 s.
    private func heard(_ watch: Watch, count: Int) throws -> [Int16] {
        let deadline = ContinuousClock.now + .seconds(2)
        while true {
            let heard = try loop.submit { watch.heard.value }.wait()
            if heard.count >= count || ContinuousClock.now > deadline { return heard }
            usleep(5_000)
        }
    }

    /// What `watch` heard after a moment of nothing expected.
    private func heardAfterAMoment(_ watch: Watch) throws -> [Int16] {
        usleep(100_000)
        return try loop.submit { watch.heard.value }.wait()
    }

    func testReadableOncePerRequestAndNeverRead() throws {
        let reader = try watch(pipe.read)
        try request(reader, POLLIN)
        XCTAssertEqual(try heardAfterAMoment(reader), [], "nothing written: nothing heard")
        XCTAssertEqual(write(pipe.write, "x", 1), 1)
        let first = try heard(reader, count: 1)
        XCTAssertEqual(first.count, 1)
        XCTAssertNotEqual((first.first ?? 0) & Int16(POLLIN), 0, "readable")
        XCTAssertEqual(try heardAfterAMoment(reader).count, 1, "one answer per request")
        try request(reader, POLLIN)
        XCTAssertEqual(try heard(reader, count: 2).count, 2, "still unread: answered at once")
        var byte: UInt8 = 0
        XCTAssertEqual(read(pipe.read, &byte, 1), 1, "the byte is still in the pipe: the loop never read it")
        try request(reader, POLLIN)
        XCTAssertEqual(try heardAfterAMoment(reader).count, 2, "drained: not answered")
        try loop.submit { reader.readiness.value?.close() }.wait()
        XCTAssertEqual(write(pipe.write, "y", 1), 1)
        XCTAssertEqual(try heardAfterAMoment(reader).count, 2, "closed: nothing more heard")
    }

    func testWritableAndHangUp() throws {
        let writer = try watch(pipe.write)
        try request(writer, POLLOUT)
        XCTAssertNotEqual((try heard(writer, count: 1).first ?? 0) & Int16(POLLOUT), 0, "an empty pipe is writable")
        let reader = try watch(pipe.read)
        try request(reader, POLLIN)
        close(pipe.write)
        pipe.write = -1
        XCTAssertNotEqual((try heard(reader, count: 1).first ?? 0) & Int16(POLLHUP), 0, "the writer went: a hang-up")
        XCTAssertEqual(try heardAfterAMoment(reader).count, 1)
    }
}
