import Logging
import NIOCore
import ReachabilityCore
import ReachProtocol

/// Serves one client connection: decodes calls, answers them in order, and carries a
/// subscription stream with latest-value semantics.
///
/// Like sd-varlink, a connection serves one call at a time and a `Subscribe` stream never
/// ends, so once a connection subscribes it serves nothing else: later calls on it are
/// read and discarded (so a hang-up is still noticed) up to the message size limit, then
/// the connection is closed. Open another connection for other calls.
///
/// A subscriber that reads slowly is sent the newest path only: while a reply is still on
/// its way to the socket, newer ones replace each other instead of queueing up. `changes`
/// always describe the difference from the reply this subscriber last received, so a
/// change hidden in a skipped reply is still reported.
final class VarlinkConnectionHandler: ChannelDuplexHandler, StatusSubscriber {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = Never
    typealias OutboundOut = ByteBuffer

    private let core: VarlinkServerCore
    private var logger: Logger
    private var context: ChannelHandlerContext?

    private var isSubscribed = false
    private var discardedBytes = 0
    private var writeInFlight = false
    private var pendingUpdate: SubscriptionUpdate?
    /// The answer in the last reply written to this subscriber.
    private var lastSent: ReachabilityState.Answer?
    /// A read the pipeline asked for while the peer was not taking our replies.
    private var readHeld = false

    init(core: VarlinkServerCore, logger: Logger) {
        self.core = core
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        guard let id = core.connectionOpened(self, channel: context.channel) else {
            context.close(promise: nil)
            return
        }
        logger[metadataKey: "connection"] = "\(id)"
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        core.connectionClosed(self)
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        core.connectionClosed(self)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let message = unwrapInboundIn(data)
        if isSubscribed {
            discardedBytes += message.readableBytes + 1
            if discardedBytes > VarlinkFraming.defaultMaximumMessageSize {
                logger.notice("closing subscribed connection that keeps sending calls")
                context.close(promise: nil)
            }
            return
        }
        let call: AnyVarlinkCall
        do {
            call = try VarlinkCoding.decode(AnyVarlinkCall.self, from: message.readableBytesView)
        } catch {
            logger.notice("closing connection after a malformed message", metadata: ["error": "\(error)"])
            context.close(promise: nil)
            return
        }
        logger.debug("call", metadata: ["method": "\(call.method)"])
        handle(call, context: context)
    }

    private func handle(_ call: AnyVarlinkCall, context: ChannelHandlerContext) {
        switch core.outcome(for: call) {
        case let .reply(parameters):
            guard !call.isOneway else { return }
            write(parameters, continues: false, context: context)
        case let .error(error):
            logger.debug("error reply", metadata: ["method": "\(call.method)", "error": "\(error)"])
            guard !call.isOneway else { return }
            writeFrame(AnyVarlinkReply(error: error), context: context)
        case let .subscribe(filter):
            guard !call.isOneway else { return }
            isSubscribed = true
            let answer = core.hub.add(self, filter: filter, state: core.state)
            // The first reply is the current state; nothing has changed yet.
            let first = StatusReply(sequence: core.sequence, instance: core.instance, path: answer.path, changes: [])
            guard let frame = core.hub.frame(for: first) else {
                logger.error("cannot encode the first Subscribe reply; closing the connection")
                context.close(promise: nil)
                return
            }
            deliver(SubscriptionUpdate(previous: answer, answer: answer, reply: first, frame: frame))
            // Reads continue (to notice a hang-up) even if the subscriber is slow.
            releaseHeldRead(context: context)
        }
    }

    // MARK: Subscription stream

    func deliver(_ update: SubscriptionUpdate) {
        guard let context else { return }
        if writeInFlight || !context.channel.isWritable {
            pendingUpdate = update  // latest value wins; older pending replies are dropped
            return
        }
        guard let frame = frame(for: update) else {
            context.close(promise: nil)
            return
        }
        lastSent = update.answer
        writeInFlight = true
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(frame), promise: promise)
        promise.futureResult.assumeIsolated().whenComplete { [self] result in
            writeInFlight = false
            guard case .success = result else { return }
            sendPendingUpdate()
        }
    }

    /// The shared frame when its `changes` were computed against what this subscriber last
    /// received (the usual case); otherwise, after skipped replies, the reply re-encoded
    /// with the changes since then.
    private func frame(for update: SubscriptionUpdate) -> ByteBuffer? {
        guard let lastSent, lastSent != update.previous else { return update.frame }
        var reply = update.reply
        reply.changes = update.answer.changes(since: lastSent)
        return core.hub.frame(for: reply)
    }

    private func sendPendingUpdate() {
        guard let update = pendingUpdate else { return }
        pendingUpdate = nil
        deliver(update)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            sendPendingUpdate()
            releaseHeldRead(context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    // MARK: Back-pressure for plain calls

    func read(context: ChannelHandlerContext) {
        // A client that sends calls but does not read replies is not read from either,
        // so its replies cannot pile up in memory. Subscribers are always read.
        if !isSubscribed && !context.channel.isWritable {
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
            logger.notice("closing connection: \(framing)")
        } else {
            logger.debug("closing connection after error", metadata: ["error": "\(error)"])
        }
        context.close(promise: nil)
    }

    // MARK: Writing

    private func write(_ parameters: any Codable & Sendable, continues: Bool, context: ChannelHandlerContext, promise: EventLoopPromise<Void>? = nil) {
        writeFrame(VarlinkReply(parameters: AnyCodableParameters(parameters), continues: continues), context: context, promise: promise)
    }

    private func writeFrame(_ reply: some Encodable, context: ChannelHandlerContext, promise: EventLoopPromise<Void>? = nil) {
        var buffer = context.channel.allocator.buffer(capacity: 1024)
        do {
            try buffer.writeVarlinkMessage(reply)
        } catch {
            // Our own types always encode; if one ever does not, drop the connection loudly.
            logger.error("cannot encode reply", metadata: ["error": "\(error)"])
            promise?.fail(error)
            context.close(promise: nil)
            return
        }
        context.writeAndFlush(wrapOutboundOut(buffer), promise: promise)
    }
}

/// Type-erased reply parameters (the dispatcher returns several concrete types).
struct AnyCodableParameters: Codable, Sendable {
    let value: any Codable & Sendable

    init(_ value: any Codable & Sendable) { self.value = value }

    init(from decoder: any Decoder) throws {
        value = try JSONValue(from: decoder)
    }

    func encode(to encoder: any Encoder) throws {
        try value.encode(to: encoder)
    }
}
