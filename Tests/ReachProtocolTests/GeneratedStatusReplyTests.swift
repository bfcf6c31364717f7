import NIOCore
import ReachabilityCore
import ReachProtocol
import XCTest

/// The direct status encoder against JSONEncoder on thousands of generated replies.
///
/// What the generator must cover is read from the values themselves (Mirror lists every
/// stored property), not from a list kept here: a field or enum added to the wire types
/// and never generated, or generated only one way, fails `testGeneratorCoversEveryField`
/// by name, so a new optional cannot stay nil here and slip past the byte comparison.
final class GeneratedStatusReplyTests: XCTestCase {
    private static let count = 4000

    private static func generated(seed: UInt64 = 0x5EED_2026) -> [VarlinkReply<StatusReply>] {
        var generator = StatusReplyGenerator(seed: seed)
        return (0..<count).map { _ in generator.envelope() }
    }

    func testSameBytesAsJSONEncoder() throws {
        var failures = 0
        for (index, envelope) in Self.generated().enumerated() {
            let expected = try VarlinkCoding.encodeFrame(envelope)
            var buffer = ByteBuffer()
            let written = buffer.writeStatusReplyFrame(envelope)
            let direct = Array(buffer.readableBytesView)
            XCTAssertEqual(written, direct.count, "value \(index)")
            guard direct != expected else { continue }
            // Where they part, with some text before it: the values are long.
            let offset = zip(direct, expected).prefix { $0 == $1 }.count
            let from = max(0, offset - 80)
            XCTFail("""
                value \(index) differs at byte \(offset):
                 direct  …\(String(decoding: direct[from..<min(direct.count, offset + 40)], as: UTF8.self))
                 encoder …\(String(decoding: expected[from..<min(expected.count, offset + 40)], as: UTF8.self))
                """)
            failures += 1
            if failures == 5 { return }  // the first few say enough
        }
    }

    /// Every optional set and unset, every array empty and not, every case of every enum,
    /// and each kind of integer, boolean and string in every field that holds one.
    func testGeneratorCoversEveryField() {
        var census = FieldCensus()
        for envelope in Self.generated() {
            census.record(envelope)
        }
        XCTAssertEqual(census.gaps, [])
        // The census reached into every wire type.
        XCTAssertTrue(census.optionals.keys.contains("parameters.path.captivePortal.venueInfoURL"))
        XCTAssertTrue(census.enumCases.keys.contains("parameters.changes[]"))
    }

    /// The census names what a generator leaves out, so the test above can fail.
    func testCensusNamesWhatIsNeverGenerated() {
        var census = FieldCensus()
        for var envelope in Self.generated() {
            envelope.parameters?.path.captivePortal?.venueInfoURL = nil
            if envelope.parameters?.path.connectivity == .portal { envelope.parameters?.path.connectivity = .full }
            envelope.parameters?.path.isExpensive = true
            if let sequence = envelope.parameters?.sequence, sequence == .min { envelope.parameters?.sequence = 0 }
            envelope.parameters?.path.gateways = []
            census.record(envelope)
        }
        XCTAssertEqual(census.gaps, [
            "parameters.path.captivePortal.venueInfoURL: never set",
            "parameters.path.connectivity: no case portal",
            "parameters.path.gateways: never non-empty",
            "parameters.path.isExpensive: no false",
            "parameters.sequence: no min",
        ])
    }

    /// With every optional set, every stored property is a key on the wire (so "set" in the
    /// census means "written"), and the direct encoder writes the keys JSONEncoder writes.
    func testEveryFieldOnTheWireWhenSet() throws {
        var generator = StatusReplyGenerator(seed: 7)
        generator.everyOptionalSet = true
        for _ in 0..<50 {
            let envelope = generator.envelope()
            var census = FieldCensus()
            census.record(envelope)
            let leftNil = census.optionals.filter { $0.value.contains(false) }.keys.sorted()
            XCTAssertEqual(leftNil, [], "left nil with every optional set")

            var buffer = ByteBuffer()
            buffer.writeStatusReplyFrame(envelope)
            let direct = try VarlinkCoding.decode(JSONValue.self, from: buffer.readableBytesView.dropLast())
            let encoder = try VarlinkCoding.decode(JSONValue.self, from: VarlinkCoding.encode(envelope))
            let directKeys = Self.keys(direct), encoderKeys = Self.keys(encoder)
            XCTAssertEqual(encoderKeys.subtracting(directKeys).sorted(), [], "keys JSONEncoder writes and the direct encoder does not")
            XCTAssertEqual(directKeys.subtracting(encoderKeys).sorted(), [], "keys the direct encoder writes and JSONEncoder does not")
            XCTAssertEqual(census.fields.subtracting(encoderKeys).sorted(), [], "stored properties not on the wire")
            if !leftNil.isEmpty || directKeys != encoderKeys || census.fields != encoderKeys { return }  // one value says enough
        }
    }

