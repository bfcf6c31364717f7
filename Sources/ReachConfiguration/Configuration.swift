// Over 500 lines because it is the whole configuration schema, one struct per TOML table
// and the checked values they use, so that a table is added in one place (Sources/README.md).

import FoundationEssentials
import Logging
import ReachabilityCore

/// What `reachd.toml` configures: one struct per TOML table, each property at its built-in
/// default, which is also what a key left out of the file means.
///
/// Values come from the file alone; `reachd` lets its command line win over them (command
/// line > config file > defaults). To add a table: a struct like `Log`, a property, a
/// `CodingKeys` case and a `read` line in `init(from:)`.
package struct ReachdConfiguration: Sendable, Equatable, Decodable {
    /// Where the system configuration file lives.
    package static let defaultPath = "/etc/reachd/reachd.toml"

    /// `[socket]`.
    package var socket = Socket()
    /// `[log]`.
    package var log = Log()
    /// `[interfaces]`.
    package var interfaces = Interfaces()
    /// `[netlink]`.
    package var netlink = Netlink()
    /// `[probe]`.
    package var probe = Probe()
    /// `[captive-portal]`.
    package var captivePortal = CaptivePortalSettings()
    /// `[network-manager]`.
    package var networkManager = NetworkManager()
    /// `[metrics]`.
    package var metrics = Metrics()
    /// `[stall]`
    package var stall = Stall()
    /// `[targets]`.
    package var targets = Targets()
    /// `[nat64]`.
    package var nat64 = NAT64()

    /// The built-in defaults.
    package init() {}

    /// Reads every table. The first problem in each table (or all its unknown keys) and every
    /// unknown table are thrown together (as `ConfigurationProblems`), so one run names them all.
    package init(from decoder: any Decoder) throws {
        var problems = try decoder.unknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func read<Table: Setting>(_ key: CodingKeys, _ table: inout Table) {
            do {
                table = try container.setting(Table.self, key) ?? table
            } catch {
                problems += (error as? ConfigurationProblems)?.errors ?? [error]
            }
        }
        read(.socket, &socket)
        read(.log, &log)
        read(.interfaces, &interfaces)
        read(.netlink, &netlink)
        read(.probe, &probe)
        read(.captivePortal, &captivePortal)
        read(.networkManager, &networkManager)
        read(.metrics, &metrics)
        read(.stall, &stall)
        read(.targets, &targets)
        read(.nat64, &nat64)
        if !problems.isEmpty { throw ConfigurationProblems(errors: problems) }
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case socket, log, interfaces, netlink, probe, metrics, stall, targets, nat64
        case captivePortal = "captive-portal", networkManager = "network-manager"
    }

    // Each table reads the keys present (the others keep their defaults), then rejects unknown
    // ones: within a table, decoding stops at the first bad value.

    /// `[socket]`: the Varlink socket file.
    package struct Socket: Sendable, Equatable, ConfigurationTable {
        /// `path`: nil means computed (`SocketLocation.daemonDefault`).
        package var path: String?
        /// `mode`: permission bits of the socket file.
        package var mode: UInt32 = 0o666

        package init() {}
        /// Reads `path` and `mode`.
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            path = try container.setting(SocketPath.self, .path)?.value ?? path
            mode = try container.setting(FileMode.self, .mode)?.value ?? mode
            try decoder.rejectUnknownKeys(CodingKeys.self)
        }
        private enum CodingKeys: String, CodingKey, CaseIterable { case path, mode }
    }

    /// `[log]`.
    package struct Log: Sendable, Equatable, ConfigurationTable {
        /// `level`: the least severe level logged.
        package var level: Logger.Level = .info

        package init() {}
        /// Reads `level`.
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            level = try container.setting(Choice<Logger.Level>.self, .level)?.value ?? level
            try decoder.rejectUnknownKeys(CodingKeys.self)
        }
        private enum CodingKeys: String, CodingKey, CaseIterable { case level }
    }

    /// `[interfaces]`: which interfaces to leave out, and per-interface overrides.
    package struct Interfaces: Sendable, Equatable, ConfigurationTable {
        /// `ignore` (globs), `hotspot-address-plan` and `[[interfaces.override]]`, as the engine applies them.
        package var policy = InterfacePolicy()

        package init() {}
        /// Reads `ignore`, `hotspot-address-plan` and `override`.
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let ignore = try container.setting([InterfaceGlob].self, .ignore) { policy.ignoredPatterns = ignore.map(\.value) }
            if let overrides = try container.setting([Override].self, .override) { policy.overrides = overrides.map(\.value) }
            policy.hotspotAddressPlan = try container.setting(Bool.self, .hotspotAddressPlan) ?? policy.hotspotAddressPlan
            try decoder.rejectUnknownKeys(CodingKeys.self)
        }
        private enum CodingKeys: String, CodingKey, CaseIterable {
            case ignore, override
            case hotspotAddressPlan = "hotspot-address-plan"
        }

        /// One `[[interfaces.override]]`: `match` is required, the rest optional.
        struct Override: ConfigurationTable {
            var value: InterfacePolicy.Override

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                guard let match = try container.setting(InterfaceGlob.self, .match) else {
                    throw DecodingError.keyNotFound(CodingKeys.match, .init(
                        codingPath: decoder.codingPath,
                        debugDescription: "missing required key \"match\" (the interface-name glob this override applies to)"
                    ))
                }
                value = InterfacePolicy.Override(
                    pattern: match.value,
                    type: try container.setting(Choice<InterfaceType>.self, .type)?.value,
                    isExpensive: try container.setting(Bool.self, .expensive),
                    isConstrained: try container.setting(Bool.self, .constrained),
                    isIgnored: try container.setting(Bool.self, .ignore)
                )
                try decoder.rejectUnknownKeys(CodingKeys.self)
            }
            private enum CodingKeys: String, CodingKey, CaseIterable { case match, type, expensive, constrained, ignore }
        }
    }

    /// `[netlink]`: the rtnetlink socket.
    package struct Netlink: Sendable, Equatable, ConfigurationTable {
        /// The sizes `receive-buffer-size` accepts: 64 KiB…1 GiB.
        package static let acceptedReceiveBufferSizes = (64 << 10)...(1 << 30)
        /// `receive-buffer-size`, in bytes.
        package var receiveBufferSize = 8 << 20

        package init() {}
        /// Reads `receive-buffer-size`.
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            receiveBufferSize = try container.setting(Bounded<ReceiveBufferBytes>.self, .receiveBufferSize)?.value ?? receiveBufferSize
            try decoder.rejectUnknownKeys(CodingKeys.self)
        }
        private enum CodingKeys: String, CodingKey, CaseIterable { case receiveBufferSize = "receive-buffer-size" }
    }
}

