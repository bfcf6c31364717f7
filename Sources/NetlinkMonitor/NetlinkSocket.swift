import CNetlink
import Glibc
import LinuxSystem
import SystemPackage

/// One connected NETLINK_ROUTE socket.
///
/// libnl allocates, connects and configures it (membership, buffer sizes) and builds and
/// sends requests. Reading is done here, without libnl's callback set: each datagram is
/// read(2) into one buffer, its messages are walked with `nlmsg_ok` / `nlmsg_next`, and
/// the closure handed to *this* call sees each one. So every caller brings its own
/// handler, errors arrive as `Errno`, and NLMSG_DONE, NLMSG_ERROR, NLM_F_DUMP_INTR and
/// sequence numbers are handled in plain sight (`request`).
///
/// Owns the `nl_sock` (and with it the descriptor) and the buffer; frees both in
/// `deinit`. Not thread-safe: only the thread that owns the monitor uses it.
final class NetlinkSocket {
    /// What one `receive` found.
    enum Reception: Equatable {
        /// A datagram was read and its messages handed over.
        case datagram
        /// Nothing to read (EAGAIN on a non-blocking socket).
        case drained
        /// ENOBUFS: the receive buffer overflowed and the kernel dropped messages.
        case eventsLost
    }

    /// How the kernel answered a request.
    enum Answer: Equatable {
        /// Completely: NLMSG_DONE, a single reply or an acknowledgement.
        case complete
        /// Completely, but a message of the dump carried NLM_F_DUMP_INTR: the dump
        /// raced a change and is inconsistent.
        case interrupted
        /// With an error: NLMSG_ERROR, or a negative result in NLMSG_DONE.
        case failed(Errno)
    }

    /// Bytes one read may take. The kernel never builds a netlink skb bigger than about
    /// 32 KiB for us: a notification is sized to its one message, and a dump datagram is
    /// clamped to 32 KiB unless a single message is larger, which for rtnetlink means a
    /// link with SR-IOV VF info, which reachd never asks for (no RTEXT_FILTER_VF). So
    /// 64 KiB always holds a whole datagram (read(2) would cut a longer one silently),
    /// and reading it in one call, with no MSG_PEEK to size it first, halves the
    /// syscalls of an event flood.
    static let bufferSize = 64 << 10
    /// Room for any request reachd sends: a fixed header and a few small attributes (the
    /// largest, a FIB lookup with a uid and an interface, is under 100 bytes). libnl's
    /// default is a zeroed page per message, twice per change for the lookups.
    static let requestCapacity = 512

    /// What the socket is for, used in error messages.
    let role: String
    /// The socket's descriptor (owned by the `nl_sock`).
    let descriptor: FileDescriptor
    /// The libnl socket.
    private let handle: OpaquePointer
    /// Where datagrams are read to.
    private let buffer: UnsafeMutableRawBufferPointer

    /// Allocates and connects a socket of `protocol` (NETLINK_ROUTE unless said);
    /// `blocking: false` sets O_NONBLOCK; a blocking socket's reads give up after `timeout`
    /// when one is given (a request then fails with EAGAIN).
    init(role: String, blocking: Bool, protocol: Int32 = NETLINK_ROUTE, timeout: Duration? = nil) throws(NetlinkError) {
        guard let socket = nl_socket_alloc() else {
            throw NetlinkError(operation: "nl_socket_alloc(\(role))", libnlCode: NLE_NOMEM)
        }
        func check(_ result: Int32, _ operation: String) throws(NetlinkError) {
            if result < 0 {
                nl_socket_free(socket)
                throw NetlinkError(operation: "\(operation)(\(role))", libnlCode: result)
            }
        }
        try check(nl_connect(socket, `protocol`), "nl_connect")
        // Requests ask for no acknowledgement: an answer or an error ends each one.
        nl_socket_disable_auto_ack(socket)
        if !blocking {
            try check(nl_socket_set_nonblocking(socket), "nl_socket_set_nonblocking")
        }
        if let timeout {
            do {
                try FileDescriptor(rawValue: nl_socket_get_fd(socket)).setTimeouts(timeout)
            } catch {
                nl_socket_free(socket)
                throw NetlinkError(operation: "setsockopt(SO_RCVTIMEO, \(role))", errno: error)
            }
        }
        self.role = role
        handle = socket
        descriptor = FileDescriptor(rawValue: nl_socket_get_fd(socket))
        buffer = .allocate(byteCount: Self.bufferSize, alignment: MemoryLayout<nlmsghdr>.alignment)
    }

