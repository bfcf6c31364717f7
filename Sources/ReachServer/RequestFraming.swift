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
    private var deadline = Deadline.none
    /// From the end of a read until the next is asked for: while true, the reads are held.
    private var awaitingRead = false

    /// The half-sent message's deadline.
    private enum Deadline {
        /// No half-sent message.
        case none
        /// Running since the message's first bytes were read.
        case running(Scheduled<Void>)
        /// Passed while the reads were held: it starts again once they resume.
        case lapsedWhileReadsHeld
    }

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
            stopDeadline()
        } else {
            pending!.discardReadBytes()
            if case .running = deadline {} else { startDeadline(context: context) }
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
        if case .lapsedWhileReadsHeld = deadline { startDeadline(context: context) }
        context.read()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopDeadline()
        pending = nil
        context.fireChannelInactive()
    }

    private func startDeadline(context: ChannelHandlerContext) {
        let limit = core.limits.partialMessageDeadline
        deadline = .running(context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(limit)) { [self] in
            guard !awaitingRead else {
                deadline = .lapsedWhileReadsHeld  // the delay was reachd's, not the client's
                return
            }
            deadline = .none
            core.refuse(ticket, .partialMessage(deadline: limit))
            context.close(promise: nil)
        })
    }

    private func stopDeadline() {
        if case let .running(task) = deadline { task.cancel() }
        deadline = .none
    }
}
