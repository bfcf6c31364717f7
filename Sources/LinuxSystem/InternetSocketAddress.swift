import Glibc

/// The address in an IPv4 or IPv6 socket address, in network byte order: the 4 bytes of a
/// `sockaddr_in`'s `sin_addr` or the 16 of a `sockaddr_in6`'s `sin6_addr`; nil for any
/// other family. (Here, away from NIO: a module that imports NIO sees these structs as
/// NIO's C shim's, and must not import that shim to read them.)
package func internetAddressBytes(of socketAddress: UnsafePointer<sockaddr>) -> [UInt8]? {
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

/// The scope of an IPv6 socket address (`sin6_scope_id`: the interface index of a link-local
/// address, 0 when unscoped); nil for any other family.
package func internetAddressScope(of socketAddress: UnsafePointer<sockaddr>) -> UInt32? {
    guard Int32(socketAddress.pointee.sa_family) == AF_INET6 else { return nil }
    return socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_scope_id }
}

/// The name of the interface with index `index` (`if_indextoname`); nil when there is none.
package func interfaceName(ofIndex index: UInt32) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(IF_NAMESIZE))
    guard if_indextoname(index, &buffer) != nil else { return nil }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