extension ReachdConfiguration {
    /// `[probe]`: active connectivity checks (NetworkManager-compatible). Off until `url` or
    /// `https-url` names an endpoint: reachd sends nothing to a server nobody configured.
    package struct Probe: Sendable, Equatable, ConfigurationTable {
        /// `url`: the HTTP check (`http://…`).
        package var url: HTTPEndpoint?
        /// `https-url`: the HTTPS check (`https://…`), run in parallel with the HTTP one.
        package var httpsURL: HTTPEndpoint?
        /// `expect-status`, `expect-body`, `expect-header`: what the endpoint answers online.
        package var expectation = ProbeExpectation()
        /// `timeout`: seconds one check may take, connection and answer together.
        package var timeout: Duration = .seconds(10)
        /// `initial-delay`, `maximum-delay`, `recheck-interval` (0: never).
        package var schedule = ProbeSchedule.Configuration(recheckInterval: Self.defaultRecheckInterval)
        /// How often a `full` interface is checked again unless `recheck-interval` says
        /// otherwise: NetworkManager's default. A lost upstream (a router that stops
        /// forwarding, a dead VPN server) changes nothing the kernel reports.
        package static let defaultRecheckInterval: Duration = .seconds(300)
        /// `families`: which address families are checked, each on its own.
        package var families: [AddressFamily] = [.ipv4, .ipv6]
        /// `[probe.trust]`: how the HTTPS endpoint proves who it is.
        package var trust = TrustPolicy.systemDefault

        /// Whether any check is configured.
        package var isEnabled: Bool { url != nil || httpsURL != nil }

        package init() {}
        /// Reads the keys present.
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            url = try container.setting(HTTPEndpoint.self, .url)
            httpsURL = try container.setting(HTTPEndpoint.self, .httpsURL)
            if let url, url.isHTTPS { throw container.invalid(.url, "\(url) is https; name it as https-url (url is the plain HTTP check)") }
            if let httpsURL, !httpsURL.isHTTPS { throw container.invalid(.httpsURL, "\(httpsURL) is not https") }
            expectation.status = try container.setting(Bounded<HTTPStatus>.self, .expectStatus)?.value ?? expectation.status
            expectation.bodyPrefix = try container.setting(String.self, .expectBody)
            expectation.header = try container.setting(ExpectedHeader.self, .expectHeader)?.value
            timeout = try container.setting(Bounded<Seconds>.self, .timeout)?.value ?? timeout
            schedule.initialDelay = try container.setting(Bounded<Seconds>.self, .initialDelay)?.value ?? schedule.initialDelay
            schedule.maximumDelay = try container.setting(Bounded<Seconds>.self, .maximumDelay)?.value ?? schedule.maximumDelay
            if schedule.maximumDelay < schedule.initialDelay {
                throw container.invalid(.maximumDelay, "shorter than initial-delay")
            }
            if let recheck = try container.setting(Bounded<SecondsOrNever>.self, .recheckInterval) {
                schedule.recheckInterval = recheck.value
            }
            if let families = try container.setting([Choice<AddressFamily>].self, .families) {
                if families.isEmpty { throw container.invalid(.families, "empty (expected \"ipv4\", \"ipv6\" or both)") }
                self.families = AddressFamily.allCases.filter { family in families.contains { $0.value == family } }
            }
            trust = try container.setting(Trust.self, .trust)?.value ?? trust
            try decoder.rejectUnknownKeys(CodingKeys.self)
        }
        enum CodingKeys: String, CodingKey, CaseIterable {
            case url, families, timeout, trust
            case httpsURL = "https-url", expectStatus = "expect-status", expectBody = "expect-body"
            case expectHeader = "expect-header", initialDelay = "initial-delay", maximumDelay = "maximum-delay"
            case recheckInterval = "recheck-interval"
        }
    }

    /// `[captive-portal]`: captive portals the network announces (RFC 8910) and their API
    /// (RFC 8908).
    package struct CaptivePortalSettings: Sendable, Equatable, ConfigurationTable {
        /// `router-advertisements`: read RA option 37 (listening only; on by default).
        package var routerAdvertisements = true
        /// `networkd`: ask systemd-networkd (when it runs) which portal DHCP or RAs announced.
        package var networkd = true
        /// `fetch-api`: ask an announced API whether the session is captive. Off by default:
        /// the API is a server the network, not the operator, named.
        package var fetchAPI = false
        /// `[captive-portal.trust]`: how the API proves who it is.
        package var trust = TrustPolicy.systemDefault

        package init() {}
        /// Reads the keys present.
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            routerAdvertisements = try container.setting(Bool.self, .routerAdvertisements) ?? routerAdvertisements
            networkd = try container.setting(Bool.self, .networkd) ?? networkd
            fetchAPI = try container.setting(Bool.self, .fetchAPI) ?? fetchAPI
            trust = try container.setting(Trust.self, .trust)?.value ?? trust
            try decoder.rejectUnknownKeys(CodingKeys.self)
        }
        enum CodingKeys: String, CodingKey, CaseIterable {
            case trust, networkd
            case routerAdvertisements = "router-advertisements", fetchAPI = "fetch-api"
        }
    }

    /// `[network-manager]`: what NetworkManager, when it runs, knows and reachd merges in.
    package struct NetworkManager: Sendable, Equatable, ConfigurationTable {
        /// `read`: read its connectivity and each device's `Metered` over D-Bus (read-only,
        /// nothing asked while it is not on the bus).
        package var read = true

        package init() {}
        /// Reads `read`.
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            read = try container.setting(Bool.self, .read) ?? read
            try decoder.rejectUnknownKeys(CodingKeys.self)
        }
        private enum CodingKeys: String, CodingKey, CaseIterable { case read }
    }

    /// `[metrics]`: where the Prometheus metrics go. Nothing by default.
    package struct Metrics: Sendable, Equatable, ConfigurationTable {
        /// `listen`: serve `GET /metrics` over HTTP here.
        package var listen: MetricsListenAddress?
        /// `textfile-directory`: write `reachd.prom` here on every change, for
        /// node_exporter's textfile collector.
        package var textfileDirectory: String?

        package init() {}

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            listen = try container.setting(MetricsListenAddress.self, .listen)
            if let directory = try container.setting(String.self, .textfileDirectory) {
                guard directory.hasPrefix("/"), !directory.utf8.contains(0) else {
                    throw container.invalid(.textfileDirectory, "\"\(directory)\" is not an absolute path")
                }
                textfileDirectory = directory
            }
            try decoder.rejectUnknownKeys(CodingKeys.self)
        }

        private enum CodingKeys: String, CodingKey, CaseIterable {
            case listen
            case textfileDirectory = "textfile-directory"
        }
    }

    struct Trust: ConfigurationTable {
        var value: TrustPolicy

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            do {
                value = try TrustPolicy(
                    pinning: try container.setting(Choice<TrustPolicy.Pinning>.self, .pinning)?.value ?? .none,
                    pinnedCertificates: try container.setting([String].self, .pinnedCertificates) ?? [],
                    publicKeyPins: try container.setting([String].self, .publicKeyPins) ?? [],
                    validatesDomainName: try container.setting(Bool.self, .validatesDomainName) ?? true,
                    allowInvalidCertificates: try container.setting(Bool.self, .allowInvalidCertificates) ?? false
                )
            } catch let problem as TrustPolicy.Problem {
                throw decoder.invalid(problem.description)
            }
            try decoder.rejectUnknownKeys(CodingKeys.self)
        }
        enum CodingKeys: String, CodingKey, CaseIterable {
            case pinning
            case pinnedCertificates = "pinned-certificates", publicKeyPins = "public-key-pins"
            case validatesDomainName = "validates-domain-name", allowInvalidCertificates = "allow-invalid-certificates"
        }
    }
}

