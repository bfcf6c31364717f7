import CNetlink
import Glibc

/// Where `nl_recvmsgs` delivers messages: the context object behind the C callbacks'
/// `void *arg` (passed unretained; the owning `NetlinkSocket` keeps it alive).
final class MessageReceiver {
    /// When set, only messages answering this request are delivered; others are stale
    /// leftovers and skipped.
    var expectedSequence: UInt32?
    /// Called once per valid message, inside `nl_recvmsgs`.
    var handler: (RawMessage) -> Void = { _ in }
    /// The answer to `expectedSequence` is complete (NLMSG_DONE, a single reply, or an error).
    var finished = false
    /// A message of the dump carried NLM_F_DUMP_INTR: the dump is inconsistent.
    var interrupted = false
    /// The raw errno of an NLMSG_ERROR answering `expectedSequence` (positive).
    var kernelErrno: Int32?

    /// Prepares for the answer to one request.
    func expect(_ sequence: UInt32?) {
        expectedSequence = sequence
        finished = false
        interrupted = false
        kernelErrno = nil
    }

    fileprivate func matches(_ sequence: UInt32) -> Bool {
        expectedSequence.map { $0 == sequence } ?? true
    }
}

/// C entry points for libnl's callbacks. `arg` is an unretained `MessageReceiver`.
private enum Callbacks {
    static let valid: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = { message, arg in
        guard let message, let arg, let header = nlmsg_hdr(message) else { return Int32(NL_SKIP.rawValue) }
        let receiver = Unmanaged<MessageReceiver>.fromOpaque(arg).takeUnretainedValue()
        let raw = RawMessage(header: header)
        guard receiver.matches(raw.sequence) else { return Int32(NL_SKIP.rawValue) }
        if raw.flags & Kernel.flagDumpInterrupted != 0 { receiver.interrupted = true }
        receiver.handler(raw)
        // A reply that is not part of a multipart dump is the whole answer.
        if receiver.expectedSequence != nil && raw.flags & UInt16(NLM_F_MULTI) == 0 { receiver.finished = true }
        return Int32(NL_OK.rawValue)
    }

    static let finish: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = { message, arg in
        guard let message, let arg, let header = nlmsg_hdr(message) else { return Int32(NL_STOP.rawValue) }
        let receiver = Unmanaged<MessageReceiver>.fromOpaque(arg).takeUnretainedValue()
        let raw = RawMessage(header: header)
        guard receiver.matches(raw.sequence) else { return Int32(NL_SKIP.rawValue) }
        if raw.flags & Kernel.flagDumpInterrupted != 0 { receiver.interrupted = true }
        receiver.finished = true
        return Int32(NL_STOP.rawValue)
    }

    /// Keeps the raw errno: libnl's own mapping folds ENETUNREACH / EHOSTUNREACH
    /// into generic codes, and the lookup needs them exactly.
    static let error: @convention(c) (UnsafeMutablePointer<sockaddr_nl>?, UnsafeMutablePointer<nlmsgerr>?, UnsafeMutableRawPointer?) -> Int32 = { _, error, arg in
        guard let error, let arg else { return Int32(NL_SKIP.rawValue) }
        let receiver = Unmanaged<MessageReceiver>.fromOpaque(arg).takeUnretainedValue()
        guard receiver.matches(error.pointee.msg.nlmsg_seq) else { return Int32(NL_SKIP.rawValue) }
        receiver.kernelErrno = abs(error.pointee.error)
        receiver.finished = true
        return Int32(NL_SKIP.rawValue)
    }

    /// Sequence numbers are checked by `MessageReceiver` instead.
    static let acceptAll: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = { _, _ in
        Int32(NL_OK.rawValue)
    }
}

/// One connected NETLINK_ROUTE socket (libnl `nl_sock`) with its own callback set.
///
/// Owns the `nl_sock`, the `nl_cb` and the receiver context, and frees them in
/// `deinit`. Not thread-safe: used only by the thread that owns the monitor.
final class NetlinkSocket {
    /// What the socket is for, used in error messages.
    let role: String
    /// The libnl socket.
    let handle: OpaquePointer
    /// The callback set handed to `nl_recvmsgs`.
    private let callbacks: OpaquePointer
    /// Context behind the callbacks.
    let receiver = MessageReceiver()

