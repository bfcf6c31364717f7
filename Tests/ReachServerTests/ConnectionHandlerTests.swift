import LinuxSystem
import Logging
import NIOCore
import NIOEmbedded
import ReachabilityCore
import ReachProtocol
import Synchronization
@testable import ReachServer
@testable import ReachSystemd
import TestSupport
import XCTest
import ReachTargets


/// The connection handler carries out the dispatcher's, the publication's and the
/// coalescer's decisions; here on an `EmbeddedChannel`, with no socket and no timing.
final class ConnectionHandlerTests: XCTestCase {
    private var core: ServerCore!
    private var channel: EmbeddedChannel!
    private var engine: HeldOwner!
    /// Reads the connection handler passed on towards the socket.
    private let reads = ReadCounter()

    override func setUpWithError() throws {
        let loop = EmbeddedEventLoop()
        engine = HeldOwner(loop: loop)
        core = ServerCore.embedded(loop, engine: ScriptedEngine(), owner: engine, logger: Self.logger)
        channel = try connect()
    }

    private static let logger = {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return logger
    }()

    /// A connection of root's to `core`, its reads counted by `reads` when `counted`.
    private func connect(counted: Bool = true) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(loop: core.eventLoop as! EmbeddedEventLoop)
        let ticket = try core.admit(channel, uid: 0).get()
        if counted { try channel.pipeline.syncOperations.addHandler(reads) }
        try channel.pipeline.syncOperations.addHandlers([
            RequestFramingHandler(core: core, ticket: ticket), VarlinkConnectionHandler(core: core, ticket: ticket, logger: Self.logger),
        ])
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/embedded")).wait()
        return channel
    }

    override func tearDown() {
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }

    private func send(_ method: String, _ parameters: JSONObject? = nil, more: Bool = false, oneway: Bool = false) throws {
        var buffer = ByteBuffer()
        try buffer.writeVarlinkMessage(AnyVarlinkCall(method: method, parameters: parameters, more: more, oneway: oneway))
        try channel.writeInbound(buffer)
    }

    /// The replies written so far, decoded.
    private func replies() throws -> [AnyVarlinkReply] {
        var result: [AnyVarlinkReply] = []
        while var frame = try channel.readOutbound(as: ByteBuffer.self) {
            let bytes = frame.readBytes(length: frame.readableBytes) ?? []
            XCTAssertEqual(bytes.last, 0, "every frame ends in NUL")
            result.append(try VarlinkCoding.decode(AnyVarlinkReply.self, from: bytes.dropLast()))
        }
        return result
    }

    private func statusReplies() throws -> [StatusReply] {
        try replies().map { reply in
            try VarlinkCoding.decode(StatusReply.self, from: try VarlinkCoding.encode(reply.parameters ?? [:]))
        }
    }

    private func setWritable(_ writable: Bool) {
        channel.isWritable = writable
        channel.pipeline.fireChannelWritabilityChanged()
    }

    func testPlainCallsAreAnsweredInOrderAndOnewayIsSilent() throws {
        try send(ReachabilityInterface.Method.getStatus, oneway: true)
        try send("io.reachd.Reachability.Nope")
        try send(ReachabilityInterface.Method.getStatus)
        let replies = try replies()
        XCTAssertEqual(replies.count, 2)
        XCTAssertEqual(replies.first?.varlinkError, .methodNotFound(method: "io.reachd.Reachability.Nope"))
        XCTAssertEqual(replies.last?.parameters?["sequence"], .integer(1))
        XCTAssertNil(replies.last?.continues)
        XCTAssertTrue(channel.isActive)
    }

    func testMalformedMessageClosesTheConnection() throws {
        try channel.writeInbound(ByteBuffer(bytes: Array("not json\0".utf8)))
        XCTAssertFalse(channel.isActive)
        XCTAssertEqual(try replies().count, 0)
    }

    func testSubscribeAnswersAtOnceThenPerChange() throws {
        try send(ReachabilityInterface.Method.subscribe, [:], more: true)
        var replies = try statusReplies()
        XCTAssertEqual(replies.map(\.sequence), [1])
        XCTAssertEqual(replies.first?.changes, [])
        XCTAssertEqual(core.publication.subscriberCount, 1)

        core.update(snapshot: makeSnapshot(ethGateway: "10.0.0.254"))
        core.update(snapshot: makeSnapshot(ethGateway: "10.0.0.254"))  // nothing new: no reply
        replies = try statusReplies()
        XCTAssertEqual(replies.map(\.sequence), [2])
        XCTAssertEqual(replies.first?.changes, [.gateways])
        XCTAssertEqual(replies.first?.path.gateways, ["10.0.0.254"])
    }

    /// `GetStatus` and every kind of `Subscribe` reply (the first, a group's shared one, a
    /// coalesced one) are framed by the direct encoder: byte for byte what JSONEncoder gives.
    func testStatusFramesAreJSONEncodersBytes() throws {
        var frames: [[UInt8]] = []
        func collect() throws {
            while var frame = try channel.readOutbound(as: ByteBuffer.self) {
                frames.append(frame.readBytes(length: frame.readableBytes) ?? [])
            }
        }
        try send(ReachabilityInterface.Method.getStatus)
        try collect()
        try send(ReachabilityInterface.Method.subscribe, [:], more: true)
        core.update(snapshot: makeSnapshot(ethGateway: "10.0.0.2"))
        try collect()
        setWritable(false)
        core.update(snapshot: makeSnapshot(ethGateway: "10.0.0.3", wifiCarrier: false))
        core.update(snapshot: makeSnapshot(ethGateway: "10.0.0.4"))
        setWritable(true)
        try collect()

        XCTAssertEqual(frames.count, 4)
        for (index, frame) in frames.enumerated() {
            let reply = try VarlinkCoding.decode(VarlinkReply<StatusReply>.self, from: frame.dropLast())
            XCTAssertEqual(reply.isContinuing, index > 0)
            XCTAssertEqual(frame, try VarlinkCoding.encodeFrame(reply), "frame \(index)")
        }
    }

    func testSlowSubscriberGetsOneCoalescedReplyWithEveryChange() throws {
        try send(ReachabilityInterface.Method.subscribe, [:], more: true)
        _ = try replies()
        setWritable(false)
        core.update(snapshot: makeSnapshot(ethGateway: "10.0.0.2"))
        core.update(snapshot: makeSnapshot(ethGateway: "10.0.0.3", wifiCarrier: false))
        core.update(snapshot: makeSnapshot(ethGateway: "10.0.0.4", wifiCarrier: false))
        XCTAssertEqual(try replies().count, 0, "nothing is written while the socket is full")

        setWritable(true)
        let replies = try statusReplies()
        XCTAssertEqual(replies.count, 1, "the newest state only, not a backlog")
        XCTAssertEqual(replies.first?.sequence, 4)
        XCTAssertEqual(replies.first?.path.gateways, ["10.0.0.4"])
        XCTAssertEqual(replies.first?.changes, [.gateways, .availableInterfaces], "the skipped replies' changes are kept")

        core.update(snapshot: makeSnapshot(ethGateway: "10.0.0.5", wifiCarrier: false))
        XCTAssertEqual(try statusReplies().map(\.changes), [[.gateways]], "back to one reply per change")
    }

    /// A summary subscriber is answered at once; while its socket is full the summaries
    /// fold into the newest, and one still held for routes at start is answered once they
    /// are read; closing forgets it.
    func testSummarySubscriberGetsTheNewestAndIsForgottenOnClose() throws {
        func statuses() throws -> [JSONValue?] { try replies().map { $0.parameters?["status"] } }
        // No route, the same links and addresses: nothing here starts work off the loop.
        var unsatisfied = makeSnapshot()
        (unsatisfied.defaultRoutes, unsatisfied.lookups) = ([], [.ipv4: .failure(.noRoute)])
        try send(ReachabilityInterface.Method.subscribeSummary, more: true)
        XCTAssertEqual(try statuses(), [.string("satisfied")])
        XCTAssertEqual(core.publication.subscriberCount, 1)
        core.update(snapshot: makeSnapshot(ethGateway: "10.0.0.254"))
        XCTAssertEqual(try replies().count, 0, "a gateway is not in the summary")

        setWritable(false)
        core.update(snapshot: unsatisfied)
        core.update(snapshot: makeSnapshot())
        core.update(snapshot: unsatisfied)
        XCTAssertEqual(try replies().count, 0, "nothing is written while the socket is full")
        setWritable(true)
        XCTAssertEqual(try statuses(), [.string("unsatisfied")], "the newest only")

        try channel.close().wait()
        (channel.eventLoop as? EmbeddedEventLoop)?.run()
        XCTAssertEqual(core.publication.subscriberCount, 0)
        core.update(snapshot: makeSnapshot())
        XCTAssertEqual(try replies().count, 0)
    }

    /// A call that arrives while its reply could not be written waits for the socket to
    /// drain, and is then answered from the state at that time.
    func testSubscribingWhileUnwritableWaitsForTheSocket() throws {
        setWritable(false)
        try send(ReachabilityInterface.Method.subscribe, [:], more: true)
        XCTAssertEqual(try replies().count, 0)
        XCTAssertEqual(core.publication.subscriberCount, 0, "not handled while its reply cannot be written")
        core.update(snapshot: makeSnapshot(ethGateway: "10.0.0.254"))
        setWritable(true)
        let replies = try statusReplies()
        XCTAssertEqual(replies.map(\.sequence), [2])
        XCTAssertEqual(replies.first?.changes, [], "a first reply: the answer now, nothing changed yet")
        XCTAssertEqual(replies.first?.path.gateways, ["10.0.0.254"])
        XCTAssertEqual(core.publication.subscriberCount, 1)
    }

    func testSubscribedConnectionDiscardsCallsThenClosesWhenFlooded() throws {
        try send(ReachabilityInterface.Method.subscribe, nil, more: true)
        _ = try replies()
        try send(ReachabilityInterface.Method.getStatus)
        XCTAssertEqual(try replies().count, 0)
        XCTAssertTrue(channel.isActive)
        for _ in 0..<2000 where channel.isActive { try send(ReachabilityInterface.Method.getStatus) }
        XCTAssertFalse(channel.isActive)
    }

    /// `makeSnapshot` while its IPv4 routes are still being read at start: only the route
    /// the lookup matched (eth0's) is known, so a wifi-only answer has to wait.
    private static func provisionalSnapshot() -> NetworkSnapshot {
        var snapshot = makeSnapshot()
        snapshot.defaultRoutes = snapshot.defaultRoutes.filter { $0.nextHops.contains { $0.interfaceIndex == 2 } }
        snapshot.lookups[.ipv4] = .route(RouteLookupResult(outputInterface: 2, gateway: IPAddress("10.0.0.1"), table: 254))
        snapshot.pendingRouteFamilies = [.ipv4]
        return snapshot
    }

    func testASubscriberWhoseAnswerNeedsUnreadRoutesIsAnsweredOnceTheyAreRead() throws {
        core.update(snapshot: Self.provisionalSnapshot())
        XCTAssertFalse(core.publication.state.awaitsRoutes(for: .none), "the unfiltered answer is final")
        try send(ReachabilityInterface.Method.subscribe, ["requiredInterfaceType": .string("wifi")], more: true)
        XCTAssertEqual(try replies().count, 0, "no answer from before wlan0's default is known")
        XCTAssertEqual(core.publication.subscriberCount, 0)

        core.update(snapshot: makeSnapshot())
        let replies = try statusReplies()
        XCTAssertEqual(replies.count, 1)
        XCTAssertEqual(replies.first?.path.status, .satisfied)
        XCTAssertEqual(replies.first?.path.primaryInterface, "wlan0")
        XCTAssertEqual(replies.first?.changes, [], "a first reply")
        XCTAssertEqual(core.publication.subscriberCount, 1)
    }

    func testASummarySubscriberWaitsForTheRoutesItsAnswerNeeds() throws {
        var snapshot = Self.provisionalSnapshot()
        snapshot.lookups[.ipv4] = .failure(.noRoute)  // the unfiltered answer needs the routes now
        core.update(snapshot: snapshot)
        XCTAssertTrue(core.publication.state.awaitsRoutes(for: .none))
        try send(ReachabilityInterface.Method.subscribeSummary, more: true)
        XCTAssertEqual(try replies().count, 0)
        core.update(snapshot: makeSnapshot())
        XCTAssertEqual(try replies().map { $0.parameters?["status"] }, [.string("satisfied")])
        XCTAssertEqual(core.publication.subscriberCount, 1)
    }

    func testASubscriberLeavingWhileItWaitsForRoutesIsForgotten() throws {
        core.update(snapshot: Self.provisionalSnapshot())
        try send(ReachabilityInterface.Method.subscribe, ["requiredInterfaceType": .string("wifi")], more: true)
        try channel.close().wait()
        (channel.eventLoop as? EmbeddedEventLoop)?.run()
        core.update(snapshot: makeSnapshot())
        XCTAssertEqual(core.publication.subscriberCount, 0)
        XCTAssertEqual(try replies().count, 0)
    }

    func testClosingRemovesTheSubscription() throws {
        try send(ReachabilityInterface.Method.subscribe, ["requiredInterfaceType": .string("wifi")], more: true)
        XCTAssertEqual(core.publication.subscriberCount, 1)
        try channel.close().wait()
        (channel.eventLoop as? EmbeddedEventLoop)?.run()  // the close callbacks
        XCTAssertEqual(core.publication.subscriberCount, 0)
        core.update(snapshot: makeSnapshot(wifiGateway: "192.168.1.9"))  // nobody left to tell: no crash, no write
        XCTAssertEqual(try replies().count, 1, "only the first reply was ever written")
    }
}

