import CLinux
import Glibc
import SystemPackage

extension FileDescriptor {
    /// Makes the socket's blocking reads and writes give up after `timeout` (EAGAIN):
    /// `SO_RCVTIMEO` and `SO_SNDTIMEO`.
    package func setTimeouts(_ timeout: Duration) throws(Errno) {
        let (seconds, attoseconds) = timeout.components
        var limit = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            _ = try systemCall { setsockopt(rawValue, SOL_SOCKET, option, &limit, socklen_t(MemoryLayout<timeval>.size)) }
        }
    }

    /// Sets the socket's kernel receive buffer with `SO_RCVBUFFORCE`, which may exceed
    /// `net.core.rmem_max` but needs CAP_NET_ADMIN (EPERM without it).
    package func forceReceiveBufferSize(_ bytes: Int) throws(Errno) {
        var value = Int32(clamping: bytes)
        _ = try systemCall { setsockopt(rawValue, SOL_SOCKET, SO_RCVBUFFORCE, &value, socklen_t(MemoryLayout<Int32>.size)) }
    }
}

/// `struct ucred`, what `SO_PEERCRED` reports about the process at the other end of a
/// Unix socket. Spelled out here because Glibc's module hides `ucred` behind _GNU_SOURCE;
/// the layout is the kernel's (pid, uid, gid: three 32-bit fields).
package struct PeerCredentials: Sendable, Equatable {
    /// The peer's process id when it connected.
    package var pid: Int32
    /// The peer's effective user id.
    package var uid: UInt32
    /// The peer's effective group id.
    package var gid: UInt32

    /// The `SO_PEERCRED` option number.
    package static let socketOption = SO_PEERCRED
}

/// One classic BPF instruction (`struct sock_filter`): what `attachSocketFilter` installs.
/// Spelled out in Swift so that programs can be built and checked without the C struct.
package struct SocketFilterInstruction: Sendable, Hashable {
    /// `BPF_CLASS | size | mode` or `BPF_CLASS | op | source`, as in <linux/bpf_common.h>.
    package var code: UInt16
    /// Instructions to skip when a conditional jump holds.
    package var jumpIfTrue: UInt8
    /// Instructions to skip when it does not.
    package var jumpIfFalse: UInt8
    /// The constant operand.
    package var constant: UInt32

    /// Creates an instruction.
    package init(code: UInt16, jumpIfTrue: UInt8 = 0, jumpIfFalse: UInt8 = 0, constant: UInt32 = 0) {
        self.code = code
        self.jumpIfTrue = jumpIfTrue
        self.jumpIfFalse = jumpIfFalse
        self.constant = constant
    }
}

extension FileDescriptor {
    /// Installs a classic BPF program as the socket's filter (`SO_ATTACH_FILTER`),
    /// replacing any earlier one; the kernel runs it on every datagram before queueing it,
    /// and a datagram it rejects never reaches the receive buffer. EINVAL: the kernel's
    /// checker refused the program.
    package func attachSocketFilter(_ program: [SocketFilterInstruction]) throws(Errno) {
        var filters = program.map { sock_filter(code: $0.code, jt: $0.jumpIfTrue, jf: $0.jumpIfFalse, k: $0.constant) }
        _ = try filters.withUnsafeMutableBufferPointer { (buffer) throws(Errno) -> Int32 in
            var fprog = sock_fprog(len: UInt16(clamping: buffer.count), filter: buffer.baseAddress)
            return try systemCall { setsockopt(rawValue, SOL_SOCKET, SO_ATTACH_FILTER, &fprog, socklen_t(MemoryLayout<sock_fprog>.size)) }
        }
    }
}
