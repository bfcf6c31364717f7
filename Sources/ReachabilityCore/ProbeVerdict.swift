/// What one round of connectivity probes on one interface and family means: the HTTP
/// check's and the HTTPS check's outcomes in, a `Connectivity` (and a portal's address)
/// out. Pure, and the one place that decides "full", "portal", "partial" or "limited".
///
/// The rules, from the peers' sources (NetworkManager, Android, ChromeOS's shill):
/// - HTTP answers what was expected (204 by default; or a configured status, body prefix or
///   header, NetworkManager-style): the HTTP check passed.
/// - HTTP redirects (3xx with a Location; redirects are never followed): a portal, whose
///   login page is that Location (shill's portal-redirect) when `WebURI` accepts it as an
///   absolute `http` or `https` URI; any other Location (relative, `javascript:`, controls,
///   a bad port) still means a portal, one without a login page.
/// - HTTP answers 200–399 with anything else: a portal (Android). Except a 200 whose body
///   is at most 4 bytes when a body was expected: a broken proxy, not a portal (Android:
///   failed).
/// - HTTP errors, other statuses, timeouts, refused connections, names that do not resolve:
///   the HTTP check failed.
/// - HTTPS passes when the TLS handshake satisfies the trust policy and the server answers
///   what was expected; anything else fails it (a portal cannot fake a trusted certificate).
/// - Portal wins: a portal seen over HTTP is a portal whatever HTTPS did.
/// - Both passed (or the only one configured passed): full. HTTP passed and HTTPS failed:
///   partial. HTTPS passed and HTTP failed: full (something filters port 80, the internet
///   is there; Android validates on HTTPS). Both failed: limited.
package enum ProbeVerdict {
    /// The connectivity for one round; nil checks were not configured.
    package static func judge(http: ProbeOutcome?, https: ProbeOutcome?, expect: ProbeExpectation) -> ProbeJudgement {
        let plain = http.map { classify($0, expect: expect) }
        let secure = https.map { classify($0, expect: expect) }
        if case let .portal(location)? = plain { return ProbeJudgement(connectivity: .portal, portalURL: location) }
        switch (plain, secure) {
        case (nil, nil): return ProbeJudgement(connectivity: .unknown)
        case (_, .passed?), (.passed?, nil): return ProbeJudgement(connectivity: .full)
        case (.passed?, _): return ProbeJudgement(connectivity: .partial)
        // An HTTPS redirect or odd answer is no portal: a portal cannot present a trusted
        // certificate, so it is a failed check like any other.
        default: return ProbeJudgement(connectivity: .limited)
        }
    }

    /// One interface's connectivity from its two families' verdicts and its captive-portal
    /// facts. A portal wins (someone must act, whichever family met it), and a captive
    /// answer from the network's RFC 8908 API is authoritative; otherwise the better
    /// family's verdict stands (one family reaching the internet is the internet). When the
    /// probes know nothing, NetworkManager's own check stands, as its GLib backend says it.
    ///
    /// A data stall makes it `limited` unless a probe round that finished since the stall
    /// began found better: the probes reached a server, the stalled sockets did not.
    package static func combine(_ facts: InterfaceConnectivity) -> Connectivity {
        let (verdict, _) = verdict(facts)
        return isStalled(facts, verdict: verdict) ? .limited : verdict
    }

    /// What decided `combine` besides the probes: a data stall no later probe round
    /// contradicted, else NetworkManager's check; nil when the probes' verdict stands.
    package static func cause(_ facts: InterfaceConnectivity) -> ConnectivityCause? {
        let (verdict, fromNetworkManager) = verdict(facts)
        if isStalled(facts, verdict: verdict) { return .dataStall }
        return fromNetworkManager ? .networkManager : nil
    }

    /// The verdict before any stall: reachd's portal facts and probes, else (they know
    /// nothing) NetworkManager's own check, and whether NetworkManager gave it.
    private static func verdict(_ facts: InterfaceConnectivity) -> (Connectivity, fromNetworkManager: Bool) {
        if facts.captivePortal?.captive == true || facts.ipv4 == .portal || facts.ipv6 == .portal { return (.portal, false) }
        let probed = better(facts.ipv4, facts.ipv6)
        if probed == .unknown, let theirs = facts.networkManager?.verdict, theirs != .unknown { return (theirs, true) }
        return (probed, false)
    }

    private static func isStalled(_ facts: InterfaceConnectivity, verdict: Connectivity) -> Bool {
        guard let since = facts.dataStall?.since, verdict != .portal else { return false }
        // Only reachd's own round can contradict a stall: it ran through the same path.
        if let checked = facts.lastChecked, checked >= since, rank(better(facts.ipv4, facts.ipv6)) > rank(.limited) { return false }
        return true
    }

    /// The better of two verdicts.
    static func better(_ one: Connectivity, _ other: Connectivity) -> Connectivity {
        rank(one) >= rank(other) ? one : other
    }

    private static func rank(_ connectivity: Connectivity) -> Int {
        switch connectivity {
        case .unknown: return 0
        case .none: return 1
        case .local: return 2
        case .limited: return 3
        case .portal: return 4
        case .partial: return 5
        case .full: return 6
        }
    }

    /// What one finished round makes of an interface's facts, and what its schedule hears.
    ///
    /// - The portal facts: the API's answer when it gave one; else what this family's probe
    ///   met (a portal, with the redirect's login page); else only the announced URI. What
    ///   was known stays while the other family still meets a portal, or, without probes,
    ///   when the API did not answer.
    /// - The family's verdict is the probes' (left as it is when only the API is asked).
    /// - The schedule hears the API's word when it spoke (captive: portal; open, without
    ///   probes: full), else the probes' (without probes, an API that did not answer: limited);
    ///   an open session's `secondsRemaining` is when to look again.
    package static func settle(
        _ judgement: ProbeJudgement, apiAnswer: CaptivePortal?, apiURI: String?, family: AddressFamily,
        probesEnabled: Bool, facts previous: InterfaceConnectivity, checkedAt time: Int
    ) -> RoundOutcome {
        var facts = previous
        let otherFamilyInPortal = previous[family == .ipv4 ? .ipv6 : .ipv4] == .portal
        if var apiAnswer {
            apiAnswer.apiURI = apiURI
            facts.captivePortal = apiAnswer
        } else if judgement.connectivity == .portal {
            facts.captivePortal = CaptivePortal(apiURI: apiURI, captive: true, userPortalURL: judgement.portalURL)
        } else if probesEnabled && !otherFamilyInPortal {
            facts.captivePortal = apiURI.map { CaptivePortal(apiURI: $0) }
        }
        if probesEnabled { facts[family] = judgement.connectivity }
        facts.lastChecked = time

        let heard: Connectivity
        switch apiAnswer?.captive {
        case true?: heard = .portal
        case false? where !probesEnabled: heard = .full
        case nil where !probesEnabled: heard = .limited
        default: heard = judgement.connectivity
        }
        let sessionLeft = apiAnswer?.captive == false ? apiAnswer?.secondsRemaining : nil
        return RoundOutcome(facts: facts, scheduleVerdict: heard, sessionSecondsLeft: sessionLeft)
    }

    /// One check's result on its own.
    enum Check: Equatable {
        case passed
        case portal(String?)
        case failed
    }

    static func classify(_ outcome: ProbeOutcome, expect: ProbeExpectation) -> Check {
        guard case let .response(response) = outcome else { return .failed }
        if expect.matches(response) { return .passed }
        let loginPage = response.location.flatMap { try? WebURI.validate($0, schemes: [.http, .https]).get().text }
        switch response.status {
        case 300...399 where response.location != nil:
            return .portal(loginPage)
        case 200 where expect.bodyPrefix != nil && response.bodyLength <= 4:
            return .failed
        case 200...399:
            return .portal(loginPage)
        default:
            return .failed
        }
    }
}

