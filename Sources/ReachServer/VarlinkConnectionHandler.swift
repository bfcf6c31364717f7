import Logging
import NIOCore
import ReachabilityCore
import ReachProtocol

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

/// One reply of either stream a connection may carry: `Subscribe` or `SubscribeTarget`.
enum StreamUpdate: Coalescible {
    case path(SubscriberUpdate)
    case target(TargetReply)

    /// Path replies merge their changes; a target reply simply replaces an older one.
    func coalesced(with newer: StreamUpdate) -> StreamUpdate {
        if case let .path(older) = self, case let .path(newest) = newer { return .path(older.coalesced(with: newest)) }
        return newer
    }

    /// The reply framed for the wire (`continues: true`).
    var frame: ByteBuffer? {
        switch self {
        case let .path(update): return update.frame ?? ServerCore.frame(update.group.reply)
        case let .target(reply): return ServerCore.frame(reply)
        }
    }
}

/// Serves one client connection: decodes calls, answers them in order, and carries a
/// subscription stream.
///
/// The decisions live elsewhere: `VarlinkDispatcher` says what a call means, `Publication`
/// what changed, and a `LatestValueCoalescer` when a subscriber gets which reply (a slow
/// reader gets the newest, never a backlog). This handler only carries their actions out.
///
/// Like sd-varlink, a connection serves one call at a time and a `Subscribe` stream never
/// ends, so once a connection subscribes it serves nothing else: later calls on it are
/// read and discarded (so a hang-up is still noticed) up to the message size limit, then
/// the connection is closed. Open another connection for other calls.
final class VarlinkConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = Never
    typealias OutboundOut = ByteBuffer

    private struct Subscription {
        var coalescer = LatestValueCoalescer<StreamUpdate>(consumerReady: true)
        var discardedBytes = 0
    }

    private let core: ServerCore
    private let ticket: ConnectionTicket
    private var logger: Logger
    private var context: ChannelHandlerContext?
    private var subscription: Subscription?
    /// A read the pipeline asked for while the peer was not taking our replies.
    private var readHeld = false
    /// Set once the connection is being closed: nothing it still sends is looked at.
    private var closing = false
    /// A call this connection made is being answered off the loop (a reload, a target
    /// check): replies go in call order, so later calls wait (and no more is read) until
    /// it is answered.
    private var awaitingAnswer = false
    private var waitingCalls: [ByteBuffer] = []

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
        guard !closing else { return }
        let message = unwrapInboundIn(data)
        if subscription != nil {
            subscription!.discardedBytes += message.readableBytes + 1
            if subscription!.discardedBytes > VarlinkFraming.defaultMaximumMessageSize {
                close("a subscribed connection kept sending calls", context: context)
            }
            return
        }
        if awaitingAnswer {
            waitingCalls.append(message)
            return
        }
        handle(message, context: context)
    }

    private func handle(_ message: ByteBuffer, context: ChannelHandlerContext) {
        // Shape first, in one linear pass: decoding deep JSON would cost the loop seconds.
        if let problem = JSONShape.problem(in: message.readableBytesView, maximumDepth: core.limits.nestingDepth) {
            close("malformed message: \(problem)", context: context)
            return
        }
        let call: AnyVarlinkCall
        do {
            call = try VarlinkCoding.decode(AnyVarlinkCall.self, from: message.readableBytesView)
        } catch {
            close("malformed message: \(error)", context: context)
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
                startStream(context: context)
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
            subscribe(filter, context: context)
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
        awaitingAnswer = true
        answer.assumeIsolated().whenComplete { [self] result in
            awaitingAnswer = false
            guard let context, !closing else { return }
            switch result {
            case let .success(.reply(parameters)):
                writeReply(parameters, context: context)
            case let .success(.error(error)):
                write(AnyVarlinkReply(error: error), context: context)
            case .failure:
                context.close(promise: nil)  // reachd is stopping
                return
            }
            while !awaitingAnswer, subscription == nil, !closing, !waitingCalls.isEmpty {
                handle(waitingCalls.removeFirst(), context: context)
            }
            releaseHeldRead(context: context)
        }
    }

    // MARK: Subscription stream

    private func subscribe(_ filter: PathFilter, context: ChannelHandlerContext) {
        startStream(context: context)
        // The first reply is the current state; nothing has changed yet. (Or, just after
        // the start, the state once the routes this filter's answer needs are read.)
        if let first = core.subscribe(self, ticket: ticket, filter: filter) { deliver(first) }
    }

    private func startStream(context: ChannelHandlerContext) {
        var stream = Subscription()
        if !context.channel.isWritable { stream.coalescer.pause() }
        subscription = stream
        // Reads continue (to notice a hang-up) however slowly the subscriber reads.
        releaseHeldRead(context: context)
    }

    /// A new reply for this subscriber (called by the core for each group update).
    func deliver(_ update: SubscriberUpdate) {
        guard subscription != nil else { return }
        carryOut(subscription!.coalescer.offer(.path(update)))
    }

    /// A new answer for this connection's target (called by the core when it changed).
    func deliver(_ reply: TargetReply) {
        guard subscription != nil else { return }
        carryOut(subscription!.coalescer.offer(.target(reply)))
    }

    private func carryOut(_ action: LatestValueCoalescer<StreamUpdate>.Action) {
        guard case let .deliver(update) = action, let context else { return }
        guard let frame = update.frame else {
            logger.error("cannot encode a Subscribe reply; closing the connection")
            context.close(promise: nil)
            return
        }
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(frame), promise: promise)
        promise.futureResult.assumeIsolated().whenSuccess { [self] in
            guard subscription != nil else { return }
            carryOut(subscription!.coalescer.consumerReady())
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            if subscription != nil { carryOut(subscription!.coalescer.resume()) }
            releaseHeldRead(context: context)
        } else {
            subscription?.coalescer.pause()
        }
        context.fireChannelWritabilityChanged()
    }

    // MARK: Back-pressure for plain calls

    func read(context: ChannelHandlerContext) {
        // A client that sends calls but does not read replies is not read from either,
        // so its replies cannot pile up in memory. Subscribers are always read.
        if subscription == nil && (!context.channel.isWritable || awaitingAnswer) {
            readHeld = true
            return
        }
        context.read()
    }

    private func releaseHeldRead(context: ChannelHandlerContext) {
        guard readHeld else { return }
        readHeld = false
        context.read()
    }

    // MARK: Errors

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let framing = error as? VarlinkFramingError {
            close("\(framing)", context: context)
        } else {
            logger.debug("closing connection after error", metadata: ["error": "\(error)"])
            closing = true
            context.close(promise: nil)
        }
    }

    /// Closes the connection for something its client did, logged once (the connection
    /// ends, so there is no second time) and rate-limited across connections by kind.
    private func close(_ reason: String, context: ChannelHandlerContext) {
        guard !closing else { return }
        closing = true
        core.refuse(ticket, reason, kind: String(reason.prefix { $0 != ":" }))
        context.close(promise: nil)
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