    /// The check above fails on a reply missing a field, so passing means something.
    func testKeysOfAMissingFieldDiffer() throws {
        var generator = StatusReplyGenerator(seed: 7)
        generator.everyOptionalSet = true
        var envelope = generator.envelope()
        envelope.parameters?.path.captivePortal?.bytesRemaining = nil
        var census = FieldCensus()
        census.record(envelope)
        let wire = try VarlinkCoding.decode(JSONValue.self, from: VarlinkCoding.encode(envelope))
        XCTAssertEqual(census.fields.subtracting(Self.keys(wire)), ["parameters.path.captivePortal.bytesRemaining"])
    }

    /// Every object key in `value`, as a dotted path from the top; array elements add "[]".
    private static func keys(_ value: JSONValue, at path: String = "") -> Set<String> {
        switch value {
        case let .object(members):
            return members.reduce(into: []) { keys, member in
                let field = path.isEmpty ? member.key : "\(path).\(member.key)"
                keys.insert(field)
                keys.formUnion(Self.keys(member.value, at: field))
            }
        case let .array(elements):
            return elements.reduce(into: []) { $0.formUnion(keys($1, at: path + "[]")) }
        case .null, .bool, .integer, .number, .string:
            return []
        }
    }
}

/// What generated values held, field by field, found by walking their stored properties
/// with Mirror; a field is named by its path ("parameters.path.captivePortal.apiURI").
private struct FieldCensus {
    /// Optional fields: whether each was seen set (true) and nil (false).
    var optionals: [String: Set<Bool>] = [:]
    /// Arrays: whether each was seen non-empty (true) and empty (false).
    var arrays: [String: Set<Bool>] = [:]
    /// Enum fields: the cases seen, and the cases the type has.
    var enumCases: [String: Set<String>] = [:]
    var enumCaseNames: [String: Set<String>] = [:]
    /// Enum fields whose type does not list its cases.
    var unknownEnums: Set<String> = []
    /// Scalar fields: the kinds of value seen (`LeafKind`), and the kinds the type has.
    var leafKinds: [String: Set<String>] = [:]
    var leafKindsExpected: [String: Set<String>] = [:]
    /// Every stored property reached.
    var fields: Set<String> = []

    mutating func record(_ value: Any, at path: String = "") {
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .optional:
            let wrapped = mirror.children.first?.value
            optionals[path, default: []].insert(wrapped != nil)
            if let wrapped { record(wrapped, at: path) }
        case .collection:
            arrays[path, default: []].insert(!mirror.children.isEmpty)
            for element in mirror.children { record(element.value, at: path + "[]") }
        case .enum:
            enumCases[path, default: []].insert(String(describing: value))
            if let type = type(of: value) as? any CaseIterable.Type {
                enumCaseNames[path] = Self.caseNames(type)
            } else {
                unknownEnums.insert(path)
            }
        case .struct where !(value is ReachabilityFlags) && !(value is NAT64Prefix):
            for child in mirror.children {
                let field = path.isEmpty ? child.label ?? "?" : "\(path).\(child.label ?? "?")"
                fields.insert(field)
                record(child.value, at: field)
            }
        default:
            let (kind, kinds) = LeafKind.of(value)
            leafKinds[path, default: []].insert(kind)
            leafKindsExpected[path] = kinds
        }
    }

    /// What was never generated, one line per field and missing kind.
    var gaps: [String] {
        var gaps = unknownEnums.map { "\($0): not CaseIterable, so its cases cannot be covered" }
        for (field, seen) in optionals {
            if !seen.contains(true) { gaps.append("\(field): never set") }
            if !seen.contains(false) { gaps.append("\(field): never nil") }
        }
        for (field, seen) in arrays {
            if !seen.contains(true) { gaps.append("\(field): never non-empty") }
            if !seen.contains(false) { gaps.append("\(field): never empty") }
        }
        for (field, names) in enumCaseNames {
            gaps += names.subtracting(enumCases[field, default: []]).map { "\(field): no case \($0)" }
        }
        for (field, kinds) in leafKinds {
            gaps += leafKindsExpected[field, default: []].subtracting(kinds).map { "\(field): no \($0)" }
            gaps += kinds.subtracting(leafKindsExpected[field, default: []]).map { "\(field): a \($0) the census cannot classify" }
        }
        return gaps.sorted()
    }

    private static func caseNames<T: CaseIterable>(_: T.Type) -> Set<String> { Set(T.allCases.map { String(describing: $0) }) }
}

