import Logging
import NIOCore
import ReachabilityCore
import ReachProtocol
import ReachTargets

/// One reply of a subscription stream, on its way to one subscriber.
///
/// A reference to what the group's members share: a group update holds three paths (their
/// strings, arrays and portal facts), and copying it by value into every subscriber's
/// coalescer cost a reference count per field per subscriber; now it costs one.
struct SubscriberUpdate: Coalescible {
    private final class Shared: Sendable {
        let group: Publication.GroupUpdate
        let frame: ByteBuffer?

        init(group: Publication.GroupUpdate, frame: ByteBuffer?) {
            self.group = group
            self.frame = frame
        }
    }

    private let shared: Shared

    /// The group's change: answers before and after, and the reply.
    var group: Publication.GroupUpdate { shared.group }
    /// `group.reply` framed for the wire, shared by the group's members; nil when this
    /// subscriber needs its own encoding (after coalescing).
    var frame: ByteBuffer? { shared.frame }

    init(group: Publication.GroupUpdate, frame: ByteBuffer?) {
        shared = Shared(group: group, frame: frame)
    }

    /// A reply that replaces one the subscriber never received reports every change since
    /// the last one it did receive, so a change inside a skipped reply is not lost. The
    /// group's shared frame no longer fits, so it is encoded again when sent.
    func coalesced(with newer: SubscriberUpdate) -> SubscriberUpdate {
        var reply = newer.group.reply
        reply.changes = newer.group.answer.changes(since: group.previous)
        let merged = Publication.GroupUpdate(previous: group.previous, answer: newer.group.answer, reply: reply)
        return SubscriberUpdate(group: merged, frame: nil)
    }
}

/// One reply of any stream a connection may carry: `Subscribe`, `SubscribeSummary` or
/// `SubscribeTarget`.
enum StreamUpdate: Coalescible {
    case path(SubscriberUpdate)
    /// A summary, framed once for every summary subscriber.
    case summary(ByteBuffer)
    case target(TargetReply)

    /// Path replies merge their changes; a summary or target reply simply replaces an older one.
    func coalesced(with newer: StreamUpdate) -> StreamUpdate {
        if case let .path(older) = self, case let .path(newest) = newer { return .path(older.coalesced(with: newest)) }
        return newer
    }

    /// The reply framed for the wire (`continues: true`).
    var frame: ByteBuffer? {
        switch self {
        case let .path(update): return update.frame ?? ServerCore.frame(update.group.reply)
        case let .summary(frame): return frame
        case let .target(reply): return ServerCore.frame(reply)
        }
    }
}

