import Glibc
import SystemPackage

extension FileDescriptor {
    /// Sets the socket's kernel receive buffer with `SO_RCVBUFFORCE`, which may exceed
    /// `net.core.rmem_max` but needs CAP_NET_ADMIN (EPERM without it).
    public func forceReceiveBufferSize(_ bytes: Int) throws(Errno) {
        var value = Int32(clamping: bytes)
        _ = try systemCall { setsockopt(rawValue, SOL_SOCKET, SO_RCVBUFFORCE, &value, socklen_t(MemoryLayout<Int32>.size)) }
    }
}

/// `struct ucred`, what `SO_PEERCRED` reports about the process at the other end of a
/// Unix socket. Spelled out here because Glibc's module hides `ucred` behind _GNU_SOURCE;
/// the layout is the kernel's (pid, uid, gid: three 32-bit fields).
public struct PeerCredentials: Sendable, Equatable {
    /// The peer's process id when it connected.
    public var pid: Int32
    /// The peer's effective user id.
    public var uid: UInt32
    /// The peer's effective group id.
    public var gid: UInt32

    /// The `SO_PEERCRED` option number.
    public static let socketOption = SO_PEERCRED
}
