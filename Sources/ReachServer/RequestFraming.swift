import NIOCore
import ReachProtocol

/// One admitted connection: its number in the logs and the uid it counts against.
struct ConnectionTicket: Hashable, Sendable {
    /// Numbered from 1 in accept order.
    var id: Int
    /// The peer's uid (`SO_PEERCRED`).
    var uid: UInt32
}

/// Cuts a client's bytes into Varlink messages (JSON, then NUL) and keeps what it holds
/// in check: a message over the size limit closes the connection, a half-sent message
/// must be finished before `ServerLimits.partialMessageDeadline`, and the bytes it buffers
/// count against the server's budget (per uid and in total), which may refuse them.
///
/// The deadline counts only while reachd reads: when the connection's reads are held
/// (its client does not read the replies), the rest of the message may be in the socket
/// already, and a deadline that passed meanwhile starts again once reads resume.
///
/// The cutting is `VarlinkFrameDecoder`'s, the framer clients use too; a connection holding
/// no partial message holds no buffer at all.
final class RequestFramingHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let core: ServerCore
    private let ticket: ConnectionTicket
    /// Bytes of a message not yet complete, if any.
    private var pending: ByteBuffer?
    private var decoder = VarlinkFrameDecoder(maximumMessageSize: VarlinkFraming.defaultMaximumMessageSize)
    private var deadline: Scheduled<Void>?
    /// From the end of a read until the next is asked for: while true, the reads are held.
    private var awaitingRead = false
    /// The deadline passed while the reads were held; it starts again when they resume.
    private var expiredWhileHeld = false

    init(core: ServerCore, ticket: ConnectionTicket) {
        self.core = core
        self.ticket = ticket
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        if pending == nil {
            pending = incoming
        } else {
            pending!.writeBuffer(&incoming)
        }
        do {
            while let message = try decoder.decode(buffer: &pending!) {
                context.fireChannelRead(wrapInboundOut(message))
                guard context.channel.isActive else { return }
            }
        } catch {
            context.fireErrorCaught(error)
            return
        }
        let held = pending!.readableBytes
        if held == 0 {
            pending = nil
            deadline?.cancel()
            deadline = nil
        } else {
            pending!.discardReadBytes()
            if deadline == nil { armDeadline(context: context) }
        }
        if let limit = core.buffering(ticket, bytes: held) {
            core.refuse(ticket, .buffering(limit))
            context.close(promise: nil)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        awaitingRead = true
        context.fireChannelReadComplete()
    }

    /// A read the handlers behind this one let through: reads are not held (any more).
    func read(context: ChannelHandlerContext) {
        awaitingRead = false
        if expiredWhileHeld {
            expiredWhileHeld = false
            if pending != nil { armDeadline(context: context) }
        }
        context.read()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        pending = nil
        context.fireChannelInactive()
    }

    private func armDeadline(context: ChannelHandlerContext) {
        let limit = core.limits.partialMessageDeadline
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(limit)) { [self] in
            deadline = nil
            guard !awaitingRead else {
                expiredWhileHeld = true  // not the client's delay but reachd's
                return
            }
            core.refuse(ticket, .partialMessage(deadline: limit))
            context.close(promise: nil)
        }
    }
}