/// The kinds of scalar a field must be generated with: the values an encoder gets wrong.
private enum LeafKind {
    static func of(_ value: Any) -> (kind: String, all: Set<String>) {
        switch value {
        case let value as Bool:
            return (value ? "true" : "false", ["true", "false"])
        case let value as Int:
            let kind = value == .min ? "min" : value == .max ? "max" : value < 0 ? "negative" : value == 0 ? "zero" : "positive"
            return (kind, ["min", "max", "negative", "zero", "positive"])
        case let value as String:
            let kind: String
            if value.isEmpty {
                kind = "empty"
            } else if value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                kind = "escaped"
            } else if value.utf8.contains(where: { $0 >= 0x80 }) {
                kind = "non-ASCII"
            } else {
                kind = "plain"
            }
            return (kind, ["empty", "escaped", "non-ASCII", "plain"])
        case let value as NAT64Prefix:
            // Written as its text and source: every length and source must be covered.
            let all = NAT64Prefix.lengths.flatMap { length in NAT64Prefix.Source.allCases.map { "/\(length) \($0)" } }
            return ("/\(value.length) \(value.source)", Set(all))
        case let value as ReachabilityFlags:
            let named = ReachabilityFlags(ReachabilityFlags.named.map(\.0))
            let kind = value.isEmpty ? "none" : value == named ? "every named" : value.isSubset(of: named) ? "some" : "unnamed bits"
            return (kind, ["none", "every named", "some", "unnamed bits"])
        default:
            // A scalar type the generator does not know: fails the coverage test by name.
            return ("\(type(of: value))", [])
        }
    }
}

/// Random replies from a seed, so a failing value repeats. Every value is built through
/// the types' full initialisers, each argument given.
private struct StatusReplyGenerator {
    private var random: SeededRandom
    /// Sets every optional and fills every array (the all-fields value).
    var everyOptionalSet = false

    init(seed: UInt64) {
        random = SeededRandom(seed: seed)
    }