/// What one probe request came to.
package enum ProbeOutcome: Sendable, Hashable {
    /// The server answered (redirects are not followed).
    case response(ProbeResponse)
    /// No answer within the timeout.
    case timedOut
    /// The connection failed (refused, unreachable, reset) or the name did not resolve; the
    /// text says which, for the log.
    case failed(String)
    /// HTTPS only: the server's certificate chain does not satisfy the trust policy.
    case untrusted(String)
}

/// The parts of an HTTP answer the verdict looks at.
package struct ProbeResponse: Sendable, Hashable {
    /// The status code.
    package var status: Int
    /// The `Location` header, if any.
    package var location: String?
    /// Header names (lowercased) and values.
    package var headers: [String: String]
    /// The first bytes of the body (enough to compare with the expected prefix).
    package var bodyPrefix: String
    /// The body's length as received (up to the probe's read limit).
    package var bodyLength: Int

    /// Creates a response.
    package init(status: Int, location: String? = nil, headers: [String: String] = [:], bodyPrefix: String = "", bodyLength: Int = 0) {
        self.status = status
        self.location = location
        self.headers = headers
        self.bodyPrefix = bodyPrefix
        self.bodyLength = bodyLength
    }
}

/// What a probe endpoint answers when the internet is there (NetworkManager-compatible):
/// a status (204 by default), or a body that starts with a text, or a header with a value.
package struct ProbeExpectation: Sendable, Hashable {
    /// The expected status when neither a body prefix nor a header is configured.
    package var status: Int
    /// The body must start with this (NetworkManager's `response=`); nil: not checked.
    package var bodyPrefix: String?
    /// A header (name lowercased) that must carry this value (e.g.
    /// `x-networkmanager-status: online`); nil: not checked.
    package var header: (name: String, value: String)?

    /// An expectation; by default "204 No Content".
    package init(status: Int = 204, bodyPrefix: String? = nil, header: (name: String, value: String)? = nil) {
        self.status = status
        self.bodyPrefix = bodyPrefix
        self.header = header
    }

    /// Whether `response` is what the endpoint answers when the internet is there.
    func matches(_ response: ProbeResponse) -> Bool {
        if let header, response.headers[header.name] == header.value { return true }
        if let bodyPrefix {
            return response.status == 200 && response.bodyLength > 0 && response.bodyPrefix.hasPrefix(bodyPrefix)
        }
        return header == nil && response.status == status
    }

    /// Same status, body prefix and header.
    package static func == (left: ProbeExpectation, right: ProbeExpectation) -> Bool {
        left.status == right.status && left.bodyPrefix == right.bodyPrefix
            && left.header?.name == right.header?.name && left.header?.value == right.header?.value
    }

    /// Hashes what `==` compares.
    package func hash(into hasher: inout Hasher) {
        hasher.combine(status)
        hasher.combine(bodyPrefix)
        hasher.combine(header?.name)
        hasher.combine(header?.value)
    }
}

/// A round's verdict: the connectivity, and a portal's login page when one redirected.
package struct ProbeJudgement: Sendable, Hashable {
    /// What the round found.
    package var connectivity: Connectivity
    /// The Location a portal redirected to.
    package var portalURL: String?

    /// Creates a judgement.
    package init(connectivity: Connectivity, portalURL: String? = nil) {
        self.connectivity = connectivity
        self.portalURL = portalURL
    }
}

/// What a finished round comes to (`ProbeVerdict.settle`).
package struct RoundOutcome: Sendable, Hashable {
    /// The interface's facts after the round.
    package var facts: InterfaceConnectivity
    /// What the round's `ProbeSchedule` is told.
    package var scheduleVerdict: Connectivity
    /// Seconds left in an open RFC 8908 session: look again before they run out.
    package var sessionSecondsLeft: Int?
}
