import FoundationEssentials
import ReachabilityCore

/// RFC 8908, the Captive Portal API: what a network's API URI (RFC 8910: DHCP option
/// 114/103, RA option 37) may be, and what its JSON answer says. Pure, table-tested; the
/// fetch itself (HTTPS, under the trust policy) is the prober's.
///
/// Rules, from the RFC and Android's NetworkStack: the API URI must be `https`; the answer
/// must be `application/captive+json` and at most 4,096 bytes; `captive` is required; a
/// captive answer without a `user-portal-url` is refused (nowhere to send the user); URLs
/// in the answer must be `https` too. A captive answer from the API is authoritative.
public enum CaptivePortalAPI {
    /// The largest answer read.
    public static let maximumBodySize = 4096
    /// The media type the answer must have.
    public static let mediaType = "application/captive+json"

    /// Why an API URI or answer is not used.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// A URI (the API's, or one in the answer) that is not `https`.
        case notHTTPS(String)
        /// The answer's Content-Type is not `application/captive+json`.
        case wrongMediaType(String?)
        /// The answer is larger than `maximumBodySize`.
        case tooLarge(Int)
        /// Not the JSON of RFC 8908 (`captive` missing, wrong types).
        case malformed(String)
        /// `captive: true` without a `user-portal-url`.
        case captiveWithoutPortal

        /// One line for the log.
        public var description: String {
            switch self {
            case let .notHTTPS(uri): return "not an https URI: \(uri)"
            case let .wrongMediaType(type): return "media type \(type ?? "(none)"), not \(CaptivePortalAPI.mediaType)"
            case let .tooLarge(size): return "answer of \(size) bytes, more than \(CaptivePortalAPI.maximumBodySize)"
            case let .malformed(reason): return "malformed answer: \(reason)"
            case .captiveWithoutPortal: return "captive, but no user-portal-url"
            }
        }
    }

    /// The API URI if it may be fetched: `https` with a host.
    public static func validate(apiURI: String) -> Result<String, Problem> {
        isHTTPS(apiURI) ? .success(apiURI) : .failure(.notHTTPS(apiURI))
    }

    /// What an answer says, or why it is not used.
    public static func parse(body: [UInt8], contentType: String?) -> Result<CaptivePortal, Problem> {
        let type = contentType?.split(separator: ";").first.map { $0.trimmingOptionalWhitespace.lowercased() }
        guard type == mediaType else { return .failure(.wrongMediaType(contentType)) }
        guard body.count <= maximumBodySize else { return .failure(.tooLarge(body.count)) }
        let answer: Answer
        do {
            answer = try JSONDecoder().decode(Answer.self, from: Data(body))
        } catch {
            return .failure(.malformed("\(error)".prefix(120).description))
        }
        for url in [answer.userPortalURL, answer.venueInfoURL].compactMap({ $0 }) where !isHTTPS(url) {
            return .failure(.notHTTPS(url))
        }
        if answer.captive && answer.userPortalURL == nil { return .failure(.captiveWithoutPortal) }
        return .success(CaptivePortal(
            captive: answer.captive, userPortalURL: answer.userPortalURL, venueInfoURL: answer.venueInfoURL,
            canExtendSession: answer.canExtendSession,
            secondsRemaining: answer.secondsRemaining.map { max(0, Int($0)) },
            bytesRemaining: answer.bytesRemaining.map { max(0, Int($0)) }
        ))
    }

    private static func isHTTPS(_ uri: String) -> Bool {
        let lower = uri.lowercased()
        guard lower.hasPrefix("https://") else { return false }
        let host = lower.dropFirst("https://".count).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return !host.isEmpty && !host.contains(" ")
    }

    /// The JSON of RFC 8908 section 5.
    private struct Answer: Decodable {
        var captive: Bool
        var userPortalURL: String?
        var venueInfoURL: String?
        var canExtendSession: Bool?
        var secondsRemaining: Double?
        var bytesRemaining: Double?

        enum CodingKeys: String, CodingKey {
            case captive
            case userPortalURL = "user-portal-url"
            case venueInfoURL = "venue-info-url"
            case canExtendSession = "can-extend-session"
            case secondsRemaining = "seconds-remaining"
            case bytesRemaining = "bytes-remaining"
        }
    }
}