    mutating func envelope() -> VarlinkReply<StatusReply> {
        let parameters = Int.random(in: 0..<20, using: &random) == 0 && !everyOptionalSet ? nil : reply()
        let error = Int.random(in: 0..<8, using: &random) == 0 || everyOptionalSet ? text() : nil
        // `continues` is sent as true or not at all; a decoded reply may hold an explicit false.
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            return VarlinkReply(parameters: parameters, continues: true, error: error)
        case 1 where !everyOptionalSet:
            return VarlinkReply(parameters: parameters, continues: false, error: error)
        default:
            var envelope = VarlinkReply(parameters: parameters, error: error)
            envelope.continues = false
            return envelope
        }
    }

    mutating func reply() -> StatusReply {
        let changes: [PathChange]? = present() ? list(upTo: PathChange.allCases.count + 2) { $0.pick(PathChange.allCases) } : nil
        return StatusReply(sequence: integer(), instance: text(), path: path(), changes: changes)
    }

    mutating func path() -> Path {
        Path(
            status: pick(PathStatus.allCases),
            unsatisfiedReason: present() ? pick(UnsatisfiedReason.allCases) : nil,
            reachability: pick(ReachabilityStatus.allCases),
            flags: flags(),
            primaryInterface: present() ? text() : nil,
            primaryInterfaceType: present() ? pick(InterfaceType.allCases) : nil,
            availableInterfaces: list(upTo: 6) { $0.text() },
            gateways: list(upTo: 3) { $0.text() },
            supportsIPv4: .random(using: &random),
            supportsIPv6: .random(using: &random),
            supportsDNS: .random(using: &random),
            isExpensive: .random(using: &random),
            expensiveReason: present() ? pick(ExpensiveReason.allCases) : nil,
            isConstrained: .random(using: &random),
            connectivity: pick(Connectivity.allCases),
            captivePortal: present() ? portal() : nil,
            connectivityCause: present() ? pick(ConnectivityCause.allCases) : nil,
            connectivityCauseSince: present() ? integer() : nil,
            connectivityCauseDestinations: present() ? integer() : nil,
            nat64Prefixes: present() ? list(upTo: 3) { $0.nat64Prefix() } : nil,
            ipv4ViaNAT64: present() ? nat64Prefix() : nil,
            ipv4ProvidedBy: present() ? pick(IPv4Provider.allCases) : nil,
            linkQuality: present() ? pick(LinkQuality.allCases) : nil
        )
    }

    mutating func nat64Prefix() -> NAT64Prefix {
        let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
        return NAT64Prefix(address: .v6(bytes), length: pick(NAT64Prefix.lengths.sorted()), source: pick(NAT64Prefix.Source.allCases))!
    }

    mutating func portal() -> CaptivePortal {
        CaptivePortal(
            apiURI: present() ? text() : nil,
            captive: present() ? .random(using: &random) : nil,
            userPortalURL: present() ? text() : nil,
            venueInfoURL: present() ? text() : nil,
            canExtendSession: present() ? .random(using: &random) : nil,
            secondsRemaining: present() ? integer() : nil,
            bytesRemaining: present() ? integer() : nil
        )
    }

    private mutating func present() -> Bool {
        everyOptionalSet || Int.random(in: 0..<3, using: &random) != 0
    }

    private mutating func pick<T>(_ choices: [T]) -> T {
        choices.randomElement(using: &random)!
    }

    private mutating func list<T>(upTo limit: Int, _ element: (inout Self) -> T) -> [T] {
        let count = Int.random(in: (everyOptionalSet ? 1 : 0)...limit, using: &random)
        return (0..<count).map { _ in element(&self) }
    }

    private mutating func flags() -> ReachabilityFlags {
        let named = ReachabilityFlags.named.map(\.0)
        switch Int.random(in: 0..<8, using: &random) {
        case 0: return []
        case 1: return ReachabilityFlags(named)
        case 2: return ReachabilityFlags(rawValue: .random(in: .min ... .max, using: &random))
        default: return ReachabilityFlags(named.filter { _ in .random(using: &random) })
        }
    }

    /// An edge (the ends, zero, ±1, around powers of ten and two) or any Int.
    private mutating func integer() -> Int {
        let edges: [Int] = [.min, .min + 1, -1_000_000_000_000_000_000, -10, -1, 0, 1, 9, 10, 99, 100, 1 << 40, (1 << 53) + 1, .max - 1, .max]
        return Int.random(in: 0..<2, using: &random) == 0 ? pick(edges) : .random(in: .min ... .max, using: &random)
    }

    /// One of the hand-picked awkward strings, or a random run of characters JSON escapes,
    /// must not escape, or that are more than one UTF-8 byte.
    private mutating func text() -> String {
        if Int.random(in: 0..<4, using: &random) == 0 { return pick(StatusReplyEncodingTests.awkwardStrings) }
        let length = Int.random(in: 0...24, using: &random)
        var scalars = String.UnicodeScalarView()
        for _ in 0..<length {
            scalars.append(pick(Self.scalars))
        }
        return String(scalars)
    }

    /// Every control character, the escaped and the unescaped punctuation, DEL and C1,
    /// two- to four-byte UTF-8 (combining marks, the line and paragraph separators, BOM,
    /// the replacement character, emoji with joiners, the last scalar).
    private static let scalars: [Unicode.Scalar] =
        (0..<0x20).map { Unicode.Scalar(UInt8($0)) }
        + ["\"", "\\", "/", " ", "a", "Z", "0", "9", "{", "}", "[", "]", ":", ","]
        + ["\u{7F}", "\u{80}", "\u{9F}", "é", "\u{301}", "\u{2028}", "\u{2029}", "\u{FEFF}", "\u{FFFD}", "汉", "ע", "😀", "\u{200D}", "👩", "\u{10FFFF}"]
}

/// A seeded 64-bit generator (an LCG, its output mixed by a multiply and shifts).
private struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        let mixed = (state ^ (state >> 33)) &* 0xFF51_AFD7_ED55_8CCD
        return mixed ^ (mixed >> 33)
    }
}
