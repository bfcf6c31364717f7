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
/// The cutting is `VarlinkFrameDecoder`'s, the framer clients use too; a connection holding
/// no partial message holds no buffer at all.
final class RequestFramingHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let core: ServerCore
    private let ticket: ConnectionTicket
    /// Bytes of a message not yet complete, if any.
    private var pending: ByteBuffer?
    private var decoder = VarlinkFrameDecoder(maximumMessageSize: VarlinkFraming.defaultMaximumMessageSize)
    private var deadline: Scheduled<Void>?

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
            if deadline == nil {
                deadline = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(core.limits.partialMessageDeadline)) { [self] in
                    core.refuse(ticket, .partialMessage(deadline: core.limits.partialMessageDeadline))
                    context.close(promise: nil)
                }
            }
        }
        if let limit = core.buffering(ticket, bytes: held) {
            core.refuse(ticket, .buffering(limit))
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        pending = nil
        context.fireChannelInactive()
    }
}