    /// Allocates and connects a socket; `blocking: false` sets O_NONBLOCK.
    init(role: String, blocking: Bool, messageBufferSize: Int = 64 << 10) throws(NetlinkError) {
        self.role = role
        guard let socket = nl_socket_alloc() else {
            throw NetlinkError(operation: "nl_socket_alloc(\(role))", libnlCode: Int32(NLE_NOMEM))
        }
        guard let callbacks = nl_cb_alloc(NL_CB_DEFAULT) else {
            nl_socket_free(socket)
            throw NetlinkError(operation: "nl_cb_alloc(\(role))", libnlCode: Int32(NLE_NOMEM))
        }
        handle = socket
        self.callbacks = callbacks
        // From here on deinit frees both.
        nl_socket_disable_seq_check(socket)
        nl_socket_disable_auto_ack(socket)
        // No MSG_PEEK: the kernel never builds a netlink skb larger than ~32 KiB (it clamps
        // max_recvmsg_len), so a 64 KiB buffer always suffices and each message costs one
        // recvmsg instead of two — that halves the syscalls of an event flood.
        nl_socket_disable_msg_peek(socket)
        let context = Unmanaged.passUnretained(receiver).toOpaque()
        nl_cb_set(callbacks, NL_CB_VALID, NL_CB_CUSTOM, Callbacks.valid, context)
        nl_cb_set(callbacks, NL_CB_FINISH, NL_CB_CUSTOM, Callbacks.finish, context)
        nl_cb_set(callbacks, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, Callbacks.acceptAll, nil)
        nl_cb_err(callbacks, NL_CB_CUSTOM, Callbacks.error, context)
        try check(nl_connect(socket, Int32(NETLINK_ROUTE)), "nl_connect")
        try check(nl_socket_set_msg_buf_size(socket, messageBufferSize), "nl_socket_set_msg_buf_size")
        if !blocking {
            try check(nl_socket_set_nonblocking(socket), "nl_socket_set_nonblocking")
        }
    }

    deinit {
        nl_cb_put(callbacks)
        nl_socket_free(handle)  // closes the file descriptor too
    }

    /// The socket's file descriptor.
    var fileDescriptor: Int32 { nl_socket_get_fd(handle) }

    /// Sets the kernel receive buffer: `nl_socket_set_buffer_size`, then SO_RCVBUFFORCE,
    /// which may exceed `net.core.rmem_max` with CAP_NET_ADMIN; without it the first
    /// call's (capped) size stays, silently.
    func setReceiveBufferSize(_ size: Int) throws(NetlinkError) {
        try check(nl_socket_set_buffer_size(handle, Int32(clamping: size), 0), "nl_socket_set_buffer_size")
        var value = Int32(clamping: size)
        _ = setsockopt(fileDescriptor, SOL_SOCKET, SO_RCVBUFFORCE, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Joins rtnetlink multicast groups.
    func join(_ groups: [Int32]) throws(NetlinkError) {
        for group in groups {
            try check(nl_socket_add_membership(handle, group), "nl_socket_add_membership(\(group))")
        }
    }

    /// Sends a message built by `build` (which fills in a fresh `nl_msg`) and returns
    /// the sequence number the kernel will answer with. The message is freed here.
    func send(type: UInt16, flags: Int32, build: (OpaquePointer) throws(NetlinkError) -> Void) throws(NetlinkError) -> UInt32 {
        guard let message = nlmsg_alloc_simple(Int32(type), flags) else {
            throw NetlinkError(operation: "nlmsg_alloc_simple(\(role))", libnlCode: Int32(NLE_NOMEM))
        }
        defer { nlmsg_free(message) }
        try build(message)
        try check(nl_send_auto(handle, message), "nl_send_auto")
        return nlmsg_hdr(message).pointee.nlmsg_seq
    }

    /// One `nl_recvmsgs` call: reads one datagram (or, for a dump, up to NLMSG_DONE)
    /// and feeds it to `receiver`. Returns libnl's result (negative `NLE_*` on error).
    func receiveOnce() -> Int32 {
        nl_recvmsgs(handle, callbacks)
    }

    /// Waits for the complete answer to request `sequence` on a blocking socket,
    /// passing each message to `handler`.
    func awaitAnswer(to sequence: UInt32, _ handler: @escaping (RawMessage) -> Void) throws(NetlinkError) {
        receiver.expect(sequence)
        receiver.handler = handler
        defer {
            receiver.handler = { _ in }
            receiver.expectedSequence = nil
        }
        while !receiver.finished {
            let result = receiveOnce()
            // -NLE_DUMP_INTR: libnl read the whole dump; `receiver.interrupted` says so.
            if result < 0 && result != -Int32(NLE_DUMP_INTR) {
                throw NetlinkError(operation: "nl_recvmsgs(\(role))", libnlCode: result)
            }
        }
    }

    private func check(_ result: Int32, _ operation: String) throws(NetlinkError) {
        if result < 0 { throw NetlinkError(operation: "\(operation)(\(role))", libnlCode: result) }
    }
}