/// An `http://` or `https://` URL with a host: a probe endpoint or an RFC 8908 API, as
/// `WebURI` checks it (port 1–65535, RFC 3986 characters, no user info, 2,048 bytes).
package struct HTTPEndpoint: Sendable, Hashable, Setting, CustomStringConvertible {
    package static let expected = "a string"
    /// `https`.
    package var isHTTPS: Bool
    /// The host: a name, or an address literal (without brackets).
    package var host: String
    /// The port (80 or 443 unless given).
    package var port: Int
    /// Path and query, as sent in the request line.
    package var target: String
    /// The URL as written.
    package var description: String

    /// Parses `text`; nil unless `WebURI` accepts it as an `http` or `https` URI.
    package init?(_ text: String) {
        guard case let .success(uri) = WebURI.validate(text, schemes: [.http, .https]) else { return nil }
        self.init(uri)
    }

    /// The endpoint a checked URI names.
    package init(_ uri: WebURI) {
        isHTTPS = uri.scheme == .https
        host = uri.host
        port = uri.port
        target = uri.target
        description = uri.text
    }

    /// Reads a URL string; refuses anything `WebURI` refuses, saying why (a port out of
    /// range would otherwise pass here and stop reachd at its first probe).
    package init(from decoder: any Decoder) throws {
        let text: String = try decoder.scalar()
        switch WebURI.validate(text, schemes: [.http, .https]) {
        case let .success(uri): self.init(uri)
        case let .failure(problem):
            throw decoder.invalid("\"\(UntrustedText.escaped(text, limit: 120))\" is not a usable http:// or https:// URL: \(problem)")
        }
    }

    /// The `Host` header: the host, bracketed when it is an IPv6 literal, with a port that is not the scheme's.
    package var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (isHTTPS ? 443 : 80) ? name : "\(name):\(port)"
    }
}

