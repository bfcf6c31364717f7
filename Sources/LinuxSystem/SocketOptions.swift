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