    deinit {
        nl_socket_free(handle)  // closes the descriptor too
        buffer.deallocate()
    }

    /// Sets the kernel receive buffer: `nl_socket_set_buffer_size` (capped at
    /// `net.core.rmem_max`), then SO_RCVBUFFORCE, which may exceed the cap with
    /// CAP_NET_ADMIN. Without the capability the capped size stays, which is fine.
    func setReceiveBufferSize(_ size: Int) throws(NetlinkError) {
        let result = nl_socket_set_buffer_size(handle, Int32(clamping: size), 0)
        if result < 0 { throw NetlinkError(operation: "nl_socket_set_buffer_size(\(role))", libnlCode: result) }
        try? descriptor.forceReceiveBufferSize(size)
    }

    /// Joins rtnetlink multicast groups.
    func join(_ groups: [rtnetlink_groups]) throws(NetlinkError) {
        for group in groups {
            let result = nl_socket_add_membership(handle, Int32(group.rawValue))
            if result < 0 {
                throw NetlinkError(operation: "nl_socket_add_membership(\(group.rawValue), \(role))", libnlCode: result)
            }
        }
    }

    /// Joins multicast groups of any netlink protocol by number (sock_diag's destroy groups).
    func join(groupNumbers groups: [Int32]) throws(NetlinkError) {
        for group in groups {
            let result = nl_socket_add_membership(handle, group)
            if result < 0 { throw NetlinkError(operation: "nl_socket_add_membership(\(group), \(role))", libnlCode: result) }
        }
    }

    /// Reads one datagram and hands each message in it to `handle`, in order.
    ///
    /// - Throws: any read error other than EAGAIN (`.drained`) and ENOBUFS (`.eventsLost`).
    func receive(_ handle: (NetlinkMessage) -> Void) throws(NetlinkError) -> Reception {
        let count: Int
        var sender = sockaddr_nl()
        do {
            count = try withUnsafeMutablePointer(to: &sender) { (address) throws(Errno) in
                try address.withMemoryRebound(to: sockaddr.self, capacity: 1) { (address) throws(Errno) in
                    var length = socklen_t(MemoryLayout<sockaddr_nl>.size)
                    return try systemCall { recvfrom(descriptor.rawValue, buffer.baseAddress, buffer.count, 0, address, &length) }
                }
            }
        } catch .resourceTemporarilyUnavailable {
            return .drained
        } catch .noBufferSpace {
            return .eventsLost
        } catch {
            throw NetlinkError(operation: "recvfrom(\(role))", errno: error)
        }
        // Only the kernel (port 0) speaks for the kernel. Another process with CAP_NET_ADMIN
        // could send datagrams to this port; they are dropped unread.
        guard sender.nl_pid == 0 else { return .datagram }
        var remaining = Int32(count)
        var message = buffer.baseAddress!.bindMemory(to: nlmsghdr.self, capacity: 1)
        while nlmsg_ok(message, remaining) != 0 {
            handle(NetlinkMessage(header: message))
            message = nlmsg_next(message, &remaining)
        }
        return .datagram
    }