// MARK: - Checked values: each refuses a bad value in `init(from:)`, with the message users see.

/// `[metrics] listen`: `ADDRESS:PORT` (an IP literal, IPv6 in brackets) or an absolute Unix
/// socket path. No host names: the endpoint is bound at start, before any resolver is asked.
package enum MetricsListenAddress: Sendable, Hashable, Setting, CustomStringConvertible {
    package static let expected = "a string"
    /// A TCP address and port.
    case tcp(address: IPAddress, port: Int)
    /// A Unix stream socket.
    case unix(path: String)

    /// Parses `text`; nil for anything else.
    package init?(_ text: String) {
        if text.hasPrefix("/") {
            guard !text.hasSuffix("/"), !text.utf8.contains(0), text.utf8.count <= 107 else { return nil }
            self = .unix(path: text)
            return
        }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else {
            return nil
        }
        var host = text[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() } else if host.contains(":") { return nil }
        guard let address = IPAddress(String(host)) else { return nil }
        self = .tcp(address: address, port: port)
    }

    package init(from decoder: any Decoder) throws {
        let text: String = try decoder.scalar()
        guard let address = MetricsListenAddress(text) else {
            throw decoder.invalid("\"\(text)\" is neither ADDRESS:PORT (an IP address, IPv6 in brackets, and a port 1–65535) nor an absolute socket path")
        }
        self = address
    }

    /// As written in the configuration (IPv6 in brackets).
    package var description: String {
        switch self {
        case let .tcp(address, port): return address.family == .ipv6 ? "[\(address)]:\(port)" : "\(address):\(port)"
        case let .unix(path): return path
        }
    }
}