extension ConnectionHandlerTests {
    /// A reload is answered off the loop: the calls behind it wait, in order, and the
    /// socket is not read until it is answered.
    func testCallsBehindADeferredAnswerWaitAndReadingStops() throws {
        try send(SystemdServiceInterface.Method.reload)
        let before = reads.count
        channel.read()
        XCTAssertEqual(reads.count, before, "no read while a call is answered")
        try send(ReachabilityInterface.Method.getStatus)
        try send("io.reachd.Reachability.Nope")
        XCTAssertEqual(try replies().count, 0, "nothing overtakes the reload's answer")

        engine.answerReload(.applied)
        let replies = try replies()
        XCTAssertEqual(replies.count, 3)
        XCTAssertNil(replies.first?.error)
        XCTAssertEqual(replies.first?.parameters, [:])
        XCTAssertEqual(replies.dropFirst().first?.parameters?["sequence"], .integer(1))
        XCTAssertEqual(replies.last?.varlinkError, .methodNotFound(method: "io.reachd.Reachability.Nope"))
        XCTAssertEqual(reads.count, before + 1, "the held read is passed on once answered")
        channel.read()
        XCTAssertEqual(reads.count, before + 2)
    }

    func testARefusedReloadAnswersWhy() throws {
        try send(SystemdServiceInterface.Method.reload)
        engine.answerReload(.refused("line 2: bad"))
        let replies = try replies()
        XCTAssertEqual(replies.map(\.error), [ReachabilityInterface.Error.reloadRefused])
        XCTAssertEqual(replies.first?.parameters?["reason"], .string("line 2: bad"))
    }

