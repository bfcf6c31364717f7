import Glibc
import SystemPackage

/// Whether a TCP listener could be bound at an address and port now: binds a socket there
/// (with `SO_REUSEADDR`, as the real listener is) and closes it at once, never listening.
/// Throws the `Errno` of the failed `bind(2)`: EADDRINUSE, EADDRNOTAVAIL (no interface has
/// the address), EACCES (a port below 1024 without CAP_NET_BIND_SERVICE).
///
/// - Parameter address: 4 or 16 network-order bytes (IPv4, IPv6).
package func checkTCPBind(address: [UInt8], port: UInt16) throws(Errno) {
    let family = address.count == 4 ? AF_INET : AF_INET6
    let descriptor = FileDescriptor(rawValue: try systemCall { socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) })
    defer { try? descriptor.close() }
    var one: Int32 = 1
    _ = try systemCall { setsockopt(descriptor.rawValue, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size)) }
    if family == AF_INET {
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = port.bigEndian
        withUnsafeMutableBytes(of: &socketAddress.sin_addr) { $0.copyBytes(from: address) }
        try bind(descriptor, to: socketAddress)
    } else {
        var socketAddress = sockaddr_in6()
        socketAddress.sin6_family = sa_family_t(AF_INET6)
        socketAddress.sin6_port = port.bigEndian
        withUnsafeMutableBytes(of: &socketAddress.sin6_addr) { $0.copyBytes(from: address) }
        try bind(descriptor, to: socketAddress)
    }
}

/// `bind(2)` to a `sockaddr_in` or `sockaddr_in6`.
private func bind<Address>(_ descriptor: FileDescriptor, to address: Address) throws(Errno) {
    _ = try withUnsafeBytes(of: address) { bytes throws(Errno) in
        try systemCall {
            bind(descriptor.rawValue, bytes.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(MemoryLayout<Address>.size))
        }
    }
}

extension FileSystem {
    /// `path` with every symbolic link, `.` and `..` resolved (`realpath(3)`); it must exist.
    package static func canonicalPath(_ path: String) throws(Errno) -> String {
        guard let resolved = realpath(path, nil) else { throw Errno(rawValue: errno) }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
