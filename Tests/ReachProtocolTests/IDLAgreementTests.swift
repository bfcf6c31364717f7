import ReachabilityCore
import ReachProtocol
import XCTest

/// The IDL is the contract; the Codable types must say the same thing.
final class IDLAgreementTests: XCTestCase {
    /// Field name → declared type text, for `type Name (...)` in the IDL.
    private func fields(ofType name: String) throws -> [String: String] {
        try fields(following: "type \(name) (")
    }

    /// Field name → declared type text of a method's output parameters.
    private func outputs(ofMethod name: String) throws -> [String: String] {
        let text = IDL.text
        let method = try XCTUnwrap(text.range(of: "method \(name)("), "method \(name) missing from the IDL")
        let arrow = try XCTUnwrap(text.range(of: ") -> (", range: method.upperBound..<text.endIndex))
        return try fields(following: String(text[method.lowerBound..<arrow.upperBound]))
    }

    /// Field name → declared type text of the parenthesised list that `header` opens.
    private func fields(following header: String) throws -> [String: String] {
        let text = IDL.text
        let header = try XCTUnwrap(text.range(of: header), "\(header) missing from the IDL")
        var depth = 1
        var index = header.upperBound
        var body = ""
        while depth > 0, index < text.endIndex {
            let character = text[index]
            if character == "(" { depth += 1 }
            if character == ")" { depth -= 1 }
            if depth > 0 { body.append(character) }
            index = text.index(after: index)
        }
        var result: [String: String] = [:]
        var fieldDepth = 0
        var current = ""
        // Split on top-level commas and newlines, dropping comments.
        let lines = body.split(separator: "\n").map { line in line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? "" }
        for character in lines.joined(separator: ",") {
            if character == "(" { fieldDepth += 1 }
            if character == ")" { fieldDepth -= 1 }
            if character == "," && fieldDepth == 0 {
                add(current, to: &result)
                current = ""
            } else {
                current.append(character)
            }
        }
        add(current, to: &result)
        return result
    }