    /// After an answer, a read held while the socket is full waits until it drains.
    func testAReadHeldDuringAnAnswerWaitsForTheSocketToDrain() throws {
        try send(SystemdServiceInterface.Method.reload)
        let before = reads.count
        channel.read()
        channel.isWritable = false
        engine.answerReload(.applied)
        XCTAssertEqual(reads.count, before, "replies cannot be written: not read")
        setWritable(true)
        XCTAssertEqual(reads.count, before + 1)
        XCTAssertEqual(try replies().count, 1)
    }

    func testAClientNotReadingItsRepliesIsNotReadFrom() throws {
        let before = reads.count
        setWritable(false)
        channel.read()
        channel.read()
        XCTAssertEqual(reads.count, before)
        setWritable(true)
        XCTAssertEqual(reads.count, before + 1, "one held read, passed on")
        channel.read()
        XCTAssertEqual(reads.count, before + 2)
    }

    /// A subscriber is read however slowly it reads, so a hang-up is noticed.
    func testASubscriberIsAlwaysRead() throws {
        try send(ReachabilityInterface.Method.subscribe, [:], more: true)
        setWritable(false)
        let before = reads.count
        channel.read()
        XCTAssertEqual(reads.count, before + 1)
    }

    func testAnAnswerArrivingAfterTheCloseIsDropped() throws {
        try send(SystemdServiceInterface.Method.reload)
        try channel.close().wait()
        (channel.eventLoop as? EmbeddedEventLoop)?.run()
        engine.answerReload(.applied)
        XCTAssertEqual(try replies().count, 0)
    }