/// `[socket] path`: absolute, not a directory, no NUL, short enough for `sockaddr_un`
/// (107 bytes and a NUL).
struct SocketPath: Setting {
    package static let expected = "a string"
    package var value: String

    init(from decoder: any Decoder) throws {
        value = try decoder.scalar()
        let length = value.utf8.count
        if !value.hasPrefix("/") { throw decoder.invalid("\"\(value)\" is not an absolute path") }
        if value.hasSuffix("/") { throw decoder.invalid("\"\(value)\" names a directory, not a socket file") }
        if value.utf8.contains(0) { throw decoder.invalid("the path contains a NUL byte") }
        if length > 107 {
            throw decoder.invalid("the path is \(length) bytes long, more than a Unix socket address holds (107)")
        }
    }
}

/// `[socket] mode`: "666" or "0666", up to 0777; "0o666", "1777" or "0888" are refused.
struct FileMode: Setting {
    package static let expected = "a string"
    package var value: UInt32

    init(from decoder: any Decoder) throws {
        let text: String = try decoder.scalar()
        guard (3...4).contains(text.count), text.allSatisfy({ ("0"..."7").contains($0) }),
              let mode = UInt32(text, radix: 8), mode <= 0o777
        else {
            throw decoder.invalid("\"\(text)\" is not a file mode (expected 3 or 4 octal digits up to 0777, such as \"0666\")")
        }
        value = mode
    }
}

/// An interface-name glob: not empty, and without whitespace or "/", which no interface name has.
struct InterfaceGlob: Setting {
    package static let expected = "a string"
    package var value: String

