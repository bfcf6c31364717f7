import ReachabilityCore

/// RFC 8910's captive-portal option in a Router Advertisement, as the kernel hands RA
/// options it does not process itself to userspace: `RTM_NEWNDUSEROPT` on
/// `RTNLGRP_ND_USEROPT`, a `struct nduseroptmsg` followed by the raw ND options. Pure
/// parsing of the message payload (after the netlink header); nothing is sent to learn it.
public enum NDUserOption {
    /// ND option type of the captive-portal URI (RFC 8910 section 2.3).
    static let captivePortalType: UInt8 = 37
    /// ICMPv6 type of a Router Advertisement.
    static let routerAdvertisement: UInt8 = 134
    /// `sizeof(struct nduseroptmsg)`.
    static let headerSize = 16
    /// The URN meaning "this network has no captive portal" (RFC 8910 section 2).
    public static let unrestricted = "urn:ietf:params:capport:unrestricted"

    /// What an RA said about a captive portal.
    public struct CaptivePortal: Sendable, Hashable {
        /// The interface the RA arrived on.
        public var interfaceIndex: Int32
        /// The API URI (RFC 8908), or nil when the network says it has none (`unrestricted`).
        public var apiURI: String?
    }

    /// The captive-portal option of one `RTM_NEWNDUSEROPT` payload, if it carries one.
    /// Malformed payloads (short, lengths past the end, zero-length options) give nil, as
    /// the kernel's own option walk would stop; so does a URI that is neither the
    /// `unrestricted` URN nor an `https` URI `WebURI` accepts (an API that cannot be fetched
    /// announces no portal, and its text is never published).
    public static func captivePortal(inPayload payload: [UInt8]) -> CaptivePortal? {
        guard payload.count >= headerSize, payload[0] == UInt8(10) /* AF_INET6 */ else { return nil }
        // The struct's fields are in host byte order.
        let (optionsLength, interfaceIndex) = payload.withUnsafeBytes { bytes in
            (Int(bytes.loadUnaligned(fromByteOffset: 2, as: UInt16.self)), bytes.loadUnaligned(fromByteOffset: 4, as: Int32.self))
        }
        guard payload[8] == routerAdvertisement, headerSize + optionsLength <= payload.count else { return nil }
        var offset = headerSize
        let end = headerSize + optionsLength
        while offset + 2 <= end {
            let type = payload[offset]
            let length = Int(payload[offset + 1]) * 8
            guard length > 0, offset + length <= end else { return nil }
            if type == captivePortalType {
                let value = payload[(offset + 2)..<(offset + length)]
                let text = value.prefix { $0 != 0 }  // padded with NUL to 8 octets
                guard !text.isEmpty, text.count <= WebURI.maximumLength, text.allSatisfy({ (0x21...0x7e).contains($0) }) else { return nil }
                let uri = String(decoding: text, as: UTF8.self)
                if uri == unrestricted { return CaptivePortal(interfaceIndex: interfaceIndex, apiURI: nil) }
                guard case let .success(api) = WebURI.validate(uri, schemes: [.https]) else { return nil }
                return CaptivePortal(interfaceIndex: interfaceIndex, apiURI: api.text)
            }
            offset += length
        }
        return nil
    }
}
