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
            // A Location is a login page only when it is a usable http(s) URI.
            ("Location https", .response(ProbeResponse(status: 302, location: "https://portal.test/login?x=1")), nil, standard, .portal, "https://portal.test/login?x=1"),
            ("Location with ESC: a portal, no login page", .response(ProbeResponse(status: 302, location: "http://portal.test/\u{1B}]0;owned\u{07}")), nil, standard, .portal, nil),
            ("Location with C1", .response(ProbeResponse(status: 302, location: "http://portal.test/\u{9B}31m")), nil, standard, .portal, nil),
            ("Location with U+202E", .response(ProbeResponse(status: 302, location: "http://portal.test/\u{202E}gpj.exe")), nil, standard, .portal, nil),
            ("Location with a newline", .response(ProbeResponse(status: 302, location: "http://portal.test/\nSTATUS=forged")), nil, standard, .portal, nil),
            ("Location javascript:", .response(ProbeResponse(status: 302, location: "javascript:alert(1)")), nil, standard, .portal, nil),
            ("Location file:", .response(ProbeResponse(status: 302, location: "file:///etc/shadow")), nil, standard, .portal, nil),
            ("Location with port 99999", .response(ProbeResponse(status: 302, location: "http://portal.test:99999/")), nil, standard, .portal, nil),
            ("Location relative", .response(ProbeResponse(status: 302, location: "/login")), nil, standard, .portal, nil),
            ("200 login page with a javascript: Location", .response(ProbeResponse(status: 200, location: "javascript:x", bodyPrefix: "<html>", bodyLength: 900)), nil, standard, .portal, nil),
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

    /// NetworkManager's own check where reachd's probes have no verdict, and what decided it.
    func testNetworkManagersCheck() {
        let stall = DataStall(since: 1000, sockets: 3, destinations: 3, users: 1)
        func nm(_ ipv4: Connectivity, _ ipv6: Connectivity = .unknown) -> NetworkManagerDevice {
            NetworkManagerDevice(ipv4: ipv4, ipv6: ipv6)
        }
        let cases: [(String, InterfaceConnectivity, Connectivity, ConnectivityCause?)] = [
            ("NM portal, nothing probed", InterfaceConnectivity(networkManager: nm(.portal)), .portal, .networkManager),
            ("NM limited, nothing probed", InterfaceConnectivity(networkManager: nm(.limited)), .limited, .networkManager),
            ("NM full on IPv6 only", InterfaceConnectivity(networkManager: nm(.unknown, .full)), .full, .networkManager),
            ("NM portal on one family wins over full on the other", InterfaceConnectivity(networkManager: nm(.full, .portal)), .portal, .networkManager),
            ("NM unknown says nothing", InterfaceConnectivity(networkManager: nm(.unknown)), .unknown, nil),
            ("reachd's probes win over NM", InterfaceConnectivity(ipv4: .full, networkManager: nm(.portal)), .full, nil),
            ("reachd's limited wins over NM's full", InterfaceConnectivity(ipv4: .limited, networkManager: nm(.full)), .limited, nil),
            ("the API's captive answer wins over NM", InterfaceConnectivity(captivePortal: CaptivePortal(apiURI: "https://p.test/", captive: true),
                                                                            networkManager: nm(.full)), .portal, nil),
            ("a stall makes NM's full limited", InterfaceConnectivity(dataStall: stall, networkManager: nm(.full)), .limited, .dataStall),
            ("NM's portal stands over a stall", InterfaceConnectivity(dataStall: stall, networkManager: nm(.portal)), .portal, .networkManager),
            ("a probe round after the stall clears it; NM not asked",
             InterfaceConnectivity(ipv4: .full, lastChecked: 2000, dataStall: stall, networkManager: nm(.limited)), .full, nil),
        ]
        for (name, facts, connectivity, cause) in cases {
            XCTAssertEqual(facts.combined, connectivity, name)
            XCTAssertEqual(facts.cause, cause, name)
            XCTAssertEqual(facts.requiresIntervention, connectivity == .portal, name)
            XCTAssertEqual(facts.causeSince, cause == .dataStall ? 1000 : nil, name)
        }
    }

    /// NetworkManager's D-Bus enums, as reachd reads them.
    func testNetworkManagerValues() {
        let connectivity: [(UInt32, Connectivity)] = [(0, .unknown), (1, .none), (2, .portal), (3, .limited), (4, .full), (5, .unknown), (.max, .unknown)]
        for (raw, expected) in connectivity { XCTAssertEqual(NetworkManagerDevice.connectivity(raw), expected, "NMConnectivityState \(raw)") }
        let metered: [(UInt32, Bool?)] = [(0, nil), (1, true), (2, false), (3, true), (4, nil), (5, nil), (.max, nil)]
        for (raw, expected) in metered { XCTAssertEqual(NetworkManagerDevice.metered(raw), expected, "NMMetered \(raw)") }
        XCTAssertEqual(NetworkManagerDevice(ip4Connectivity: 2, ip6Connectivity: 4, metered: 3), NetworkManagerDevice(ipv4: .portal, ipv6: .full, metered: true))
    }

    /// What a finished round writes and what its schedule hears, case by case.
    func testSettlingARound() {
        let api = "https://portal.test/api"
        let full = ProbeJudgement(connectivity: .full)
        let redirected = ProbeJudgement(connectivity: .portal, portalURL: "http://portal.test/login")
        let limited = ProbeJudgement(connectivity: .limited)
        let unjudged = ProbeJudgement(connectivity: .unknown)
        let captive = CaptivePortal(captive: true, userPortalURL: "https://portal.test/login")
        let open = CaptivePortal(captive: false, secondsRemaining: 600)
        let known = CaptivePortal(apiURI: api, captive: true, userPortalURL: "https://portal.test/login")
        let cases: [(String, ProbeJudgement, CaptivePortal?, String?, Bool, InterfaceConnectivity, InterfaceConnectivity, Connectivity, Int?)] = [
            ("probe full, nothing announced", full, nil, nil, true, InterfaceConnectivity(),
             InterfaceConnectivity(ipv4: .full, lastChecked: 9), .full, nil),
            ("a redirect records the login page", redirected, nil, nil, true, InterfaceConnectivity(),
             InterfaceConnectivity(ipv4: .portal, lastChecked: 9, captivePortal: CaptivePortal(captive: true, userPortalURL: "http://portal.test/login")), .portal, nil),
            ("logged in: the portal facts go", full, nil, nil, true, InterfaceConnectivity(ipv4: .portal, captivePortal: CaptivePortal(captive: true)),
             InterfaceConnectivity(ipv4: .full, lastChecked: 9), .full, nil),
            ("the other family still in the portal keeps the facts", full, nil, nil, true,
             InterfaceConnectivity(ipv6: .portal, captivePortal: CaptivePortal(captive: true, userPortalURL: "http://x.test/")),
             InterfaceConnectivity(ipv4: .full, ipv6: .portal, lastChecked: 9, captivePortal: CaptivePortal(captive: true, userPortalURL: "http://x.test/")), .full, nil),
            ("an announced API, not answered, with probes: only its URI", limited, nil, api, true, InterfaceConnectivity(),
             InterfaceConnectivity(ipv4: .limited, lastChecked: 9, captivePortal: CaptivePortal(apiURI: api)), .limited, nil),
            ("the API says captive: authoritative over a full probe", full, captive, api, true, InterfaceConnectivity(),
             InterfaceConnectivity(ipv4: .full, lastChecked: 9, captivePortal: known), .portal, nil),
            ("API only, captive", unjudged, captive, api, false, InterfaceConnectivity(),
             InterfaceConnectivity(lastChecked: 9, captivePortal: known), .portal, nil),
            ("API only, open: full, and look again before the session ends", unjudged, open, api, false, InterfaceConnectivity(),
             InterfaceConnectivity(lastChecked: 9, captivePortal: CaptivePortal(apiURI: api, captive: false, secondsRemaining: 600)), .full, 600),
            ("API only, no answer: what was known stays, retried as limited", unjudged, nil, api, false, InterfaceConnectivity(captivePortal: known),
             InterfaceConnectivity(lastChecked: 9, captivePortal: known), .limited, nil),
        ]
        for (name, judgement, answer, uri, probes, before, after, heard, session) in cases {
            let outcome = ProbeVerdict.settle(judgement, apiAnswer: answer, apiURI: uri, family: .ipv4, probesEnabled: probes, facts: before, checkedAt: 9)
            XCTAssertEqual(outcome.facts, after, name)
            XCTAssertEqual(outcome.scheduleVerdict, heard, name)
            XCTAssertEqual(outcome.sessionSecondsLeft, session, name)
        }
    }
}
