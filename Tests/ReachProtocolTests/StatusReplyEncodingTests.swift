import NIOCore
import ReachabilityCore
import ReachProtocol
import XCTest

/// The direct status encoder against JSONEncoder (through `VarlinkCoding`, as the generic
/// path frames): the same bytes for every reply, and they decode back to the reply.
final class StatusReplyEncodingTests: XCTestCase {
    private static let fullPortal = CaptivePortal(
        apiURI: "https://portal.example/api/v1?x=1&y=2", captive: true, userPortalURL: "http://portal.example/login",
        venueInfoURL: "https://venue.example/info", canExtendSession: false, secondsRemaining: 3600, bytesRemaining: 1 << 40
    )

    private static let fullPath = Path(
        status: .requiresConnection, unsatisfiedReason: .connectionRequired, reachability: .reachableViaWired,
        flags: [.reachable, .connectionRequired, .isDirect, .isWWAN], primaryInterface: "eth0", primaryInterfaceType: .wiredEthernet,
        availableInterfaces: ["eth0", "wlan0", "wwan0"], gateways: ["192.0.2.1", "fe80::1%eth0"], supportsIPv4: true,
        supportsIPv6: true, supportsDNS: true, isExpensive: true, isConstrained: true, connectivity: .portal, captivePortal: fullPortal,
        linkQuality: .moderate
    )

    /// Strings that need every kind of escape JSON has, and some that must not be escaped
    /// (the generated replies draw from them too).
    static let awkwardStrings: [String] = [
        "",
        #"quote " inside"#,
        #"back\slash and \" both"#,
        "slash / and //",
        "tab\tnewline\nreturn\rbackspace\u{8}formfeed\u{C}",
        "nul \u{0} one \u{1} us \u{1F} esc \u{1B} vt \u{B}",
        "del \u{7F} stays",
        "café naïve Ünïcödé",
        "e\u{301} decomposed",
        "emoji 😀 flag 🇫🇷 family 👨‍👩‍👧",
        "line separator \u{2028} and \u{2029}",
        "bom \u{FEFF} and replacement \u{FFFD}",
        "汉字 and עברית",
        String(repeating: "x", count: 5000),
        String(repeating: "\"\\\n", count: 700),
        "\u{1F}",
        "\"",
        "\\",
        "/",
    ]

