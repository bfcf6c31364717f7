import NIOCore
import ReachProtocol

/// What a Varlink connection is doing, and what to do when something happens to it. Pure:
/// `VarlinkConnectionHandler` feeds it events and carries out the actions it returns.
///
/// Like sd-varlink, a connection serves one call at a time: while a call is answered off
/// the loop (a reload, a target check) later calls queue and the socket is not read. A
/// `Subscribe` stream never ends, so a streaming connection serves nothing else: what it
/// still sends is read (so a hang-up is noticed) and dropped, up to `maximumDiscardedBytes`.
/// Plain calls are answered and read only while their replies can be written; a stream is
/// always read, and its replies go through a `LatestValueCoalescer` (a slow reader gets the
/// newest). The channel takes each frame at once; its write buffer's watermark
/// (`VarlinkServer`) is the back-pressure: while the buffer is over it the stream pauses,
/// and frames fold into one.
struct ConnectionStateMachine<Update: Coalescible> {
    /// The calls of a connection that is not streaming.
    struct Calls {
        /// Calls received while one was being answered, oldest first.
        var queued = CircularBuffer<ByteBuffer>()
        /// A read the pipeline asked for while replies could not be written.
        var readHeld = false
    }

    /// A streaming connection.
    struct Stream {
        var coalescer: LatestValueCoalescer<Update>
        /// Bytes of calls received since the stream started.
        var discardedBytes = 0
    }

    enum State {
        /// Serving plain calls, none outstanding.
        case idle(Calls)
        /// A call's answer is on its way; the calls behind it wait.
        case answering(Calls)
        /// Carrying a `Subscribe` or `SubscribeTarget` stream.
        case streaming(Stream)
        /// Being closed: nothing it sends is looked at any more.
        case closing
        /// Only while a stream's payload is changed in place (no copy of it is made).
        case modifying
    }

    /// What the handler does next.
    enum Action {
        /// Nothing.
        case none
        /// Decode and carry out this call.
        case handle(ByteBuffer)
        /// Write the answer that arrived (then ask `nextCall` for the calls behind it).
        case writeAnswer
        /// Write this stream reply; the next may follow at once unless the socket stops
        /// being writable.
        case writeFrame(Update)
        /// Pass the read on (now, or the one held back).
        case read
        /// Close the connection; with a refusal to count and log, or nil when nobody is to blame.
        case close(ConnectionRefusal?)
    }

    private(set) var state: State = .idle(Calls())
    /// How much a streaming connection may send before it is closed.
    let maximumDiscardedBytes: Int

    init(maximumDiscardedBytes: Int) {
        self.maximumDiscardedBytes = maximumDiscardedBytes
    }

    /// A message was cut from what the client sent; the socket is `writable` or not.
    mutating func received(_ message: ByteBuffer, writable: Bool) -> Action {
        switch state {
        case var .idle(calls):
            // A call whose reply could not be written now waits, unread calls behind it: a
            // client that does not read gets no more answers than its socket and the write
            // buffer hold, however many calls one read brought.
            guard calls.queued.isEmpty, writable else {
                calls.queued.append(message)
                state = .idle(calls)
                return .none
            }
            return .handle(message)
        case var .answering(calls):
            calls.queued.append(message)
            state = .answering(calls)
            return .none
        case var .streaming(stream):
            stream.discardedBytes += message.readableBytes + 1
            guard stream.discardedBytes <= maximumDiscardedBytes else { return close(.keptSendingWhileSubscribed) }
            state = .streaming(stream)
            return .none
        case .closing:
            return .none
        case .modifying:
            preconditionFailure("a connection's state is read while it is modified")
        }
    }

    /// The call just handled is answered off the loop; the calls behind it wait.
    mutating func answerDeferred() {
        guard case let .idle(calls) = state else { return }
        state = .answering(calls)
    }

    /// The deferred answer arrived.
    mutating func answerArrived() -> Action {
        guard case let .answering(calls) = state else { return .none }
        state = .idle(calls)
        return .writeAnswer
    }

    /// After an answer, or once the socket is writable again: the next queued call to
    /// handle, else the held read to pass on; nothing while not `writable`.
    mutating func nextCall(writable: Bool) -> Action {
        guard case var .idle(calls) = state, writable else { return .none }
        if let message = calls.queued.popFirst() {
            state = .idle(calls)
            return .handle(message)
        }
        guard calls.readHeld else { return .none }
        calls.readHeld = false
        state = .idle(calls)
        return .read
    }

    /// The call just handled started a stream; its replies wait while the socket is not
    /// `writable`. Calls still queued are dropped like any a streaming connection sends.
    mutating func streamStarted(writable: Bool) -> Action {
        guard case let .idle(calls) = state else { return .none }
        var coalescer = LatestValueCoalescer<Update>(consumerReady: true)
        if !writable { coalescer.pause() }
        state = .streaming(Stream(coalescer: coalescer))
        // Reads continue (to notice a hang-up) however slowly the subscriber reads.
        return calls.readHeld ? .read : .none
    }

    /// The pipeline asks for a read; the socket is `writable` or not.
    mutating func readRequested(writable: Bool) -> Action {
        switch state {
        case var .idle(calls) where !writable:
            // A client that sends calls but does not read replies is not read from either,
            // so its replies cannot pile up in memory.
            calls.readHeld = true
            state = .idle(calls)
            return .none
        case var .answering(calls):
            calls.readHeld = true
            state = .answering(calls)
            return .none
        case .idle, .streaming, .closing:
            return .read
        case .modifying:
            preconditionFailure("a connection's state is read while it is modified")
        }
    }

    /// The socket became `writable`, or stopped being.
    mutating func writabilityChanged(writable: Bool) -> Action {
        switch state {
        case var .streaming(stream):
            if writable {
                let action = Self.handOver(stream.coalescer.resume(), to: &stream)
                state = .streaming(stream)
                return action
            }
            stream.coalescer.pause()
            state = .streaming(stream)
            return .none
        case .idle where writable:
            return nextCall(writable: true)
        case .idle, .answering, .closing:
            return .none
        case .modifying:
            preconditionFailure("a connection's state is read while it is modified")
        }
    }

    /// A stream reply is offered (the connection's filter group changed, or its target's answer).
    mutating func offer(_ update: Update) -> Action {
        guard case var .streaming(stream) = state else { return .none }
        state = .modifying
        let action = Self.handOver(stream.coalescer.offer(update), to: &stream)
        state = .streaming(stream)
        return action
    }

    /// The connection is to close: for what its client did (`refusal`), or for a reason of
    /// reachd's own (nil). Only the first close counts.
    mutating func close(_ refusal: ConnectionRefusal?) -> Action {
        if case .closing = state { return .none }
        state = .closing
        return .close(refusal)
    }

    /// The channel takes a frame at once (no promise per write: docs/performance.md), so the
    /// consumer is ready again right away; only a paused coalescer (a full write buffer)
    /// holds frames back.
    private static func handOver(_ action: LatestValueCoalescer<Update>.Action, to stream: inout Stream) -> Action {
        guard case let .deliver(update) = action else { return .none }
        _ = stream.coalescer.consumerReady()
        return .writeFrame(update)
    }
}

extension ConnectionStateMachine.Action: Equatable where Update: Equatable {}