    init(from decoder: any Decoder) throws {
        value = try decoder.scalar()
        if value.isEmpty { throw decoder.invalid("empty pattern (expected an interface-name glob such as \"docker*\")") }
        if value.contains(where: { $0.isWhitespace || $0 == "/" }) {
            throw decoder.invalid("pattern \"\(value)\" can never match: interface names contain no whitespace or \"/\"")
        }
    }
}

extension ReachdConfiguration {
    /// `[stall]`: whether the interfaces' TCP traffic is stalled, read from the kernel's socket
    /// state (sock_diag) while someone listens and the path is satisfied. Sends nothing.
    package struct Stall: Sendable, Equatable, ConfigurationTable {
        /// `enabled`: poll the sockets at all.
        package var enabled = true
        /// `poll-interval`: how often the sockets are read while it runs.
        package var pollInterval: Duration = .seconds(10)
        /// `fail-percent`, `minimum-segments`, `syn-sent-minimum`, `minimum-destinations`.
        package var rule = DataStallRule()
        /// `socket-limit`: the most sockets one poll keeps; the rest are skipped.
        package var socketLimit = 4096

        package init() {}
        /// Reads the keys present.
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            enabled = try container.setting(Bool.self, .enabled) ?? enabled
            pollInterval = try container.setting(Bounded<Seconds>.self, .pollInterval)?.value ?? pollInterval
            rule.failPercent = try container.setting(Bounded<Percent>.self, .failPercent)?.value ?? rule.failPercent
            rule.minimumSegments = try container.setting(Bounded<Count>.self, .minimumSegments)?.value ?? rule.minimumSegments
            rule.synSentMinimum = try container.setting(Bounded<Count>.self, .synSentMinimum)?.value ?? rule.synSentMinimum
            rule.minimumDestinations = try container.setting(Bounded<Count>.self, .minimumDestinations)?.value ?? rule.minimumDestinations
            socketLimit = try container.setting(Bounded<Count>.self, .socketLimit)?.value ?? socketLimit
            try decoder.rejectUnknownKeys(CodingKeys.self)
        }
        enum CodingKeys: String, CodingKey, CaseIterable {
            case enabled
            case pollInterval = "poll-interval", failPercent = "fail-percent", minimumSegments = "minimum-segments"
            case synSentMinimum = "syn-sent-minimum", minimumDestinations = "minimum-destinations", socketLimit = "socket-limit"
        }
    }
}

extension ReachdConfiguration {
    /// `[nat64]`: how reachd learns a network's NAT64 prefixes besides its router
    /// advertisements (RFC 8781, always read).
    package struct NAT64: Sendable, Equatable, ConfigurationTable {
        /// `discover-dns64`: on a link with an IPv6 default route, no IPv4 one and no prefix
        /// from its router advertisements, ask the network's own resolver once for the AAAA
        /// records of `ipv4only.arpa` (RFC 7050) and take the prefix from the answer.
        package var discoverDNS64 = true

        package init() {}
        /// Reads the keys present.
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            discoverDNS64 = try container.setting(Bool.self, .discoverDNS64) ?? discoverDNS64
            try decoder.rejectUnknownKeys(CodingKeys.self)
        }
        enum CodingKeys: String, CodingKey, CaseIterable {
            case discoverDNS64 = "discover-dns64"
        }
    }
}

/// One kind of bounded integer setting: what it accepts and what it becomes.
protocol IntegerBounds {
    /// What the setting holds once read.
    associatedtype Value
    /// The integers accepted.
    static var range: ClosedRange<Int> { get }
    /// The range as an error message shows it; its bounds by default.
    static var rangeText: String { get }
    /// What a type mismatch says the setting takes; "an integer" by default.
    static var expected: String { get }
    /// The value an accepted integer stands for.
    static func value(_ integer: Int) -> Value
}

extension IntegerBounds {
    static var rangeText: String { "\(range.lowerBound)…\(range.upperBound)" }
    static var expected: String { "an integer" }
}

