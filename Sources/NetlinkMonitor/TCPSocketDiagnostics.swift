import CNetlink
import Glibc
import ReachabilityCore

/// The host's TCP sockets as the kernel's sock_diag reports them: one dump per family
/// (`inet_diag_req_v2` with INET_DIAG_INFO, so each socket comes with its `tcp_info`), each
/// socket attributed to the interface it is bound to or else the one holding its source
/// address, with its remote address and owner (the stall rule's breadth). Reads only; no
/// packet is sent.
///
/// A fresh NETLINK_SOCK_DIAG socket per read, closed after it: between polls reachd holds
/// nothing open but, while a stall stands, the `DestroyWatch`. Listening, TIME_WAIT, closed and half-open (SYN_RECV) sockets are not asked
/// for (the kernel filters them), nor are loopback ones kept. At most `limit` sockets are
/// kept per read; the rest of the dump is read through the one receive buffer and skipped,
/// so a host with 100 000 sockets costs time in the kernel, not memory here.
package enum TCPSocketDiagnostics {
    /// What one read found.
    package struct Reading: Sendable, Equatable {
        /// The sockets kept, at most the limit.
        package var samples: [TCPSocketSample] = []
        /// Sockets past the limit (or on no known interface), not kept.
        package var skipped = 0
    }

    /// The states asked for: everything that may carry traffic out of this host.
    static let states: UInt32 = [
        TCP_ESTABLISHED, TCP_SYN_SENT, TCP_FIN_WAIT1, TCP_FIN_WAIT2, TCP_CLOSE_WAIT, TCP_LAST_ACK, TCP_CLOSING,
    ].reduce(0) { $0 | (1 << UInt32($1)) }

    /// Reads the TCP sockets of both families.
    ///
    /// - Parameters:
    ///   - addresses: the interfaces' addresses, to attribute a socket by its source address.
    ///   - limit: the most sockets kept.
    package static func read(addresses: [InterfaceAddress], limit: Int) throws(NetlinkError) -> Reading {
        let owners = Self.owners(addresses)
        let socket = try NetlinkSocket(role: "sock_diag", blocking: true, protocol: NETLINK_SOCK_DIAG)
        var reading = Reading()
        for family in [AF_INET, AF_INET6] {
            var request = inet_diag_req_v2()
            request.sdiag_family = UInt8(family)
            request.sdiag_protocol = UInt8(IPPROTO_TCP)
            request.idiag_ext = UInt8(1 << (INET_DIAG_INFO - 1))
            request.idiag_states = states
            let answer = try socket.request(type: Int32(SOCK_DIAG_BY_FAMILY), flags: NLM_F_DUMP) { (message) throws(NetlinkError) in
                try message.append(request)
            } answer: { message in
                guard let sample = sample(message, owners: owners) else { return }
                if reading.samples.count < limit {
                    reading.samples.append(sample)
                } else {
                    reading.skipped += 1
                }
            }
            if case let .failed(errno) = answer { throw NetlinkError(operation: "sock_diag dump", errno: errno) }
        }
        return reading
    }

    /// What one drain of a `DestroyWatch` found.
    package struct Destroyed: Sendable, Equatable {
        /// The destroyed sockets' last counters, at most the limit.
        package var samples: [TCPSocketSample] = []
        /// The kernel dropped records (ENOBUFS: its receive buffer was full): what they said is unknown.
        package var overflowed = false
        /// The drain stopped at the limit; the rest wait for the next one.
        package var atLimit = false

        /// Creates a drain's findings.
        package init(samples: [TCPSocketSample] = [], overflowed: Bool = false, atLimit: Bool = false) {
            self.samples = samples
            self.overflowed = overflowed
            self.atLimit = atLimit
        }
    }

    /// The kernel's sock_diag destroy broadcast (SKNLGRP_INET_TCP_DESTROY and
    /// SKNLGRP_INET6_TCP_DESTROY): one SOCK_DIAG_BY_FAMILY message per TCP socket destroyed
    /// in reachd's namespace, `inet_diag_msg` plus INET_DIAG_INFO's `tcp_info`, as a dump
    /// gives them (the uid is not filled in). No privilege is needed.
    ///
    /// One non-blocking NETLINK_SOCK_DIAG socket, opened while a stall stands and closed with
    /// this object; never polled: the stall reads drain it. Records wait in the socket's
    /// receive buffer meanwhile; those it cannot hold the kernel drops (ENOBUFS on the next read).
    package final class DestroyWatch {
        private let socket: NetlinkSocket

        /// Opens the socket and joins both families' TCP destroy groups.
        package init() throws(NetlinkError) {
            socket = try NetlinkSocket(role: "sock_diag destroy", blocking: false, protocol: NETLINK_SOCK_DIAG)
            try socket.join(groupNumbers: [Int32(SKNLGRP_INET_TCP_DESTROY.rawValue), Int32(SKNLGRP_INET6_TCP_DESTROY.rawValue)])
        }

        /// Reads what was broadcast since the last drain, until nothing is left or after
        /// `limit` reads (a record each: the kernel sends one per datagram), attributed like a
        /// dump's samples.
        package func drain(addresses: [InterfaceAddress], limit: Int) throws(NetlinkError) -> Destroyed {
            let owners = TCPSocketDiagnostics.owners(addresses)
            var destroyed = Destroyed()
            // Counted by reads, ENOBUFS included, so a flood cannot keep the drain going.
            for _ in 0..<max(limit, 1) {
                let reception = try socket.receive { message in
                    if let sample = TCPSocketDiagnostics.sample(message, owners: owners), destroyed.samples.count < limit {
                        destroyed.samples.append(sample)
                    }
                }
                switch reception {
                case .datagram: continue
                case .drained: return destroyed
                case .eventsLost: destroyed.overflowed = true
                }
            }
            destroyed.atLimit = true
            return destroyed
        }
    }

    /// The interface holding each address, to attribute a socket by its source address.
    static func owners(_ addresses: [InterfaceAddress]) -> [IPAddress: Int32] {
        var owners: [IPAddress: Int32] = [:]
        for address in addresses { owners[address.address] = address.interfaceIndex }
        return owners
    }

    /// One dump or destroy message as a sample; nil for a loopback socket, one on no known
    /// interface, or a message too short to be one.
    package static func sample(_ message: NetlinkMessage, owners: [IPAddress: Int32]) -> TCPSocketSample? {
        guard Int32(message.type) == SOCK_DIAG_BY_FAMILY, let header = message.fixedHeader(inet_diag_msg.self) else { return nil }
        guard let source = address(header.id.idiag_src, family: Int32(header.idiag_family)), !source.isLoopbackAddress,
              let destination = address(header.id.idiag_dst, family: Int32(header.idiag_family)) else { return nil }
        let index = header.id.idiag_if != 0 ? Int32(bitPattern: header.id.idiag_if) : owners[source]
        guard let index else { return nil }
        var info = reachd_tcp_info()
        if let attribute = message.attribute(Int32(INET_DIAG_INFO), after: inet_diag_msg.self), let data = nla_data(attribute) {
            // An older kernel's tcp_info is shorter: the fields it lacks stay zero.
            let count = min(Int(nla_len(attribute)), MemoryLayout<reachd_tcp_info>.size)
            withUnsafeMutableBytes(of: &info) { $0.copyMemory(from: UnsafeRawBufferPointer(start: data, count: count)) }
        }
        let cookie = UInt64(header.id.idiag_cookie.0) | UInt64(header.id.idiag_cookie.1) << 32
        return TCPSocketSample(
            cookie: cookie, interfaceIndex: index, state: Int32(header.idiag_state) == TCP_SYN_SENT ? .synSent : .other,
            destination: destination, uid: header.idiag_uid,
            segmentsSent: info.tcpi_segs_out, segmentsReceived: info.tcpi_segs_in, retransmitted: info.head.tcpi_total_retrans,
            lost: info.head.tcpi_lost, unacknowledged: info.head.tcpi_unacked,
            timing: TCPTiming(
                // ~0U: no RTT sample yet.
                rtt: info.head.tcpi_rtt, minimumRTT: info.tcpi_min_rtt == .max ? 0 : info.tcpi_min_rtt, receiveRTT: info.head.tcpi_rcv_rtt,
                deliveryRate: info.tcpi_delivery_rate, appLimited: reachd_tcp_info_app_limited(&info) != 0,
                bytesAcknowledged: info.tcpi_bytes_acked, bytesReceived: info.tcpi_bytes_received
            )
        )
    }

    /// The address in an `idiag_src` or `idiag_dst`; an IPv4-mapped IPv6 address as the IPv4 address it is.
    static func address(_ words: (UInt32, UInt32, UInt32, UInt32), family: Int32) -> IPAddress? {
        let bytes = withUnsafeBytes(of: words) { Array($0) }
        switch family {
        case AF_INET: return IPAddress(bytes: Array(bytes[0..<4]))
        case AF_INET6 where bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF:
            return IPAddress(bytes: Array(bytes[12..<16]))
        case AF_INET6: return IPAddress(bytes: bytes)
        default: return nil
        }
    }
}

extension IPAddress {
    /// 127.0.0.0/8 or ::1: traffic that never leaves the host.
    fileprivate var isLoopbackAddress: Bool {
        switch self {
        case let .v4(a, _, _, _): return a == 127
        case let .v6(bytes): return bytes.dropLast().allSatisfy { $0 == 0 } && bytes.last == 1
        }
    }
}
