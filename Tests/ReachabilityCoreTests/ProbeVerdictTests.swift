import ReachabilityCore
import XCTest

/// One probe round's verdict, case by case: NetworkManager's, Android's and shill's rules
/// as ProbeVerdict's header states them.
final class ProbeVerdictTests: XCTestCase {
    private static let noContent = ProbeOutcome.response(ProbeResponse(status: 204))
    private static let login = ProbeOutcome.response(ProbeResponse(status: 200, bodyPrefix: "<html>Login", bodyLength: 900))
    private static let redirect = ProbeOutcome.response(ProbeResponse(status: 302, location: "http://portal.test/login"))
    private static let nmOnline = ProbeOutcome.response(ProbeResponse(status: 200, headers: ["x-networkmanager-status": "online"], bodyPrefix: "NetworkManager is online", bodyLength: 24))

    func testVerdicts() {
        let standard = ProbeExpectation()
        let networkManager = ProbeExpectation(bodyPrefix: "NetworkManager is online")
        let byHeader = ProbeExpectation(header: (name: "x-networkmanager-status", value: "online"))
        let cases: [(String, ProbeOutcome?, ProbeOutcome?, ProbeExpectation, Connectivity, String?)] = [
            ("nothing configured", nil, nil, standard, .unknown, nil),
            ("204 over both", Self.noContent, Self.noContent, standard, .full, nil),
            ("204 over HTTP only, no HTTPS check", Self.noContent, nil, standard, .full, nil),
            ("HTTPS only, passed", nil, Self.noContent, standard, .full, nil),
            ("302 with Location: portal, its login page recorded", Self.redirect, Self.noContent, standard, .portal, "http://portal.test/login"),
            ("307 without Location is still 2xx-3xx: portal", .response(ProbeResponse(status: 307)), .timedOut, standard, .portal, nil),
            ("200 with a login page: portal", Self.login, .untrusted("self-signed"), standard, .portal, nil),
            ("HTTP fine, HTTPS blocked: partial", Self.noContent, .timedOut, standard, .partial, nil),
            ("HTTP fine, HTTPS certificate refused: partial", Self.noContent, .untrusted("unknown issuer"), standard, .partial, nil),
            ("port 80 filtered, HTTPS fine: full", .failed("connection refused"), Self.noContent, standard, .full, nil),
            ("nothing answers: limited", .timedOut, .timedOut, standard, .limited, nil),
            ("names do not resolve: limited", .failed("nameNotFound"), .failed("nameNotFound"), standard, .limited, nil),
            ("500 from the endpoint: limited", .response(ProbeResponse(status: 500)), .timedOut, standard, .limited, nil),
            ("404: limited, not a portal", .response(ProbeResponse(status: 404)), nil, standard, .limited, nil),
            ("HTTPS redirect is no portal", .timedOut, Self.redirect, standard, .limited, nil),
            ("NetworkManager body prefix", Self.nmOnline, nil, networkManager, .full, nil),
            ("NetworkManager body expected, login page got: portal", Self.login, nil, networkManager, .portal, nil),
            ("body expected, 200 with 4 bytes: broken proxy, limited", .response(ProbeResponse(status: 200, bodyPrefix: "ok\r\n", bodyLength: 4)), nil, networkManager, .limited, nil),
            ("body expected, 204: portal-ish answer, not online", Self.noContent, nil, networkManager, .portal, nil),
            ("NetworkManager header", Self.nmOnline, nil, byHeader, .full, nil),
            ("header expected, missing on a 204", Self.noContent, nil, byHeader, .portal, nil),
        ]
        for (name, http, https, expect, connectivity, portal) in cases {
            let judgement = ProbeVerdict.judge(http: http, https: https, expect: expect)
            XCTAssertEqual(judgement.connectivity, connectivity, name)
            XCTAssertEqual(judgement.portalURL, portal, name)
        }
    }

    /// Two families and the network's API make one interface's connectivity.
    func testCombiningFamilies() {
        let captive = CaptivePortal(apiURI: "https://portal.test/api", captive: true, userPortalURL: "https://portal.test/")
        let open = CaptivePortal(apiURI: "https://portal.test/api", captive: false)
        let cases: [(String, InterfaceConnectivity, Connectivity)] = [
            ("nothing probed", InterfaceConnectivity(), .unknown),
            ("IPv4 full, IPv6 not probed", InterfaceConnectivity(ipv4: .full), .full),
            ("IPv6 full, IPv4 limited: the better family", InterfaceConnectivity(ipv4: .limited, ipv6: .full), .full),
            ("partial beats limited", InterfaceConnectivity(ipv4: .partial, ipv6: .limited), .partial),
            ("a portal on one family wins over full on the other", InterfaceConnectivity(ipv4: .full, ipv6: .portal), .portal),
            ("the API's captive answer is authoritative", InterfaceConnectivity(ipv4: .full, captivePortal: captive), .portal),
            ("the API's open session leaves the probes' verdict", InterfaceConnectivity(ipv4: .limited, captivePortal: open), .limited),
            ("an announced API alone says nothing yet", InterfaceConnectivity(captivePortal: CaptivePortal(apiURI: "https://p.test/")), .unknown),
        ]
        for (name, facts, expected) in cases {
            XCTAssertEqual(facts.combined, expected, name)
            XCTAssertEqual(facts.requiresIntervention, expected == .portal, name)
        }
    }
}