    private func add(_ field: String, to result: inout [String: String]) {
        let trimmed = field.trimmingCharacters(in: .whitespaces)
        guard let colon = trimmed.firstIndex(of: ":") else { return }
        result[String(trimmed[..<colon]).trimmingCharacters(in: .whitespaces)] =
            String(trimmed[trimmed.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
    }

    /// Values of an inline enum type text like `?(a, b, c)`.
    private func enumValues(_ type: String?) throws -> [String] {
        let type = try XCTUnwrap(type)
        let open = try XCTUnwrap(type.firstIndex(of: "(")), close = try XCTUnwrap(type.lastIndex(of: ")"))
        return type[type.index(after: open)..<close].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    private func jsonKeys(_ value: some Encodable) throws -> Set<String> {
        let object = try VarlinkCoding.decode(JSONObject.self, from: VarlinkCoding.encode(value))
        return Set(object.keys)
    }

    private let fullPath = Path(
        status: .satisfied, unsatisfiedReason: .noRoute, reachability: .reachableViaWired, flags: [.reachable],
        primaryInterface: "eth0", primaryInterfaceType: .wiredEthernet, availableInterfaces: ["eth0"], gateways: ["10.0.0.1"],
        supportsIPv4: true, supportsIPv6: true, supportsDNS: true, isExpensive: true, expensiveReason: .networkManager, isConstrained: false,
        connectivity: .full, captivePortal: IDLAgreementTests.fullPortal, connectivityCause: .dataStall, connectivityCauseSince: 2, connectivityCauseDestinations: 3,
        nat64Prefixes: [IDLAgreementTests.prefix], ipv4ViaNAT64: IDLAgreementTests.prefix, ipv4ProvidedBy: .clat, linkQuality: .moderate
    )

    private static let prefix = NAT64Prefix("64:ff9b::/96", source: .routerAdvertisement)!
    private static let fullQuality = LinkQualityEstimate(
        linkQuality: .moderate, minimumRTT: 150, rtt: 180, rttSamples: 42, deliveryRate: 2_100_000, rateSamples: 12, lossPercent: 0.5, segments: 900,
        signal: -67, transmitBitRate: 144_400_000
    )

    func testLinkQualityMatches() throws {
        XCTAssertEqual(try enumValues(try fields(ofType: "Path")["linkQuality"]), LinkQuality.allCases.map(\.rawValue))
        XCTAssertEqual(try enumValues(try fields(ofType: "LinkQualityEstimate")["linkQuality"]), LinkQuality.allCases.map(\.rawValue))
        XCTAssertEqual(try fields(ofType: "Interface")["quality"], "?LinkQualityEstimate")
    }

    func testNAT64PrefixMatches() throws {
        XCTAssertEqual(try jsonKeys(Self.prefix), Set(try fields(ofType: "NAT64Prefix").keys))
        XCTAssertEqual(try enumValues(try fields(ofType: "NAT64Prefix")["source"]), NAT64Prefix.Source.allCases.map(\.rawValue))
        XCTAssertEqual(try fields(ofType: "Path")["ipv4ViaNAT64"], "?NAT64Prefix")
        XCTAssertEqual(try fields(ofType: "Path")["nat64Prefixes"], "?[]NAT64Prefix")
        // A string on the wire (more providers may come), each Swift case a documented value.
        XCTAssertEqual(try fields(ofType: "Path")["ipv4ProvidedBy"], "?string")
        XCTAssertEqual(IPv4Provider.allCases.map(\.rawValue), ["clat"])
        XCTAssertEqual(try fields(ofType: "Interface")["role"], "?string")
        XCTAssertEqual(InterfaceRole.allCases.map(\.rawValue), ["clat"])
    }

    private static let fullPortal = CaptivePortal(
        apiURI: "https://portal.test/api", captive: true, userPortalURL: "https://portal.test/login",
        venueInfoURL: "https://venue.test/", canExtendSession: true, secondsRemaining: 60, bytesRemaining: 1000
    )

    private let address = InterfaceDescription.Address(
        address: "10.0.0.2", prefixLength: 24, family: .ipv4, scope: .global, tentative: false, dadFailed: false, usable: true
    )

    func testPathFieldsMatch() throws {
        XCTAssertEqual(try jsonKeys(fullPath), Set(try fields(ofType: "Path").keys))
    }

    func testInterfaceFieldsMatch() throws {
        let interface = InterfaceDescription(
            index: 2, name: "eth0", type: .wiredEthernet, kind: "veth", operState: "UP", up: true, carrier: true,
            addresses: [address], isExpensive: false, isConstrained: false, ignored: false,
            connectivity: InterfaceConnectivity(ipv4: .portal, ipv6: .full, lastChecked: 1, captivePortal: Self.fullPortal)
        )
        var stalled = interface
        (stalled.connectivityCause, stalled.connectivityCauseSince, stalled.connectivityCauseDestinations) = (.dataStall, 2, 3)
        stalled.gateways = [Self.failedGateway]
        stalled.nat64Prefixes = [Self.prefix]
        stalled.role = .clat
        stalled.expensiveReason = .configured
        stalled.driver = "ipheth"
        stalled.quality = Self.fullQuality
        XCTAssertEqual(try jsonKeys(stalled), Set(try fields(ofType: "Interface").keys))
        XCTAssertEqual(try jsonKeys(Self.fullQuality), Set(try fields(ofType: "LinkQualityEstimate").keys))
        XCTAssertEqual(try jsonKeys(Self.fullPortal), Set(try fields(ofType: "CaptivePortal").keys))
        XCTAssertEqual(try jsonKeys(address), Set(try fields(ofType: "Address").keys))
    }

    func testTargetFieldsMatch() throws {
        var address = TargetAddress(address: IPAddress("fe80::b")!, interface: "eth0")
        (address.unsatisfiedReason, address.interface, address.interfaceType) = (.noCarrier, "eth0", .wiredEthernet)
        (address.gateway, address.source, address.ignoredForPath) = ("fe80::1", "fe80::a", true)
        (address.viaNAT64, address.nat64Prefix) = ("64:ff9b::c000:201", "64:ff9b::/96")
        XCTAssertEqual(try jsonKeys(address), Set(try fields(ofType: "TargetAddress").keys))
        let path = TargetPath(
            status: .unsatisfied, unsatisfiedReason: .noCarrier, reachability: .notReachable, flags: [.reachable],
            primaryInterface: "eth0", primaryInterfaceType: .wiredEthernet, addresses: [address]
        )
        XCTAssertEqual(try jsonKeys(path), Set(try fields(ofType: "TargetPath").keys))
        XCTAssertEqual(try fields(ofType: "TargetAddress")["ignoredForPath"], "?bool")
    }

    private static let failedGateway = GatewayNeighbourDescription(address: "10.0.0.1", state: .failed, since: 3)

    func testGatewayNeighbourMatches() throws {
        XCTAssertEqual(try jsonKeys(Self.failedGateway), Set(try fields(ofType: "GatewayNeighbour").keys))
        XCTAssertEqual(try enumValues(try fields(ofType: "GatewayNeighbour")["state"]), NeighbourState.allCases.map(\.rawValue))
        XCTAssertEqual(try fields(ofType: "Interface")["gateways"], "?[]GatewayNeighbour")
    }

    func testEnumsMatch() throws {
        let path = try fields(ofType: "Path")
        XCTAssertEqual(try enumValues(path["status"]), PathStatus.allCases.map(\.rawValue))
        XCTAssertEqual(try enumValues(path["unsatisfiedReason"]), UnsatisfiedReason.allCases.map(\.rawValue))
        XCTAssertEqual(try enumValues(path["reachability"]), ReachabilityStatus.allCases.map(\.rawValue))
        XCTAssertEqual(try enumValues(path["connectivity"]), Connectivity.allCases.map(\.rawValue))
        let interface = try fields(ofType: "Interface")
        XCTAssertEqual(try enumValues(interface["ipv4Connectivity"]), Connectivity.allCases.map(\.rawValue))
        XCTAssertEqual(try enumValues(interface["ipv6Connectivity"]), Connectivity.allCases.map(\.rawValue))
        // A string on the wire (an enum of one value is beyond python-varlink's parser); the values are these.
        XCTAssertEqual(path["connectivityCause"], "?string")
        XCTAssertEqual(interface["connectivityCause"], "?string")
        XCTAssertEqual(ConnectivityCause.allCases.map(\.rawValue), ["dataStall", "networkManager"])
        XCTAssertEqual(path["expensiveReason"], "?string")
        XCTAssertEqual(interface["expensiveReason"], "?string")
        XCTAssertEqual(ExpensiveReason.allCases.map(\.rawValue), ["configured", "cellular", "networkManager", "tethering", "dhcp", "hotspotAddressPlan"])
        XCTAssertEqual(path["unsatisfiedReason"]?.hasPrefix("?"), true)
        XCTAssertEqual(path["primaryInterfaceType"], "?InterfaceType")

        let addressFields = try fields(ofType: "Address")
        XCTAssertEqual(try enumValues(addressFields["family"]), AddressFamily.allCases.map(\.rawValue))
        XCTAssertEqual(try enumValues(addressFields["scope"]), ["global", "site", "link", "host", "nowhere"])
        for scope in try enumValues(addressFields["scope"]) { XCTAssertNotNil(AddressScope(rawValue: scope), scope) }

        let typeLine = try XCTUnwrap(IDL.text.split(separator: "\n").first { $0.hasPrefix("type InterfaceType ") })
        XCTAssertEqual(try enumValues(String(typeLine)), InterfaceType.allCases.map(\.rawValue))
    }

    func testFlagNamesDocumentedInIDL() {
        for (_, name) in ReachabilityFlags.named {
            XCTAssertTrue(IDL.text.contains(name), "flag \(name) not mentioned in the IDL")
        }
    }

    func testSummaryMatches() throws {
        let summary = SummaryReply(status: .satisfied, connectivity: .full, isExpensive: true, isConstrained: false)
        let declared = try outputs(ofMethod: "SubscribeSummary")
        XCTAssertEqual(try jsonKeys(summary), Set(declared.keys))
        let path = try fields(ofType: "Path")
        for field in declared.keys { XCTAssertEqual(declared[field], path[field], "\(field) as Path declares it") }
    }

    func testMethodsDeclared() {
        for method in [ReachabilityInterface.Method.getStatus, ReachabilityInterface.Method.subscribe, ReachabilityInterface.Method.listInterfaces,
                       ReachabilityInterface.Method.subscribeSummary] {
            let short = method.split(separator: ".").last!
            XCTAssertTrue(IDL.text.contains("method \(short)("), "\(method) not declared")
        }
        XCTAssertTrue(IDL.text.contains("interface \(ReachabilityInterface.name)\n"))
        XCTAssertTrue(VarlinkService.idl.contains("interface org.varlink.service\n"))
    }
}
