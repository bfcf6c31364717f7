import FoundationEssentials
import ReachabilityCore

/// RFC 8908, the Captive Portal API: what a network's API URI (RFC 8910: DHCP option
/// 114/103, RA option 37) may be, and what its JSON answer says. Pure, table-tested; the
/// fetch itself (HTTPS, under the trust policy) is the prober's.
///
/// Rules, from the RFC and Android's NetworkStack: the API URI must be `https`; the answer
/// must be `application/captive+json` and at most 4,096 bytes; `captive` is required; a
/// captive answer without a `user-portal-url` is refused (nowhere to send the user); URLs
/// in the answer must be `https` too. Every URI passes `WebURI` (port, characters, length)
/// or the whole answer is refused. `seconds-remaining` and `bytes-remaining` are clamped
/// to 0…`maximumSecondsRemaining` / `maximumBytesRemaining` while still a `Double` (a
/// non-number is dropped), so no answer can make a conversion or a timer overflow. A
/// captive answer from the API is authoritative.
package enum CaptivePortalAPI {
    /// The largest answer read.
    package static let maximumBodySize = 4096
    /// The most `seconds-remaining` taken from an answer: one year. A larger value means
    /// the same to reachd (look again before it runs out), and this one keeps every timer
    /// built from it (nanoseconds in an `Int64`) far from overflowing.
    package static let maximumSecondsRemaining = 31_536_000
    /// The most `bytes-remaining` taken from an answer: 2^53, the largest integer a JSON
    /// number (an IEEE double) carries exactly.
    package static let maximumBytesRemaining = 1 << 53
    /// The media type the answer must have.
    package static let mediaType = "application/captive+json"

    /// Why an API URI or answer is not used.
    package enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// A URI (the API's, or one in the answer) that `WebURI` refuses as an `https`
        /// URI; the text names which URI (`API URI`, `user-portal-url`, `venue-info-url`).
        case unusableURI(String, WebURI.Problem)
        /// The answer's Content-Type is not `application/captive+json`.
        case wrongMediaType(String?)
        /// The answer is larger than `maximumBodySize`.
        case tooLarge(Int)
        /// Not the JSON of RFC 8908 (`captive` missing, wrong types).
        case malformed(String)
        /// `captive: true` without a `user-portal-url`.
        case captiveWithoutPortal

        /// One line for the log.
        package var description: String {
            switch self {
            case let .unusableURI(which, problem): return "\(which) refused: \(problem)"
            case let .wrongMediaType(type): return "media type \(type ?? "(none)"), not \(CaptivePortalAPI.mediaType)"
            case let .tooLarge(size): return "answer of \(size) bytes, more than \(CaptivePortalAPI.maximumBodySize)"
            case let .malformed(reason): return "malformed answer: \(reason)"
            case .captiveWithoutPortal: return "captive, but no user-portal-url"
            }
        }
    }

    /// The API URI if it may be fetched: an `https` URI that `WebURI` accepts.
    package static func validate(apiURI: String) -> Result<String, Problem> {
        WebURI.validate(apiURI, schemes: [.https]).map(\.text).mapError { .unusableURI("API URI", $0) }
    }

    /// What an answer says, or why it is not used.
    package static func parse(body: [UInt8], contentType: String?) -> Result<CaptivePortal, Problem> {
        let type = contentType?.split(separator: ";").first.map { $0.trimmingOptionalWhitespace.lowercased() }
        guard type == mediaType else { return .failure(.wrongMediaType(contentType)) }
        guard body.count <= maximumBodySize else { return .failure(.tooLarge(body.count)) }
        let answer: Answer
        do {
            answer = try JSONDecoder().decode(Answer.self, from: Data(body))
        } catch {
            return .failure(.malformed("\(error)".prefix(120).description))
        }
        for (name, url) in [("user-portal-url", answer.userPortalURL), ("venue-info-url", answer.venueInfoURL)] {
            guard let url else { continue }
            if case let .failure(problem) = WebURI.validate(url, schemes: [.https]) { return .failure(.unusableURI(name, problem)) }
        }
        if answer.captive && answer.userPortalURL == nil { return .failure(.captiveWithoutPortal) }
        return .success(CaptivePortal(
            captive: answer.captive, userPortalURL: answer.userPortalURL, venueInfoURL: answer.venueInfoURL,
            canExtendSession: answer.canExtendSession,
            secondsRemaining: clamped(answer.secondsRemaining, to: maximumSecondsRemaining),
            bytesRemaining: clamped(answer.bytesRemaining, to: maximumBytesRemaining)
        ))
    }

    /// `value` within 0…`maximum`, compared while still a `Double` (`Int(1e300)` traps);
    /// nil for a missing value or NaN.
    static func clamped(_ value: Double?, to maximum: Int) -> Int? {
        guard let value, !value.isNaN else { return nil }
        if value <= 0 { return 0 }
        if value >= Double(maximum) { return maximum }
        return Int(value)
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
