import NIOCore
import ReachabilityCore

extension ByteBuffer {
    /// Writes `reply` as one Varlink frame (JSON then NUL), without JSONEncoder.
    ///
    /// The bytes are exactly those `writeVarlinkMessage(_:)` writes for the same reply
    /// (`VarlinkCoding`: sorted keys, nil optionals left out, slashes not escaped), so a
    /// client cannot tell which encoder the daemon used. The daemon frames a status reply
    /// for every published change and filter group, and JSONEncoder's boxing, generic
    /// containers and key sorting were most of that cost.
    ///
    /// - Returns: the number of bytes written.
    @discardableResult
    package mutating func writeStatusReplyFrame(_ reply: VarlinkReply<StatusReply>) -> Int {
        // Built in an array, then copied once: ByteBuffer's bookkeeping on each small
        // write (exclusivity and uniqueness checks) cost more than the JSON itself.
        var json = JSONBytes(capacity: JSONBytes.estimatedSize(of: reply))
        json.append(reply)
        json.bytes.append(VarlinkFraming.terminator)
        return writeBytes(json.bytes)
    }
}

extension ByteBuffer {
    /// Writes `reply` as one Varlink frame (JSON then NUL), without JSONEncoder: the bytes
    /// `writeVarlinkMessage(_:)` writes for it, as `writeStatusReplyFrame(_:)` does.
    ///
    /// - Returns: the number of bytes written.
    @discardableResult
    package mutating func writeSummaryReplyFrame(_ reply: VarlinkReply<SummaryReply>) -> Int {
        var json = JSONBytes(capacity: 160 + (reply.error?.utf8.count ?? 0))
        json.append(reply)
        json.bytes.append(VarlinkFraming.terminator)
        return writeBytes(json.bytes)
    }
}

/// JSON text as FoundationEssentials' JSONWriter prints it for `VarlinkCoding`'s options.
///
/// The `append` methods mirror the Codable conformances (synthesized, so
/// `encodeIfPresent` for optionals) field by field, keys in each object in UTF-8 byte
/// order, the order `.sortedKeys` gives. The tests compare them with JSONEncoder on
/// thousands of generated replies whose generator must set and unset every stored
/// property the types have, so a field added to the wire types and not here fails them.
private struct JSONBytes {
    var bytes: [UInt8] = []

    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    /// Every key, bracket and enum name of the largest reply, with room to spare; strings
    /// are added at their length (escapes, rarely present, may still grow the array).
    static let fixedSize = 1024

    static func estimatedSize(of reply: VarlinkReply<StatusReply>) -> Int {
        var size = fixedSize + (reply.error?.utf8.count ?? 0)
        guard let status = reply.parameters else { return size }
        size += status.instance.utf8.count
        let path = status.path
        size += (path.primaryInterface?.utf8.count ?? 0)
        for name in path.availableInterfaces { size += name.utf8.count + 3 }
        for gateway in path.gateways { size += gateway.utf8.count + 3 }
        size += ((path.nat64Prefixes?.count ?? 0) + 1) * 96
        if let portal = path.captivePortal {
            size += (portal.apiURI?.utf8.count ?? 0) + (portal.userPortalURL?.utf8.count ?? 0) + (portal.venueInfoURL?.utf8.count ?? 0)
        }
        return size
    }

    mutating func append(_ reply: VarlinkReply<StatusReply>) {
        appendEnvelope(reply) { $0.append($1) }
    }

