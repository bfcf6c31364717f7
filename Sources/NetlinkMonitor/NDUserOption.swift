import ReachabilityCore

/// RFC 8910's captive-portal option and RFC 8781's PREF64 option in a Router
/// Advertisement, as the kernel hands RA options it does not process itself to userspace:
/// `RTM_NEWNDUSEROPT` on `RTNLGRP_ND_USEROPT`, a `struct nduseroptmsg` followed by the raw
/// ND options. Pure parsing of the message payload (after the netlink header); nothing is
/// sent to learn it.
package enum NDUserOption {
    /// ND option type of the captive-portal URI (RFC 8910 section 2.3).
    static let captivePortalType: UInt8 = 37
    /// ND option type of PREF64, the network's NAT64 prefix (RFC 8781 section 4).
    static let pref64Type: UInt8 = 38
    /// ICMPv6 type of a Router Advertisement.
    static let routerAdvertisement: UInt8 = 134
    /// `sizeof(struct nduseroptmsg)`.
    static let headerSize = 16
    /// The URN meaning "this network has no captive portal" (RFC 8910 section 2).
    package static let unrestricted = "urn:ietf:params:capport:unrestricted"

    /// What an RA said about a captive portal.
    package struct CaptivePortal: Sendable, Hashable {
        /// The interface the RA arrived on.
        package var interfaceIndex: Int32
        /// The API URI (RFC 8908), or nil when the network says it has none (`unrestricted`).
        package var apiURI: String?
    }

    /// What an RA said about its network's NAT64 prefix (RFC 8781).
    package struct PREF64: Sendable, Hashable {
        /// The interface the RA arrived on.
        package var interfaceIndex: Int32
        /// The prefix (source `routerAdvertisement`), bits past its length cleared.
        package var prefix: NAT64Prefix
        /// How long it may be used; zero says stop using it now.
        package var lifetime: Duration
    }

    /// The captive-portal option of one `RTM_NEWNDUSEROPT` payload, if it carries one.
    /// Malformed payloads (short, lengths past the end, zero-length options) give nil, as
    /// the kernel's own option walk would stop; so does a URI that is neither the
    /// `unrestricted` URN nor an `https` URI `WebURI` accepts (an API that cannot be fetched
    /// announces no portal, and its text is never published).
    package static func captivePortal(inPayload payload: [UInt8]) -> CaptivePortal? {
        guard let (interfaceIndex, value) = option(captivePortalType, inPayload: payload) else { return nil }
        let text = value.prefix { $0 != 0 }  // padded with NUL to 8 octets
        guard !text.isEmpty, text.count <= WebURI.maximumLength, text.allSatisfy({ (0x21...0x7e).contains($0) }) else { return nil }
        let uri = String(decoding: text, as: UTF8.self)
        if uri == unrestricted { return CaptivePortal(interfaceIndex: interfaceIndex, apiURI: nil) }
        guard case let .success(api) = WebURI.validate(uri, schemes: [.https]) else { return nil }
        return CaptivePortal(interfaceIndex: interfaceIndex, apiURI: api.text)
    }

    /// The PREF64 option of one `RTM_NEWNDUSEROPT` payload, if it carries a valid one:
    /// exactly 16 octets (RFC 8781 section 4: any other length is ignored), a prefix length
    /// code of 0–5 (96, 64, 56, 48, 40, 32 bits; 6 and 7 are ignored), a 13-bit lifetime in
    /// units of 8 seconds, then the prefix's first 96 bits.
    package static func pref64(inPayload payload: [UInt8]) -> PREF64? {
        guard let (interfaceIndex, value) = option(pref64Type, inPayload: payload), value.count == 14 else { return nil }
        let field = UInt16(value[value.startIndex]) << 8 | UInt16(value[value.startIndex + 1])
        let lengths = [96, 64, 56, 48, 40, 32]
        let code = Int(field & 0x7)
        guard code < lengths.count,
              let prefix = NAT64Prefix(address: .v6(Array(value.dropFirst(2)) + [0, 0, 0, 0]), length: lengths[code], source: .routerAdvertisement)
        else { return nil }
        return PREF64(interfaceIndex: interfaceIndex, prefix: prefix, lifetime: .seconds(Int(field >> 3) * 8))
    }

    /// The value (after type and length) of the first option of `type` in an RA's
    /// `RTM_NEWNDUSEROPT` payload, with the interface it came on. Nil for anything but an
    /// IPv6 RA, and for a malformed walk (short, lengths past the end, zero-length options),
    /// as the kernel's own option walk would stop.
    private static func option(_ type: UInt8, inPayload payload: [UInt8]) -> (Int32, ArraySlice<UInt8>)? {
        guard payload.count >= headerSize, payload[0] == UInt8(10) /* AF_INET6 */ else { return nil }
        // The struct's fields are in host byte order.
        let (optionsLength, interfaceIndex) = payload.withUnsafeBytes { bytes in
            (Int(bytes.loadUnaligned(fromByteOffset: 2, as: UInt16.self)), bytes.loadUnaligned(fromByteOffset: 4, as: Int32.self))
        }
        guard payload[8] == routerAdvertisement, headerSize + optionsLength <= payload.count else { return nil }
        var offset = headerSize
        let end = headerSize + optionsLength
        while offset + 2 <= end {
            let length = Int(payload[offset + 1]) * 8
            guard length > 0, offset + length <= end else { return nil }
            if payload[offset] == type { return (interfaceIndex, payload[(offset + 2)..<(offset + length)]) }
            offset += length
        }
        return nil
    }
}