    /// Sends the request `build` fills in, then reads (blocking) until it is answered,
    /// handing each message of the answer to `handle`. Answers to earlier requests
    /// (another sequence number) are skipped.
    func request(
        type: Int32, flags: Int32, build: (inout NetlinkRequest) throws(NetlinkError) -> Void,
        answer handle: (NetlinkMessage) -> Void
    ) throws(NetlinkError) -> Answer {
        let sequence = try send(type: type, flags: flags, build: build)
        var answer: Answer?
        var interrupted = false
        while answer == nil {
            let reception = try receive { message in
                guard answer == nil, message.sequence == sequence else { return }
                if message.flags & UInt16(NLM_F_DUMP_INTR) != 0 { interrupted = true }
                switch Int32(message.type) {
                case NLMSG_DONE:
                    // The payload is the dump's result, an int: 0, or -errno if it failed.
                    if let result = message.fixedHeader(Int32.self), result < 0 {
                        answer = .failed(Errno(kernelValue: result))
                    } else {
                        answer = .complete
                    }
                case NLMSG_ERROR:
                    // error == 0 is an acknowledgement.
                    guard let error = message.fixedHeader(nlmsgerr.self) else { answer = .failed(.badMessage); return }
                    answer = error.error == 0 ? .complete : .failed(Errno(kernelValue: error.error))
                case NLMSG_NOOP, NLMSG_OVERRUN:
                    break
                default:
                    handle(message)
                    // A reply that is not part of a multipart dump is the whole answer.
                    if message.flags & UInt16(NLM_F_MULTI) == 0 { answer = .complete }
                }
            }
            switch reception {
            case .datagram: continue
            case .drained: throw NetlinkError(operation: "read(\(role))", errno: .resourceTemporarilyUnavailable)
            case .eventsLost: throw NetlinkError(operation: "read(\(role))", errno: .noBufferSpace)
            }
        }
        if answer == .complete && interrupted { return .interrupted }
        return answer ?? .complete
    }

    /// Sends a message built by `build` and returns the sequence number libnl gave it,
    /// which the kernel's answer carries. The message is freed here.
    private func send(type: Int32, flags: Int32, build: (inout NetlinkRequest) throws(NetlinkError) -> Void) throws(NetlinkError) -> UInt32 {
        guard let message = nlmsg_alloc_size(Self.requestCapacity) else {
            throw NetlinkError(operation: "nlmsg_alloc_size(\(role))", libnlCode: NLE_NOMEM)
        }
        defer { nlmsg_free(message) }
        guard nlmsg_put(message, UInt32(NL_AUTO_PORT), UInt32(NL_AUTO_SEQ), type, 0, flags) != nil else {
            throw NetlinkError(operation: "nlmsg_put(\(role))", libnlCode: NLE_NOMEM)
        }
        var request = NetlinkRequest(message: message)
        try build(&request)
        let result = nl_send_auto(handle, message)
        if result < 0 { throw NetlinkError(operation: "nl_send_auto(\(role))", libnlCode: result) }
        return nlmsg_hdr(message).pointee.nlmsg_seq
    }
}

/// A request being built: libnl's `nlmsg_append` and `nla_put` on a fresh `nl_msg`.
struct NetlinkRequest {
    /// The message (owned by `NetlinkSocket.send`).
    let message: OpaquePointer

    /// Appends the fixed header (`rtmsg`, `ifinfomsg`, …), padded to NLMSG_ALIGNTO.
    mutating func append<Header: BitwiseCopyable>(_ header: Header) throws(NetlinkError) {
        var header = header
        let result = withUnsafeMutableBytes(of: &header) {
            nlmsg_append(message, $0.baseAddress, $0.count, Int32(NLMSG_ALIGNTO))
        }
        if result < 0 { throw NetlinkError(operation: "nlmsg_append", libnlCode: result) }
    }

    /// Appends an attribute holding `bytes`.
    mutating func put(_ type: Int32, _ bytes: [UInt8]) throws(NetlinkError) {
        let result = bytes.withUnsafeBytes { nla_put(message, type, Int32($0.count), $0.baseAddress) }
        if result < 0 { throw NetlinkError(operation: "nla_put(\(type))", libnlCode: result) }
    }
}