    /// A reply's envelope in JSONEncoder's key order, `parameters` written by `body`.
    private mutating func appendEnvelope<Parameters>(_ reply: VarlinkReply<Parameters>, _ body: (inout Self, Parameters) -> Void) {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        if let continues = reply.continues {
            appendKey(#""continues":"#, first: &first)
            appendBool(continues)
        }
        if let error = reply.error {
            appendKey(#""error":"#, first: &first)
            appendString(error)
        }
        if let parameters = reply.parameters {
            appendKey(#""parameters":"#, first: &first)
            body(&self, parameters)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func append(_ reply: VarlinkReply<SummaryReply>) {
        appendEnvelope(reply) { encoder, summary in
            encoder.appendText(#"{"connectivity":"#)
            encoder.appendString(summary.connectivity.rawValue)
            encoder.appendText(#","isConstrained":"#)
            encoder.appendBool(summary.isConstrained)
            encoder.appendText(#","isExpensive":"#)
            encoder.appendBool(summary.isExpensive)
            encoder.appendText(#","status":"#)
            encoder.appendString(summary.status.rawValue)
            encoder.bytes.append(UInt8(ascii: "}"))
        }
    }

    mutating func append(_ status: StatusReply) {
        bytes.append(UInt8(ascii: "{"))
        if let changes = status.changes {
            appendText(#""changes":["#)
            for (index, change) in changes.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                appendString(change.rawValue)
            }
            appendText("],")
        }
        appendText(#""instance":"#)
        appendString(status.instance)
        appendText(#","path":"#)
        append(status.path)
        appendText(#","sequence":"#)
        appendInteger(status.sequence)
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func append(_ path: Path) {
        // `availableInterfaces` is always present and sorts first, so every later key
        // follows a comma.
        appendText(#"{"availableInterfaces":"#)
        appendStrings(path.availableInterfaces)
        if let portal = path.captivePortal {
            appendText(#","captivePortal":"#)
            append(portal)
        }
        appendText(#","connectivity":"#)
        appendString(path.connectivity.rawValue)
        if let cause = path.connectivityCause {
            appendText(#","connectivityCause":"#)
            appendString(cause.rawValue)
        }
        if let destinations = path.connectivityCauseDestinations {
            appendText(#","connectivityCauseDestinations":"#)
            appendInteger(destinations)
        }
        if let since = path.connectivityCauseSince {
            appendText(#","connectivityCauseSince":"#)
            appendInteger(since)
        }
        if let reason = path.expensiveReason {
            appendText(#","expensiveReason":"#)
            appendString(reason.rawValue)
        }
        appendText(#","flags":["#)
        // ReachabilityFlags encodes as its names in Apple's bit order (`names`), without
        // building that array here.
        var firstFlag = true
        for (flag, name) in ReachabilityFlags.named where path.flags.contains(flag) {
            if !firstFlag { bytes.append(UInt8(ascii: ",")) }
            firstFlag = false
            appendString(name)
        }
        appendText(#"],"gateways":"#)
        appendStrings(path.gateways)
        if let provider = path.ipv4ProvidedBy {
            appendText(#","ipv4ProvidedBy":"#)
            appendString(provider.rawValue)
        }
        if let prefix = path.ipv4ViaNAT64 {
            appendText(#","ipv4ViaNAT64":"#)
            append(prefix)
        }
        appendText(#","isConstrained":"#)
        appendBool(path.isConstrained)
        appendText(#","isExpensive":"#)
        appendBool(path.isExpensive)
        if let quality = path.linkQuality {
            appendText(#","linkQuality":"#)
            appendString(quality.rawValue)
        }
        if let prefixes = path.nat64Prefixes {
            appendText(#","nat64Prefixes":["#)
            for (index, prefix) in prefixes.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                append(prefix)
            }
            bytes.append(UInt8(ascii: "]"))
        }
        if let name = path.primaryInterface {
            appendText(#","primaryInterface":"#)
            appendString(name)
        }
        if let type = path.primaryInterfaceType {
            appendText(#","primaryInterfaceType":"#)
            appendString(type.rawValue)
        }
        appendText(#","reachability":"#)
        appendString(path.reachability.rawValue)
        appendText(#","status":"#)
        appendString(path.status.rawValue)
        appendText(#","supportsDNS":"#)
        appendBool(path.supportsDNS)
        appendText(#","supportsIPv4":"#)
        appendBool(path.supportsIPv4)
        appendText(#","supportsIPv6":"#)
        appendBool(path.supportsIPv6)
        if let reason = path.unsatisfiedReason {
            appendText(#","unsatisfiedReason":"#)
            appendString(reason.rawValue)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func append(_ prefix: NAT64Prefix) {
        appendText(#"{"prefix":"#)
        appendString(prefix.description)
        appendText(#","source":"#)
        appendString(prefix.source.rawValue)
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func append(_ portal: CaptivePortal) {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        if let uri = portal.apiURI {
            appendKey(#""apiURI":"#, first: &first)
            appendString(uri)
        }
        if let bytes = portal.bytesRemaining {
            appendKey(#""bytesRemaining":"#, first: &first)
            appendInteger(bytes)
        }
        if let canExtend = portal.canExtendSession {
            appendKey(#""canExtendSession":"#, first: &first)
            appendBool(canExtend)
        }
        if let captive = portal.captive {
            appendKey(#""captive":"#, first: &first)
            appendBool(captive)
        }
        if let seconds = portal.secondsRemaining {
            appendKey(#""secondsRemaining":"#, first: &first)
            appendInteger(seconds)
        }
        if let url = portal.userPortalURL {
            appendKey(#""userPortalURL":"#, first: &first)
            appendString(url)
        }
        if let url = portal.venueInfoURL {
            appendKey(#""venueInfoURL":"#, first: &first)
            appendString(url)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    // MARK: JSON scalars, as FoundationEssentials' JSONWriter prints them

    /// Text known to need no escaping: keys, brackets, literals.
    private mutating func appendText(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `key` is the quoted key and its colon; a comma goes before all but the first.
    private mutating func appendKey(_ key: StaticString, first: inout Bool) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        appendText(key)
    }

    private mutating func appendBool(_ value: Bool) {
        appendText(value ? "true" : "false")
    }

    private mutating func appendStrings(_ strings: [String]) {
        bytes.append(UInt8(ascii: "["))
        for (index, string) in strings.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendString(string)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Decimal digits, a minus sign for negatives (Int.min included): what JSONEncoder
    /// writes for an `Int`, without building a `String`.
    private mutating func appendInteger(_ value: Int) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        // 20 digits hold UInt64.max; filled from the end.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// A quoted string with JSONEncoder's escapes: `"` and `\` by a backslash, the control
    /// characters by `\b \f \n \r \t` or `\u00XX` (lower-case hex). Everything else, `/`
    /// (`.withoutEscapingSlashes`), DEL and non-ASCII included, is copied as UTF-8.
    private mutating func appendString(_ string: String) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        // Native strings are contiguous UTF-8 already, so this does not copy.
        string.withUTF8 { utf8 in
            var copied = 0  // bytes before this index are appended
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[copied..<index]))
                copied = index + 1
                switch byte {
                case UInt8(ascii: "\""): appendText(#"\""#)
                case UInt8(ascii: "\\"): appendText(#"\\"#)
                case 0x08: appendText(#"\b"#)
                case 0x0C: appendText(#"\f"#)
                case UInt8(ascii: "\n"): appendText(#"\n"#)
                case UInt8(ascii: "\r"): appendText(#"\r"#)
                case UInt8(ascii: "\t"): appendText(#"\t"#)
                default:
                    // Below 0x20: the high digit is 0 or 1.
                    let low = byte & 0xF
                    appendText(byte < 0x10 ? #"\u000"# : #"\u001"#)
                    bytes.append(low < 10 ? UInt8(ascii: "0") + low : UInt8(ascii: "a") + low - 10)
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[copied...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