/// Serves one client connection: decodes calls, answers them in order, and carries a
/// subscription stream.
///
/// The decisions live elsewhere: `ConnectionStateMachine` says what the connection does
/// next (one call at a time, back-pressure, the stream and its coalescer), `VarlinkDispatcher`
/// what a call means, `Publication` what changed. This handler only carries their actions out.
final class VarlinkConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = Never
    typealias OutboundOut = ByteBuffer

    private let core: ServerCore
    private let ticket: ConnectionTicket
    private var logger: Logger
    private var context: ChannelHandlerContext?
    private var machine = ConnectionStateMachine<StreamUpdate>(maximumDiscardedBytes: VarlinkFraming.defaultMaximumMessageSize)

    init(core: ServerCore, ticket: ConnectionTicket, logger: Logger) {
        self.core = core
        self.ticket = ticket
        self.logger = logger
        self.logger[metadataKey: "connection"] = "\(ticket.id)"
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        carryOut(machine.received(unwrapInboundIn(data), writable: context.channel.isWritable), context: context)
    }

    /// Carries out what the state machine decided.
    private func carryOut(_ action: ConnectionStateMachine<StreamUpdate>.Action, context: ChannelHandlerContext) {
        switch action {
        case .none, .writeAnswer:
            break  // an answer is written where it arrives
        case let .handle(message):
            handle(message, context: context)
        case let .writeFrame(update):
            writeFrame(update, context: context)
        case .read:
            context.read()
        case let .close(refusal):
            if let refusal { core.refuse(ticket, refusal) }
            context.close(promise: nil)
        }
    }

    private func handle(_ message: ByteBuffer, context: ChannelHandlerContext) {
        // Shape first, in one linear pass: decoding deep JSON would cost the loop seconds.
        if let problem = JSONShape.problem(in: message.readableBytesView, maximumDepth: core.limits.nestingDepth) {
            carryOut(machine.close(.malformed("\(problem)")), context: context)
            return
        }
        let call: AnyVarlinkCall
        do {
            call = try VarlinkCoding.decode(AnyVarlinkCall.self, from: message.readableBytesView)
        } catch {
            carryOut(machine.close(.malformed("\(error)")), context: context)
            return
        }
        logger.debug("call", metadata: ["method": "\(call.method)"])
        let oneway = call.isOneway
        switch core.outcome(for: call, from: ticket) {
        case .reload:
            // Oneway or not, the reload is carried out; only its answer is left out.
            answerLater(core.requestReload().map(Self.reloadAnswer), oneway: oneway)
        case let .checkTarget(target):
            guard !oneway else { return }
            answerLater(core.answerCheck(target, uid: ticket.uid), oneway: false)
        case let .checkConnectivity(interface):
            answerLater(core.answerConnectivityCheck(interface: interface, uid: ticket.uid), oneway: oneway)
        case let .subscribeTarget(target):
            guard !oneway else { return }
            if let refused = core.subscribeTarget(self, ticket: ticket, target: target) {
                write(AnyVarlinkReply(error: refused), context: context)
            } else {
                carryOut(machine.streamStarted(writable: context.channel.isWritable), context: context)
            }
        case .metrics:
            guard !oneway else { return }
            write(VarlinkReply(parameters: MetricsReply(text: core.metricsText())), context: context)
        case let .reply(parameters):
            guard !oneway else { return }
            writeReply(parameters, context: context)
        case let .error(error):
            guard !oneway else { return }
            logger.debug("error reply", metadata: ["method": "\(call.method)", "error": "\(error)"])
            write(AnyVarlinkReply(error: error), context: context)
        case let .subscribe(filter):
            guard !oneway else { return }
            carryOut(machine.streamStarted(writable: context.channel.isWritable), context: context)
            // The first reply is the current state; nothing has changed yet. (Or, just after
            // the start, the state once the routes this filter's answer needs are read.)
            if let first = core.subscribe(self, ticket: ticket, filter: filter) { deliver(first) }
        case .subscribeSummary:
            guard !oneway else { return }
            carryOut(machine.streamStarted(writable: context.channel.isWritable), context: context)
            if let first = core.subscribeSummary(self, ticket: ticket) { deliver(summary: first) }
        }
    }

    // MARK: Answers that take a while

    private static func reloadAnswer(_ outcome: ReloadOutcome) -> DeferredAnswer {
        switch outcome {
        case .applied: return .reply(NoParameters())
        case let .refused(reason):
            return .error(.other(name: ReachabilityInterface.Error.reloadRefused, parameters: ["reason": .string(reason)]))
        }
    }

    /// Sends `answer`'s reply when it comes; calls behind it wait until then.
    private func answerLater(_ answer: EventLoopFuture<DeferredAnswer>, oneway: Bool) {
        guard !oneway else { return }
        machine.answerDeferred()
        answer.assumeIsolated().whenComplete { [self] result in
            guard let context else { return }
            guard case let .success(answer) = result else {
                carryOut(machine.close(nil), context: context)  // reachd is stopping
                return
            }
            guard case .writeAnswer = machine.answerArrived() else { return }
            switch answer {
            case let .reply(parameters): writeReply(parameters, context: context)
            case let .error(error): write(AnyVarlinkReply(error: error), context: context)
            }
            serveWaitingCalls(context: context)
        }
    }

    /// The calls that waited, in order, until one waits again or the socket is full; then
    /// the held read.
    private func serveWaitingCalls(context: ChannelHandlerContext) {
        while true {
            let next = machine.nextCall(writable: context.channel.isWritable)
            if case .none = next { break }
            carryOut(next, context: context)
        }
    }

    // MARK: Subscription stream

    /// A new reply for this subscriber (called by the core for each group update).
    func deliver(_ update: SubscriberUpdate) {
        guard let context else { return }
        carryOut(machine.offer(.path(update)), context: context)
    }

    /// A new summary for this subscriber (called by the core when it changed), framed.
    func deliver(summary frame: ByteBuffer) {
        guard let context else { return }
        carryOut(machine.offer(.summary(frame)), context: context)
    }

    /// A new answer for this connection's target (called by the core when it changed).
    func deliver(_ reply: TargetReply) {
        guard let context else { return }
        carryOut(machine.offer(.target(reply)), context: context)
    }

    /// Writes a stream reply. Back-pressure is the channel's writability (its watermark), not
    /// a promise per write.
    private func writeFrame(_ update: StreamUpdate, context: ChannelHandlerContext) {
        guard let frame = update.frame else {
            logger.error("cannot encode a Subscribe reply; closing the connection")
            carryOut(machine.close(nil), context: context)
            return
        }
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        carryOut(machine.writabilityChanged(writable: context.channel.isWritable), context: context)
        serveWaitingCalls(context: context)
        context.fireChannelWritabilityChanged()
    }

    // MARK: Back-pressure for plain calls

    func read(context: ChannelHandlerContext) {
        carryOut(machine.readRequested(writable: context.channel.isWritable), context: context)
    }

    // MARK: Errors

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let framing = error as? VarlinkFramingError {
            carryOut(machine.close(.framing(framing)), context: context)
        } else {
            logger.debug("closing connection after error", metadata: ["error": "\(error)"])
            carryOut(machine.close(nil), context: context)
        }
    }

    // MARK: Writing

    private func write(_ reply: some Encodable, context: ChannelHandlerContext) {
        var buffer = context.channel.allocator.buffer(capacity: 1024)
        do {
            try buffer.writeVarlinkMessage(reply)
        } catch {
            encodingFailed(error, context: context)
            return
        }
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    /// The successful reply to a call.
    private func writeReply(_ parameters: any Codable & Sendable, context: ChannelHandlerContext) {
        do {
            context.writeAndFlush(wrapOutboundOut(try ServerCore.replyFrame(parameters)), promise: nil)
        } catch {
            encodingFailed(error, context: context)
        }
    }

    private func encodingFailed(_ error: any Error, context: ChannelHandlerContext) {
        // Our own types always encode; if one ever does not, drop the connection loudly.
        logger.error("cannot encode reply", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }
}

/// Type-erased reply parameters (the dispatcher returns several concrete types).
struct AnyCodableParameters: Encodable, Sendable {
    let value: any Codable & Sendable

    init(_ value: any Codable & Sendable) { self.value = value }

    func encode(to encoder: any Encoder) throws {
        try value.encode(to: encoder)
    }
}
