import CNetlink
import ReachabilityCore

/// One netlink message where it lies: in a socket's receive buffer, or in a test's bytes.
///
/// A view, not a copy: it is valid only while that buffer is, which for received
/// messages means inside the closure `NetlinkSocket.receive` calls. libnl's parsers
/// (`rtnl_route_parse`, `nlmsg_convert`) read it in place or copy it themselves.
package struct NetlinkMessage {
    /// The message, `nlmsg_len` bytes from here. Mutable only because libnl's parsers
    /// take a non-const `struct nlmsghdr *`; nothing writes to it.
    let header: UnsafeMutablePointer<nlmsghdr>

    /// Wraps a message in a buffer the caller owns.
    package init(header: UnsafeMutablePointer<nlmsghdr>) {
        self.header = header
    }

    /// `nlmsg_type`.
    var type: UInt16 { header.pointee.nlmsg_type }
    /// `nlmsg_flags`.
    var flags: UInt16 { header.pointee.nlmsg_flags }
    /// `nlmsg_seq`.
    var sequence: UInt32 { header.pointee.nlmsg_seq }

    /// The fixed header after `nlmsghdr` (`rtmsg`, `ifinfomsg`, `ifaddrmsg`, `nlmsgerr`)
    /// as the kernel struct, or nil if the message is too short to hold one.
    func fixedHeader<Header: BitwiseCopyable>(_: Header.Type) -> Header? {
        guard nlmsg_valid_hdr(header, Int32(MemoryLayout<Header>.size)) != 0 else { return nil }
        return UnsafeRawPointer(nlmsg_data(header)).loadUnaligned(as: Header.self)
    }

    /// The first attribute of `type` after the fixed header `Header` (libnl's
    /// `nlmsg_find_attr`, bounds-checked), or nil.
    func attribute<Header>(_ type: Int32, after _: Header.Type) -> UnsafeMutablePointer<nlattr>? {
        nlmsg_find_attr(header, Int32(MemoryLayout<Header>.size), type)
    }

    /// Why libnl 3.7's `rtnl_route_parse` cannot be given this route message, or nil when it
    /// can. Each hazard was found by `scripts/fuzz netlink`; the kernel builds none of them,
    /// so such a message is treated like one libnl refused.
    ///
    /// - RTA_MULTIPATH: `parse_multipath` walks the `rtnexthop`s while `tlen >= rtnh_len`,
    ///   subtracting `RTNH_ALIGN(rtnh_len)` from a `size_t`. A next hop whose `rtnh_len` is
    ///   0 never moves the walk on, and it allocates a next hop per turn until memory runs
    ///   out; one whose aligned length exceeds what is left wraps `tlen` around and sends the
    ///   walk past the attribute.
    /// - RTA_VIA, at the top or in a next hop: the address length is taken as the payload
    ///   length minus the 2-byte family, so a shorter payload hands `memcpy` a negative size.
    ///
    /// Every attribute is checked, not only the first of a type: libnl's `nla_parse` keeps
    /// the last of repeated attributes.
    var routeParseHazard: String? {
        let headerSize = Int32(MemoryLayout<rtmsg>.size)
        guard nlmsg_valid_hdr(header, headerSize) != 0 else { return nil }
        return Self.hazard(in: nlmsg_attrdata(header, headerSize), length: nlmsg_attrlen(header, headerSize), nested: false)
    }

    /// The first hazard among the attributes at `start` (`length` bytes): the top level of
    /// a route message, or one next hop's attributes (`nested`).
    private static func hazard(in start: UnsafeMutablePointer<nlattr>?, length: Int32, nested: Bool) -> String? {
        var remaining = length, attribute = start
        while let current = attribute, nla_ok(current, remaining) != 0 {
            switch nla_type(current) {
            case Int32(RTA_VIA.rawValue) where nla_len(current) < Int32(MemoryLayout<UInt16>.size):
                return "RTA_VIA shorter than its address family"
            case Int32(RTA_MULTIPATH.rawValue) where !nested:
                if let hazard = multipathHazard(current) { return hazard }
            default:
                break
            }
            attribute = nla_next(current, &remaining)
        }
        return nil
    }

    /// Walks one RTA_MULTIPATH's `rtnexthop`s as libnl's `parse_multipath` does, and the
    /// attributes of each next hop it would parse.
    private static func multipathHazard(_ attribute: UnsafeMutablePointer<nlattr>) -> String? {
        guard let data = nla_data(attribute) else { return nil }
        let hopSize = MemoryLayout<rtnexthop>.size
        var remaining = Int(nla_len(attribute)), offset = 0
        while remaining >= hopSize {
            let length = Int(data.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            guard remaining >= length else { return nil }  // where libnl stops
            let aligned = (length + 3) & ~3
            if length == 0 || aligned > remaining { return "malformed RTA_MULTIPATH" }
            if length > hopSize {
                let attributes = (data + offset + hopSize).assumingMemoryBound(to: nlattr.self)
                if let hazard = hazard(in: attributes, length: Int32(length - hopSize), nested: true) { return hazard }
            }
            remaining -= aligned
            offset += aligned
        }
        return nil
    }
}

extension IPAddress {
    /// The address in a libnl `nl_addr` (an IPv4 or IPv6 address: 4 or 16 bytes), or nil.
    init?(libnl address: OpaquePointer?) {
        guard let address, let bytes = nl_addr_get_binary_addr(address) else { return nil }
        let count = Int(nl_addr_get_len(address))
        self.init(bytes: Array(UnsafeRawBufferPointer(start: bytes, count: count)))
    }
}
