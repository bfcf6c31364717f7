import NIOCore
import NIOPosix
import ReachabilityCore
@testable import ReachConfiguration
@testable import ReachConnectivity
@testable import ReachTargets
import Synchronization
import TestSupport
import XCTest

/// `HTTPFetcher` against a local server that accepts and never answers: requests over the
/// cap wait, over the queue are refused, and cancelling their round ends them all at once
/// (well before their deadline) and closes every socket they opened.
final class HTTPFetcherLimitsTests: XCTestCase {
    private final class Counters: Sendable {
        let accepted = Atomic<Int>(0)
        let closed = Atomic<Int>(0)
    }

    private struct Seen: Sendable {
        var inFlight = 0
        var accepted = 0
        var outcomes: [String] = []
        var inFlightAfter = 0
        var cancelledWithin: Duration = .zero
    }

    func testCapQueueAndCancellation() throws {
        try requireRoot()  // SO_BINDTOIFINDEX
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let counters = Counters()
        let server = try ServerBootstrap(group: loop)
            .childChannelInitializer { channel in
                counters.accepted.add(1, ordering: .relaxed)
                channel.closeFuture.whenComplete { _ in counters.closed.add(1, ordering: .relaxed) }
                return channel.eventLoop.makeSucceededVoidFuture()
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        defer { try? server.close().wait() }
        let port = try XCTUnwrap(server.localAddress?.port)

        let seen = try loop.flatSubmit { () -> EventLoopFuture<Seen> in
            let work = BlockingWork(eventLoop: loop)
            let fetcher = HTTPFetcher(eventLoop: loop, resolver: NameResolver(eventLoop: loop, work: work, resolvedSocket: nil), work: work,
                                      slots: ProbeSlots(capacity: 4, queueLimit: 3))
            let round = FetchCancellation()
            let request = HTTPFetcher.Request(endpoint: HTTPEndpoint("http://127.0.0.1:\(port)/generate_204")!, interfaceIndex: 1,
                                              family: .ipv4, timeout: .seconds(30), cancellation: round)
            let futures = (0..<10).map { _ in fetcher.fetch(request, hasNameserver: false) }
            let done = loop.makePromise(of: Seen.self)
            var seen = Seen()
            loop.assumeIsolated().scheduleTask(in: .milliseconds(500)) {
                seen.inFlight = fetcher.requestsInFlight
                seen.accepted = counters.accepted.load(ordering: .relaxed)
                let cancelled = ContinuousClock.now
                round.cancel()
                EventLoopFuture.whenAllComplete(futures, on: loop).assumeIsolated().whenSuccess { results in
                    seen.cancelledWithin = ContinuousClock.now - cancelled
                    seen.outcomes = results.map { result in
                        switch result {
                        case let .success(fetched): "\(fetched.outcome)"
                        case let .failure(error): "\(error)"
                        }
                    }
                    seen.inFlightAfter = fetcher.requestsInFlight
                    done.succeed(seen)
                }
            }
            return done.futureResult
        }.wait()

        XCTAssertEqual(seen.inFlight, 4, "the cap")
        XCTAssertEqual(seen.accepted, 4, "connections made: one per request in flight")
        XCTAssertEqual(seen.outcomes.filter { $0.contains("too many probes") }.count, 3, "over the queue: refused at once \(seen.outcomes)")
        XCTAssertEqual(seen.outcomes.filter { $0.contains("superseded") }.count, 7, "running and waiting: cancelled \(seen.outcomes)")
        XCTAssertEqual(seen.inFlightAfter, 0)
        XCTAssertLessThan(seen.cancelledWithin, .seconds(1), "cancelled at once, not at the 30 s deadline")
        // The server sees every connection closed, none opened for the waiting ones.
        let deadline = ContinuousClock.now + .seconds(5)
        while counters.closed.load(ordering: .relaxed) < 4 && ContinuousClock.now < deadline { usleep(10_000) }
        XCTAssertEqual(counters.closed.load(ordering: .relaxed), 4, "the cancelled requests' sockets were closed")
        XCTAssertEqual(counters.accepted.load(ordering: .relaxed), 4, "no socket for a request cancelled while it waited")
    }
}