    private static var cases: [(name: String, reply: StatusReply)] {
        var cases: [(String, StatusReply)] = [
            ("empty path", StatusReply(sequence: 0, instance: "", path: Path(status: .unsatisfied, reachability: .unknown))),
            ("GetStatus shape", StatusReply(sequence: 7, instance: "0123abcd", path: fullPath)),
            ("full path, no changes", StatusReply(sequence: 1, instance: "run", path: fullPath, changes: [])),
            ("full path, every change", StatusReply(sequence: 2, instance: "run", path: fullPath, changes: PathChange.allCases)),
            ("changes in reverse", StatusReply(sequence: 3, instance: "run", path: fullPath, changes: PathChange.allCases.reversed())),
            ("big sequence", StatusReply(sequence: .max, instance: "i", path: fullPath, changes: [.status])),
            ("negative sequence", StatusReply(sequence: -42, instance: "i", path: fullPath)),
            ("smallest sequence", StatusReply(sequence: .min, instance: "i", path: fullPath)),
        ]
        for status in PathStatus.allCases {
            cases.append(("status \(status)", StatusReply(sequence: 1, instance: "i", path: Path(status: status, reachability: .notReachable))))
        }
        for reason in UnsatisfiedReason.allCases {
            cases.append(("reason \(reason)", StatusReply(
                sequence: 1, instance: "i", path: Path(status: .unsatisfied, unsatisfiedReason: reason, reachability: .notReachable)
            )))
        }
        for reachability in ReachabilityStatus.allCases {
            cases.append(("reachability \(reachability)", StatusReply(sequence: 1, instance: "i", path: Path(status: .satisfied, reachability: reachability))))
        }
        for type in InterfaceType.allCases {
            var path = fullPath
            path.primaryInterfaceType = type
            cases.append(("interface type \(type)", StatusReply(sequence: 1, instance: "i", path: path)))
        }
        for connectivity in Connectivity.allCases {
            var path = fullPath
            path.connectivity = connectivity
            path.captivePortal = nil
            cases.append(("connectivity \(connectivity)", StatusReply(sequence: 1, instance: "i", path: path)))
        }
        for change in PathChange.allCases {
            cases.append(("change \(change)", StatusReply(sequence: 1, instance: "i", path: fullPath, changes: [change])))
        }
        for (flag, name) in ReachabilityFlags.named {
            var path = fullPath
            path.flags = flag
            cases.append(("flag \(name)", StatusReply(sequence: 1, instance: "i", path: path)))
        }
        var allFlags = fullPath
        allFlags.flags = ReachabilityFlags(ReachabilityFlags.named.map(\.0))
        cases.append(("every flag", StatusReply(sequence: 1, instance: "i", path: allFlags)))
        var noFlags = fullPath
        noFlags.flags = []
        cases.append(("no flags", StatusReply(sequence: 1, instance: "i", path: noFlags)))

        // Each optional of the captive portal alone, then none of them.
        let portalFields: [(String, (inout CaptivePortal) -> Void)] = [
            ("apiURI", { $0.apiURI = "https://a/b" }), ("captive", { $0.captive = false }),
            ("userPortalURL", { $0.userPortalURL = "http://u/" }), ("venueInfoURL", { $0.venueInfoURL = "http://v/" }),
            ("canExtendSession", { $0.canExtendSession = true }), ("secondsRemaining", { $0.secondsRemaining = -1 }),
            ("bytesRemaining", { $0.bytesRemaining = .max }),
        ]
        for (name, set) in portalFields {
            var portal = CaptivePortal()
            set(&portal)
            var path = fullPath
            path.captivePortal = portal
            cases.append(("portal with \(name) only", StatusReply(sequence: 1, instance: "i", path: path)))
        }
        var emptyPortal = fullPath
        emptyPortal.captivePortal = CaptivePortal()
        cases.append(("portal without facts", StatusReply(sequence: 1, instance: "i", path: emptyPortal)))

        // Each optional of the path left out on its own.
        let pathOptionals: [(String, (inout Path) -> Void)] = [
            ("unsatisfiedReason", { $0.unsatisfiedReason = nil }), ("primaryInterface", { $0.primaryInterface = nil }),
            ("primaryInterfaceType", { $0.primaryInterfaceType = nil }), ("captivePortal", { $0.captivePortal = nil }),
        ]
        for (name, clear) in pathOptionals {
            var path = fullPath
            clear(&path)
            cases.append(("path without \(name)", StatusReply(sequence: 1, instance: "i", path: path, changes: [])))
        }

        // Awkward text in every string field.
        for (index, text) in awkwardStrings.enumerated() {
            var path = fullPath
            path.primaryInterface = text
            path.availableInterfaces = [text, "eth0", text]
            path.gateways = [text]
            path.captivePortal = CaptivePortal(apiURI: text, userPortalURL: text, venueInfoURL: text)
            cases.append(("string \(index)", StatusReply(sequence: index, instance: text, path: path, changes: [.gateways])))
        }
        var oneEmptyName = fullPath
        oneEmptyName.availableInterfaces = [""]
        oneEmptyName.gateways = ["", ""]
        cases.append(("empty strings in lists", StatusReply(sequence: 1, instance: "i", path: oneEmptyName)))
        var manyInterfaces = fullPath
        manyInterfaces.availableInterfaces = (0..<500).map { "veth\($0)" }
        cases.append(("many interfaces", StatusReply(sequence: 1, instance: "i", path: manyInterfaces)))
        return cases
    }

    func testSameBytesAsJSONEncoder() throws {
        for (name, reply) in Self.cases {
            for envelope in [VarlinkReply(parameters: reply, continues: true), VarlinkReply(parameters: reply)] {
                let label = "\(name), continues: \(envelope.isContinuing)"
                let expected = try VarlinkCoding.encodeFrame(envelope)
                var buffer = ByteBuffer()
                let written = buffer.writeStatusReplyFrame(envelope)
                let direct = Array(buffer.readableBytesView)
                XCTAssertEqual(written, direct.count, label)
                if direct != expected {
                    XCTFail("\(label):\n direct  \(String(decoding: direct, as: UTF8.self))\n encoder \(String(decoding: expected, as: UTF8.self))")
                    continue
                }
                let decoded = try VarlinkCoding.decode(VarlinkReply<StatusReply>.self, from: direct.dropLast())
                XCTAssertEqual(decoded.parameters, reply, label)
                XCTAssertEqual(decoded.isContinuing, envelope.isContinuing, label)
                XCTAssertNil(decoded.error, label)
            }
        }
    }

