import Glibc

/// The address in an IPv4 or IPv6 socket address, in network byte order: the 4 bytes of a
/// `sockaddr_in`'s `sin_addr` or the 16 of a `sockaddr_in6`'s `sin6_addr`; nil for any
/// other family. (Here, away from NIO: a module that imports NIO sees these structs as
/// NIO's C shim's, and must not import that shim to read them.)
public func internetAddressBytes(of socketAddress: UnsafePointer<sockaddr>) -> [UInt8]? {
    switch Int32(socketAddress.pointee.sa_family) {
    case AF_INET:
        return socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
            withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
        }
    case AF_INET6:
        return socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
            withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
        }
    default:
        return nil
    }
}
