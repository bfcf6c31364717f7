import ReachDaemon
import NIOCore
import NIOHTTP1
import NetlinkMonitor
import ReachabilityCore
import ReachConnectivity

/// What `fuzz-network` (`scripts/fuzz network`) runs on one input, what a network hands
/// reachd, and what the regression tests run on every kept input: the same code, so a fixed
/// crash stays fixed. Package access only; invariants a fuzzer cannot see from outside are
/// `precondition`s.
package enum NetworkFuzzEntryPoint {
    /// What a network hands reachd, each along the path it takes in the daemon; the first
    /// byte (modulo 5) picks the decoder, the rest is its input:
    ///
    /// - 0: an RFC 8908 answer (`CaptivePortalAPI.parse`, as `application/captive+json`);
    /// - 1: an `RTM_NEWNDUSEROPT` payload (`NDUserOption.captivePortal(inPayload:)` and
    ///   `NDUserOption.pref64(inPayload:)`), and the same bytes as the addresses of a DNS64
    ///   answer for ipv4only.arpa, 16 each (`DNS64Discovery.prefixes(in:)`);
    /// - 2: a probe server's bytes, through the probe's own handlers (NIO's request encoder
    ///   and response decoder, `ResponseReader`) on an `EmbeddedChannel`, in reads of 1 to
    ///   256 bytes (the second byte), then judged by `ProbeVerdict`;
    /// - 3: text for `WebURI.validate`, as `http(s)` and as `https` only;
    /// - 4: a DHCP client's lease text, whose option 43 the network's server filled: as
    ///   systemd-networkd's lease file and as ISC dhclient's (`DHCPLeases`).
    ///
    /// Whatever the bytes, what comes out must satisfy the rules the daemon relies on: every
    /// URI kept passes `WebURI`, every number is within its documented maximum, every
    /// exchange ends in exactly one outcome.
    package static func input(_ bytes: some Collection<UInt8>) {
        guard let first = bytes.first else { return }
        let input = Array(bytes.dropFirst())
        switch first % 5 {
        case 0: captivePortalAnswer(input)
        case 1: routerAdvertisementOption(input)
        case 2: probeResponse(input)
        case 3: uri(input)
        default: dhcpLease(input)
        }
    }

    private static func dhcpLease(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        for lease in [DHCPLeases.networkdLease(text[...]), DHCPLeases.dhclientLease(text[...], interface: "eth0")] {
            precondition((lease?.vendorSpecific?.count ?? 0) <= DHCPLeases.optionLimit, "option 43 within its bound")
            if let lease, lease.isMetered(holding: lease.address.map { [$0] } ?? []) {
                precondition(DHCPLeases.isAndroidMetered(vendorSpecific: lease.vendorSpecific ?? []), "metered only with the marker")
            }
        }
    }

    private static func isWebURI(_ text: String?, schemes: Set<WebURI.Scheme>) -> Bool {
        guard let text else { return true }
        guard case let .success(uri) = WebURI.validate(text, schemes: schemes) else { return false }
        return uri.text == text
    }

    private static func captivePortalAnswer(_ body: [UInt8]) {
        guard case let .success(portal) = CaptivePortalAPI.parse(body: body, contentType: CaptivePortalAPI.mediaType) else { return }
        precondition(isWebURI(portal.userPortalURL, schemes: [.https]) && isWebURI(portal.venueInfoURL, schemes: [.https]),
                     "an answer's URLs pass WebURI as https")
        precondition(portal.secondsRemaining.map { (0...CaptivePortalAPI.maximumSecondsRemaining).contains($0) } ?? true, "seconds within 0…max")
        precondition(portal.bytesRemaining.map { (0...CaptivePortalAPI.maximumBytesRemaining).contains($0) } ?? true, "bytes within 0…max")
        precondition(portal.captive != true || portal.userPortalURL != nil, "a captive answer names its portal")
    }

    private static func routerAdvertisementOption(_ payload: [UInt8]) {
        dns64Answer(payload)
        if let prefix = NDUserOption.pref64(inPayload: payload) {
            precondition(NAT64Prefix.lengths.contains(prefix.prefix.length) && prefix.lifetime <= .seconds(65528), "a prefix length RFC 6052 defines, a 13-bit lifetime")
            precondition(prefix.prefix.synthesize(.v4(192, 0, 2, 1)).flatMap(prefix.prefix.extract) == .v4(192, 0, 2, 1), "synthesis inverts")
        }
        guard let portal = NDUserOption.captivePortal(inPayload: payload) else { return }
        precondition(isWebURI(portal.apiURI, schemes: [.https]), "an announced API URI passes WebURI as https")
    }

    private static func dns64Answer(_ bytes: [UInt8]) {
        let answers = stride(from: 0, to: bytes.count - bytes.count % 16, by: 16).compactMap { IPAddress(bytes: Array(bytes[$0..<($0 + 16)])) }
        let considered = answers.prefix(DNS64Discovery.maximumAnswers)
        let prefixes = DNS64Discovery.prefixes(in: answers)
        precondition(prefixes.count <= considered.count && Set(prefixes).count == prefixes.count, "at most one prefix per answer read, no duplicates")
        for prefix in prefixes {
            precondition(prefix.source == .dns64 && NAT64Prefix.lengths.contains(prefix.length), "a DNS64 prefix of an RFC 6052 length")
            precondition(considered.contains { prefix.extract($0).map(DNS64Discovery.wellKnownAddresses.contains) == true }, "an answer read embeds a well-known address under it")
        }
    }

    private static func probeResponse(_ input: [UInt8]) {
        guard let first = input.first else { return }
        let stream = input.dropFirst(), chunk = Int(first) + 1
        let exchanged: (request: String?, result: HTTPFetcher.Result?)
        do {
            exchanged = try ResponseReader.embeddedExchange(Array(stream), chunk: chunk)
        } catch {
            preconditionFailure("setting up the probe's handlers failed: \(error)")
        }
        guard let result = exchanged.result else { preconditionFailure("an exchange that ended has an outcome") }
        precondition(result.body.count <= HTTPFetcher.bodyLimit, "the body is read up to its limit")
        guard case let .response(response) = result.outcome else { return }
        precondition(response.headers.count <= ResponseReader.maximumHeaders, "at most the maximum headers kept")
        precondition(response.headers.values.allSatisfy { $0.utf8.count <= ResponseReader.maximumHeaderValueLength }, "header values bounded")
        precondition((response.location?.utf8.count ?? 0) <= WebURI.maximumLength, "the Location kept is bounded")
        let judgement = ProbeVerdict.judge(http: result.outcome, https: nil, expect: ProbeExpectation())
        precondition(isWebURI(judgement.portalURL, schemes: [.http, .https]), "a portal's login page passes WebURI")
    }

    private static func uri(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        for schemes: Set<WebURI.Scheme> in [[.http, .https], [.https]] {
            guard case let .success(uri) = WebURI.validate(text, schemes: schemes) else { continue }
            precondition(schemes.contains(uri.scheme) && !uri.host.isEmpty && (1...65535).contains(uri.port), "scheme, host and port checked")
            precondition(text.utf8.count <= WebURI.maximumLength, "length bounded")
            precondition(text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "visible ASCII only")
            precondition(uri.target.hasPrefix("/") && !uri.target.contains("#"), "a request target")
            precondition(WebURI.validate(uri.text, schemes: schemes) == .success(uri), "a checked URI checks the same again")
        }
    }
}