    func testEnvelopeShapes() throws {
        let reply = StatusReply(sequence: 1, instance: "i", path: Self.fullPath, changes: [])
        let envelopes: [(String, VarlinkReply<StatusReply>)] = [
            ("no parameters", VarlinkReply(parameters: nil)),
            ("no parameters, continues", VarlinkReply(parameters: nil, continues: true)),
            ("error", VarlinkReply(parameters: reply, error: "io.reachd.Example\"\\/")),
            ("error, continues", VarlinkReply(parameters: reply, continues: true, error: "e")),
            ("error only", VarlinkReply(parameters: nil, error: "e")),
        ]
        var explicitFalse = VarlinkReply(parameters: reply)
        explicitFalse.continues = false
        for (name, envelope) in envelopes + [("continues: false sent", explicitFalse)] {
            var buffer = ByteBuffer()
            buffer.writeStatusReplyFrame(envelope)
            XCTAssertEqual(Array(buffer.readableBytesView), try VarlinkCoding.encodeFrame(envelope), name)
        }
    }

    /// A newer reachd's change name is left out, never a failed decode.
    func testUnknownChangesAreLeftOut() throws {
        let bytes = try VarlinkCoding.encode(StatusReply(sequence: 4, instance: "i", path: Self.fullPath, changes: [.status, .linkQuality]))
        let text = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\"linkQuality\"]", with: "\"somethingNew\"]")
        XCTAssertTrue(text.contains("somethingNew"), text)
        let decoded = try VarlinkCoding.decode(StatusReply.self, from: Array(text.utf8))
        XCTAssertEqual(decoded.changes, [.status])
        XCTAssertEqual(decoded.path, Self.fullPath)
    }

    func testAppendsToWhatTheBufferHolds() throws {
        let reply = VarlinkReply(parameters: StatusReply(sequence: 1, instance: "i", path: Self.fullPath), continues: true)
        var buffer = ByteBuffer(string: "before\0")
        buffer.writeStatusReplyFrame(reply)
        buffer.writeStatusReplyFrame(reply)
        let frame = try VarlinkCoding.encodeFrame(reply)
        XCTAssertEqual(Array(buffer.readableBytesView), Array("before\0".utf8) + frame + frame)
    }

    /// `SubscribeSummary`'s direct encoder: every status, connectivity and cost, every envelope.
    func testSummarySameBytesAsJSONEncoder() throws {
        var envelopes: [VarlinkReply<SummaryReply>] = [
            VarlinkReply(parameters: nil), VarlinkReply(parameters: nil, continues: true), VarlinkReply(parameters: nil, error: "e\"\\/"),
        ]
        for status in PathStatus.allCases {
            for connectivity in Connectivity.allCases {
                for (expensive, constrained) in [(false, false), (true, false), (false, true), (true, true)] {
                    let summary = SummaryReply(status: status, connectivity: connectivity, isExpensive: expensive, isConstrained: constrained)
                    envelopes += [VarlinkReply(parameters: summary, continues: true), VarlinkReply(parameters: summary),
                                  VarlinkReply(parameters: summary, continues: true, error: "e")]
                }
            }
        }
        for envelope in envelopes {
            var buffer = ByteBuffer(string: "x")
            let written = buffer.writeSummaryReplyFrame(envelope)
            let expected = try VarlinkCoding.encodeFrame(envelope)
            XCTAssertEqual(Array(buffer.readableBytesView), Array("x".utf8) + expected, "\(envelope)")
            XCTAssertEqual(written, expected.count)
        }
        let path = Self.fullPath
        XCTAssertEqual(SummaryReply(path), SummaryReply(status: path.status, connectivity: path.connectivity,
                                                          isExpensive: path.isExpensive, isConstrained: path.isConstrained))
    }
}