    /// A half-sent message's deadline counts only while reachd reads: with the reads held
    /// (the replies are not read), the rest may be waiting in the socket. Once reads
    /// resume the deadline starts again, and a message still half-sent then is cut off.
    func testAPartialMessageDeadlineWaitsWhileReadsAreHeld() throws {
        let loop = try XCTUnwrap(channel.eventLoop as? EmbeddedEventLoop)
        let deadline = TimeAmount(core.limits.partialMessageDeadline)
        setWritable(false)
        try channel.writeInbound(ByteBuffer(string: #"{"method":"io.reachd.Reach"#))
        channel.read()
        XCTAssertEqual(reads.count, 0, "the read is held while replies cannot be written")
        loop.advanceTime(by: deadline + .seconds(1))
        XCTAssertTrue(channel.isActive, "not cut off for a delay that was reachd's")

        setWritable(true)
        XCTAssertEqual(reads.count, 1, "the held read goes on")
        loop.advanceTime(by: deadline - .seconds(1))
        XCTAssertTrue(channel.isActive, "a whole deadline again from the read")
        loop.advanceTime(by: .seconds(2))
        XCTAssertFalse(channel.isActive, "still half-sent a deadline after reads resumed")
        XCTAssertTrue(core.metricsText().contains(#"reachd_connections_refused_total{reason="partial message deadline"} 1"#))
    }

    /// Each way a client is cut off is counted under its own series, whatever the log says.
    func testRefusalsAreCountedUnderTheirReasons() throws {
        try channel.writeInbound(ByteBuffer(bytes: Array("not json\0".utf8)))
        XCTAssertFalse(channel.isActive)
        let empty = try connect(counted: false)
        try empty.writeInbound(ByteBuffer(bytes: [0]))
        XCTAssertFalse(empty.isActive)
        let large = try connect(counted: false)
        try large.writeInbound(ByteBuffer(repeating: UInt8(ascii: "a"), count: VarlinkFraming.defaultMaximumMessageSize + 1))
        XCTAssertFalse(large.isActive)
        let subscriber = try connect(counted: false)
        var call = ByteBuffer()
        try call.writeVarlinkMessage(AnyVarlinkCall(method: ReachabilityInterface.Method.subscribe, parameters: [:], more: true))
        try subscriber.writeInbound(call)
        for _ in 0..<2000 where subscriber.isActive { try subscriber.writeInbound(call) }
        XCTAssertFalse(subscriber.isActive)

        let text = core.metricsText()
        for reason in ["malformed message", "empty message", "message larger than 65536 bytes", "a subscribed connection kept sending calls"] {
            XCTAssertTrue(text.contains(#"reachd_connections_refused_total{reason="\#(reason)"} 1"#), "\(reason) in\n\(text)")
        }
        for channel in [empty, large, subscriber] { _ = try? channel.finish(acceptAlreadyClosed: true) }
    }
}

/// Counts the reads that reach it (the socket's side of the pipeline).
private final class ReadCounter: ChannelOutboundHandler, @unchecked Sendable {
    typealias OutboundIn = ByteBuffer
    private(set) var count = 0

    func read(context: ChannelHandlerContext) {
        count += 1
        context.read()
    }
}

/// An owner that answers reloads only when told to.
private final class HeldOwner: ServerOwner {
    private var reloads: [EventLoopPromise<ReloadResult>] = []
    private let loop: EmbeddedEventLoop

    init(loop: EmbeddedEventLoop) {
        self.loop = loop
    }

    func reload(askedByClient: Bool, work: BlockingWork) -> EventLoopFuture<ReloadResult> {
        let reply = loop.makePromise(of: ReloadResult.self)
        reloads.append(reply)
        return reply.futureResult
    }

    func restoreSocketFile(work: BlockingWork) {}

    /// Answers the oldest reload waiting.
    func answerReload(_ outcome: ReloadOutcome) {
        reloads.removeFirst().succeed(ReloadResult(outcome))
        loop.run()
    }
}

/// The server's failures reach the engine: a listening socket closing under the server
/// is fatal; closing it in `shutdown()` is not.
final class ServerFailureTests: XCTestCase {
    private func makeCore(_ loop: EmbeddedEventLoop, engine: ScriptedEngine) -> ServerCore {
        ServerCore.embedded(loop, engine: engine, logger: Logger(label: "test"))
    }

    func testListeningSocketClosingUnexpectedlyIsFatal() throws {
        let loop = EmbeddedEventLoop()
        let engine = ScriptedEngine()
        let core = makeCore(loop, engine: engine)
        let listener = EmbeddedChannel(loop: loop)
        core.adopt(listener, socketFile: FileIdentity(device: 1, inode: 2))
        XCTAssertEqual(engine.requests, [])
        try listener.close().wait()
        loop.run()
        XCTAssertEqual(engine.requests, [.fail("the listening socket closed unexpectedly")])
    }

    func testShutdownIsNotAFailure() throws {
        let loop = EmbeddedEventLoop()
        let engine = ScriptedEngine()
        let core = makeCore(loop, engine: engine)
        core.adopt(EmbeddedChannel(loop: loop), socketFile: nil)
        try core.shutdown().wait()
        loop.run()
        XCTAssertEqual(engine.requests, [])
        XCTAssertNil(core.socketFile)
    }
}