extension IntegerBounds where Value == Int {
    static func value(_ integer: Int) -> Int { integer }
}

/// An integer within `Bounds.range`, as `Bounds.Value`: every number the configuration takes.
struct Bounded<Bounds: IntegerBounds>: Setting {
    static var expected: String { Bounds.expected }
    var value: Bounds.Value

    init(from decoder: any Decoder) throws {
        let integer: Int = try decoder.scalar()
        guard Bounds.range.contains(integer) else {
            throw decoder.invalid("\(integer) is out of range (\(Bounds.rangeText))")
        }
        value = Bounds.value(integer)
    }
}

/// 1…100 (percent).
enum Percent: IntegerBounds { static let range = 1...100 }
/// 1…1 000 000.
enum Count: IntegerBounds { static let range = 1...1_000_000 }

/// Whole seconds, 1…3600.
enum Seconds: IntegerBounds {
    static let range = 1...3600
    static let rangeText = "1…3600 seconds"
    static let expected = "an integer (seconds)"
    static func value(_ integer: Int) -> Duration { .seconds(integer) }
}

/// Whole seconds, 1…86400, or 0 for "never" (nil).
enum SecondsOrNever: IntegerBounds {
    static let range = 0...86400
    static let rangeText = "0…86400 seconds, 0: never"
    static let expected = "an integer (seconds, 0 for never)"
    static func value(_ integer: Int) -> Duration? { integer == 0 ? nil : .seconds(integer) }
}

/// `expect-status`: an HTTP status code.
enum HTTPStatus: IntegerBounds {
    static let range = 100...599
    static let rangeText = "100…599, an HTTP status"
}

/// A uid: 0…4294967294 (`(uid_t) -1` means "none" to the kernel).
enum UserID: IntegerBounds {
    static let range = 0...Int(UInt32.max - 1)
    static let rangeText = "0…4294967294, a uid"
    static func value(_ integer: Int) -> UInt32 { UInt32(integer) }
}

/// `[netlink] receive-buffer-size`: within `Netlink.acceptedReceiveBufferSizes`.
enum ReceiveBufferBytes: IntegerBounds {
    static var range: ClosedRange<Int> { ReachdConfiguration.Netlink.acceptedReceiveBufferSizes }
    static let rangeText = "65536…1073741824 bytes, 64 KiB…1 GiB"
}

/// A string naming a case of `Value`: a log level, an interface type.
struct Choice<Value: NamedChoice>: Setting {
    package static var expected: String { "a string" }
    package var value: Value

    init(from decoder: any Decoder) throws {
        let text: String = try decoder.scalar()
        guard let value = Value(rawValue: text) else {
            let names = Value.allCases.map(\.rawValue).joined(separator: ", ")
            throw decoder.invalid("unknown \(Value.settingName) \"\(text)\" (expected \(names))")
        }
        self.value = value
    }
}

/// An enumeration a setting names by raw value; `settingName` is what messages call it.
protocol NamedChoice: RawRepresentable<String>, CaseIterable {
    static var settingName: String { get }
}

extension Logger.Level: NamedChoice { static let settingName = "log level" }
extension AddressFamily: NamedChoice { static let settingName = "address family" }
extension TrustPolicy.Pinning: NamedChoice { static let settingName = "pinning mode" }

/// `expect-header`: "Name: value", as NetworkManager's `X-NetworkManager-Status: online`.
struct ExpectedHeader: Setting {
    package static let expected = "a string"
    package var value: (name: String, value: String)

    init(from decoder: any Decoder) throws {
        let text: String = try decoder.scalar()
        let parts = text.split(separator: ":", maxSplits: 1).map { $0.trimmingOptionalWhitespace }
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, !parts[0].contains(" ") else {
            throw decoder.invalid("\"\(text)\" is not \"Header-Name: value\"")
        }
        value = (parts[0].lowercased(), parts[1])
    }
}
extension InterfaceType: NamedChoice { static let settingName = "interface type" }
