import Logging
import ReachabilityCore
import ReachConfiguration
import XCTest

/// Bad input → the exact diagnostics (file, line, key, message); good input → the configuration.
final class ConfigurationParserTests: XCTestCase {
    private let file = "/etc/reachd/reachd.toml"

    private struct BadCase {
        var name: String
        var text: String
        var expected: [String]
    }

    private let badCases: [BadCase] = [
        BadCase(
            name: "unknown top-level table, with a suggestion",
            text: "[sockte]\npath = \"/run/x\"\n",
            expected: [":1: unknown key \"sockte\" (did you mean \"socket\"?)"]
        ),
        BadCase(
            name: "unknown key in a section",
            text: "# comment\n[socket]\nmode = \"0644\"\npth = \"/run/x\"\n",
            expected: [":4: unknown key \"socket.pth\" (did you mean \"socket.path\"?)"]
        ),
        BadCase(
            name: "unknown key, nothing close",
            text: "[log]\ncolour = true\n",
            expected: [":2: unknown key \"log.colour\""]
        ),
        BadCase(
            name: "every unknown key in a section, in file order",
            text: "[netlink]\nsize = 1\nbuffer = 2\n",
            expected: [":2: unknown key \"netlink.size\"", ":3: unknown key \"netlink.buffer\""]
        ),
        BadCase(
            name: "unknown quoted key: quoted keys are not located, the section's line is used",
            text: "[log]\n\"lev el\" = 1\n",
            expected: [":1: unknown key \"log.\"lev el\"\" (did you mean \"log.level\"?)"]
        ),
        BadCase(
            name: "unknown table",
            text: "[probes]\nurl = \"http://probe.test\"\n",
            expected: [":1: unknown key \"probes\" (did you mean \"probe\"?)"]
        ),
        BadCase(
            name: "section that is not a table",
            text: "socket = \"/run/x\"\n",
            expected: [":1: socket: expected a table, found string"]
        ),
        BadCase(
            name: "socket path of the wrong type",
            text: "[socket]\npath = 42\n",
            expected: [":2: socket.path: expected a string, found integer"]
        ),
        BadCase(
            name: "relative socket path",
            text: "[socket]\npath = \"run/reachd.sock\"\n",
            expected: [":2: socket.path: \"run/reachd.sock\" is not an absolute path"]
        ),
        BadCase(
            name: "socket path too long for sockaddr_un",
            text: "[socket]\npath = \"/\(String(repeating: "a", count: 120))\"\n",
            expected: [":2: socket.path: the path is 121 bytes long, more than a Unix socket address holds (107)"]
        ),
        BadCase(
            name: "mode with a non-octal digit",
            text: "[socket]\nmode = \"0968\"\n",
            expected: [":2: socket.mode: \"0968\" is not a file mode (expected 3 or 4 octal digits up to 0777, such as \"0666\")"]
        ),
        BadCase(
            name: "mode with too many digits",
            text: "[socket]\nmode = \"06666\"\n",
            expected: [":2: socket.mode: \"06666\" is not a file mode (expected 3 or 4 octal digits up to 0777, such as \"0666\")"]
        ),
        BadCase(
            name: "mode with special bits",
            text: "[socket]\nmode = \"1777\"\n",
            expected: [":2: socket.mode: \"1777\" is not a file mode (expected 3 or 4 octal digits up to 0777, such as \"0666\")"]
        ),
        BadCase(
            name: "mode that is not a number",
            text: "[socket]\nmode = \"rw-rw-rw-\"\n",
            expected: [":2: socket.mode: \"rw-rw-rw-\" is not a file mode (expected 3 or 4 octal digits up to 0777, such as \"0666\")"]
        ),
        BadCase(
            name: "mode as a TOML octal integer",
            text: "[socket]\nmode = 0o666\n",
            expected: [":2: socket.mode: expected a string, found integer"]
        ),
        BadCase(
            name: "unknown log level",
            text: "[log]\nlevel = \"verbose\"\n",
            expected: [":2: log.level: unknown log level \"verbose\" (expected trace, debug, info, notice, warning, error, critical)"]
        ),
        BadCase(
            name: "log level of the wrong case",
            text: "[log]\nlevel = \"INFO\"\n",
            expected: [":2: log.level: unknown log level \"INFO\" (expected trace, debug, info, notice, warning, error, critical)"]
        ),
        BadCase(
            name: "log level given as a date",
            text: "[log]\nlevel = 1979-05-27\n",
            expected: [":2: log.level: expected a string, found date"]
        ),
        BadCase(
            name: "ignore list that is a string",
            text: "[interfaces]\nignore = \"docker*\"\n",
            expected: [":2: interfaces.ignore: expected an array, found string"]
        ),
        BadCase(
            // Within one table, decoding stops at the first problem.
            name: "empty glob and a number in the ignore list",
            text: "[interfaces]\nignore = [\"docker*\", \"\", 5]\n",
            expected: [":2: interfaces.ignore[1]: empty pattern (expected an interface-name glob such as \"docker*\")"]
        ),
        BadCase(
            name: "a number in the ignore list",
            text: "[interfaces]\nignore = [\"docker*\", 5]\n",
            expected: [":2: interfaces.ignore[1]: expected a string, found integer"]
        ),
        BadCase(
            name: "glob that can never match, in a multi-line array with a lookalike key",
            text: "[interfaces]\nignore = [\n  \"eth0\",\n  \"a = b\",\n]\n",
            expected: [":2: interfaces.ignore[1]: pattern \"a = b\" can never match: interface names contain no whitespace or \"/\""]
        ),
        BadCase(
            name: "unknown interface type in the second override",
            text: """
                [[interfaces.override]]
                match = "wwan*"
                type = "cellular"

                [[interfaces.override]]
                match = "wlan*"
                type = "wlan"

                """,
            expected: [
                ":7: interfaces.override[1].type: unknown interface type \"wlan\" (expected wifi, cellular, wiredEthernet, loopback, other)"
            ]
        ),
        BadCase(
            name: "override without match",
            text: "[[interfaces.override]]\ntype = \"wifi\"\n",
            expected: [":1: interfaces.override[0]: missing required key \"match\" (the interface-name glob this override applies to)"]
        ),
        BadCase(
            // Within one table, decoding stops at the first problem.
            name: "override flag of the wrong type and an unknown key",
            text: "[[interfaces.override]]\nmatch = \"usb*\"\nexpensive = \"yes\"\ncheap = true\n",
            expected: [":3: interfaces.override[0].expensive: expected true or false, found string"]
        ),
        BadCase(
            name: "unknown key in an override, with a suggestion",
            text: "[[interfaces.override]]\nmatch = \"usb*\"\n\n[[interfaces.override]]\nmatch = \"wwan*\"\nexpensiv = true\n",
            expected: [":6: unknown key \"interfaces.override[1].expensiv\" (did you mean \"interfaces.override[1].expensive\"?)"]
        ),
        BadCase(
            name: "override written as a single table",
            text: "[interfaces.override]\nmatch = \"usb*\"\n",
            expected: [":1: interfaces.override: expected an array of tables ([[interfaces.override]]), found table"]
        ),
        BadCase(
            name: "override with an empty match",
            text: "[interfaces]\noverride = [{ match = \"\" }]\n",
            expected: [":2: interfaces.override[0].match: empty pattern (expected an interface-name glob such as \"docker*\")"]
        ),
        BadCase(
            name: "receive buffer below the range",
            text: "[netlink]\nreceive-buffer-size = 1024\n",
            expected: [":2: netlink.receive-buffer-size: 1024 is out of range (65536…1073741824 bytes, 64 KiB…1 GiB)"]
        ),
        BadCase(
            name: "receive buffer above the range",
            text: "[netlink]\nreceive-buffer-size = 2_147_483_648\n",
            expected: [":2: netlink.receive-buffer-size: 2147483648 is out of range (65536…1073741824 bytes, 64 KiB…1 GiB)"]
        ),
        BadCase(
            name: "stall percentage above 100",
            text: "[stall]\nfail-percent = 101\n",
            expected: [":2: stall.fail-percent: 101 is out of range (1…100)"]
        ),
        BadCase(
            name: "probe status outside HTTP's",
            text: "[probe]\nexpect-status = 600\n",
            expected: [":2: probe.expect-status: 600 is out of range (100…599, an HTTP status)"]
        ),
        BadCase(
            name: "probe recheck beyond a day",
            text: "[probe]\nrecheck-interval = 86401\n",
            expected: [":2: probe.recheck-interval: 86401 is out of range (0…86400 seconds, 0: never)"]
        ),
        BadCase(
            name: "probe timeout as text",
            text: "[probe]\ntimeout = \"10s\"\n",
            expected: [":2: probe.timeout: expected an integer (seconds), found string"]
        ),
        BadCase(
            name: "stall poll interval of 0",
            text: "[stall]\npoll-interval = 0\n",
            expected: [":2: stall.poll-interval: 0 is out of range (1…3600 seconds)"]
        ),
        BadCase(
            name: "stall socket limit of 0",
            text: "[stall]\nsocket-limit = 0\n",
            expected: [":2: stall.socket-limit: 0 is out of range (1…1000000)"]
        ),
        BadCase(
            name: "stall switch of the wrong type",
            text: "[stall]\nenabled = \"no\"\n",
            expected: [":2: stall.enabled: expected true or false, found string"]
        ),
        BadCase(
            name: "receive buffer as a float",
            text: "[netlink]\nreceive-buffer-size = 8e6\n",
            expected: [":2: netlink.receive-buffer-size: expected an integer, found float"]
        ),
        BadCase(
            name: "value in an inline table is located at the table's line",
            text: "\nsocket = { mode = \"999\" }\n",
            expected: [":2: socket.mode: \"999\" is not a file mode (expected 3 or 4 octal digits up to 0777, such as \"0666\")"]
        ),
        BadCase(
            name: "probe url that is not a URL",
            text: "[probe]\nurl = \"probe.test/generate_204\"\n",
            expected: [":2: probe.url: \"probe.test/generate_204\" is not a usable http:// or https:// URL: no scheme"]
        ),
        BadCase(
            name: "probe url given as https",
            text: "[probe]\nurl = \"https://probe.test/\"\n",
            expected: [":2: probe.url: https://probe.test/ is https; name it as https-url (url is the plain HTTP check)"]
        ),
        BadCase(
            name: "probe https-url that is plain http",
            text: "[probe]\nhttps-url = \"http://probe.test/\"\n",
            expected: [":2: probe.https-url: http://probe.test/ is not https"]
        ),
        BadCase(
            name: "probe timeout of zero",
            text: "[probe]\ntimeout = 0\n",
            expected: [":2: probe.timeout: 0 is out of range (1…3600 seconds)"]
        ),
        BadCase(
            name: "probe maximum delay below the initial one",
            text: "[probe]\ninitial-delay = 10\nmaximum-delay = 5\n",
            expected: [":3: probe.maximum-delay: shorter than initial-delay"]
        ),
        BadCase(
            name: "probe expect-header without a value",
            text: "[probe]\nexpect-header = \"X-NetworkManager-Status\"\n",
            expected: [":2: probe.expect-header: \"X-NetworkManager-Status\" is not \"Header-Name: value\""]
        ),
        BadCase(
            name: "probe expect-header with a blank value",
            text: "[probe]\nexpect-header = \"X-NetworkManager-Status: \\t \"\n",
            expected: [":2: probe.expect-header: \"X-NetworkManager-Status: \t \" is not \"Header-Name: value\""]
        ),
        BadCase(
            name: "unknown address family",
            text: "[probe]\nfamilies = [\"ipv5\"]\n",
            expected: [":2: probe.families[0]: unknown address family \"ipv5\" (expected ipv4, ipv6)"]
        ),
        BadCase(
            name: "AFSecurityPolicy's rule: invalid certificates and domain validation need a pin",
            text: "[probe.trust]\nallow-invalid-certificates = true\n",
            expected: [":1: probe.trust: to validate a domain name for self-signed certificates you must pin (allow-invalid-certificates with validates-domain-name needs pinning = \"certificate\" or \"publicKey\")"]
        ),
        BadCase(
            name: "a malformed public-key pin in the captive-portal API's policy",
            text: "[captive-portal.trust]\npinning = \"publicKey\"\npublic-key-pins = [\"sha256/short\"]\n",
            expected: [":1: captive-portal.trust: not a public-key pin (sha256/ and 44 characters of base64): sha256/short"]
        ),
        BadCase(
            name: "a metrics endpoint named by host name",
            text: "[metrics]\nlisten = \"localhost:9799\"\n",
            expected: [":2: metrics.listen: \"localhost:9799\" is neither ADDRESS:PORT (an IP address, IPv6 in brackets, and a port 1–65535) nor an absolute socket path"]
        ),
        BadCase(
            name: "a metrics endpoint on port 0",
            text: "[metrics]\nlisten = \"[::1]:0\"\n",
            expected: [":2: metrics.listen: \"[::1]:0\" is neither ADDRESS:PORT (an IP address, IPv6 in brackets, and a port 1–65535) nor an absolute socket path"]
        ),
        BadCase(
            name: "a relative textfile directory",
            text: "[metrics]\ntextfile-directory = \"rel\"\n",
            expected: [":2: metrics.textfile-directory: \"rel\" is not an absolute path"]
        ),
        BadCase(
            name: "unknown pinning mode",
            text: "[probe.trust]\npinning = \"spki\"\n",
            expected: [":2: probe.trust.pinning: unknown pinning mode \"spki\" (expected none, certificate, publicKey)"]
        ),
        BadCase(
            name: "every problem is reported, in file order",
            text: "[netlink]\nreceive-buffer-size = 1\n[log]\nlevel = \"loud\"\n[socket]\nmode = \"9\"\n",
            expected: [
                ":2: netlink.receive-buffer-size: 1 is out of range (65536…1073741824 bytes, 64 KiB…1 GiB)",
                ":4: log.level: unknown log level \"loud\" (expected trace, debug, info, notice, warning, error, critical)",
                ":6: socket.mode: \"9\" is not a file mode (expected 3 or 4 octal digits up to 0777, such as \"0666\")",
            ]
        ),
    ]

    func testBadInputIsRejectedWithFileLineAndKey() {
        for testCase in badCases {
            XCTAssertEqual(
                diagnostics(testCase.text), testCase.expected.map { file + $0 }, testCase.name
            )
        }
    }

    /// Syntax errors come from toml++ with its own wording: check the location and gist.
    func testSyntaxErrorsCarryLineAndColumn() {
        let cases: [(name: String, text: String, prefix: String, mentions: String)] = [
            ("duplicate key", "[socket]\nmode = \"0600\"\nmode = \"0644\"\n", ":3:", "redefine"),
            ("duplicate table", "[log]\nlevel = \"info\"\n\n[log]\n", ":4:", "redefine"),
            ("unterminated header", "[socket\nmode = \"0600\"\n", ":1:", ""),
            ("missing value", "[log]\nlevel =\n", ":2:", ""),
            ("unterminated string", "[log]\nlevel = \"info\n", ":2:", ""),
        ]
        for testCase in cases {
            let lines = diagnostics(testCase.text)
            XCTAssertEqual(lines.count, 1, testCase.name)
            let line = lines.first ?? ""
            XCTAssertTrue(line.hasPrefix(file + testCase.prefix), "\(testCase.name): \(line)")
            if !testCase.mentions.isEmpty {
                XCTAssertTrue(line.contains(testCase.mentions), "\(testCase.name): \(line)")
            }
        }
    }

    func testGoodInputIsRead() throws {
        var full = ReachdConfiguration()
        full.socket.path = "/run/reachd/custom.sock"
        full.socket.mode = 0o660
        full.log.level = .debug
        full.interfaces.policy = InterfacePolicy(
            ignoredPatterns: ["docker*", "tailscale?"],
            overrides: [
                InterfacePolicy.Override(pattern: "wwan*", type: .cellular, isExpensive: true),
                InterfacePolicy.Override(pattern: "usb0", type: .wiredEthernet, isExpensive: true, isConstrained: true),
            ]
        )
        full.netlink.receiveBufferSize = 64 << 10

        var dotted = ReachdConfiguration()
        dotted.socket.mode = 0o600
        dotted.log.level = .critical

        var noIgnores = ReachdConfiguration()
        noIgnores.interfaces.policy.ignoredPatterns = []

        var threeDigitMode = ReachdConfiguration()
        threeDigitMode.socket.mode = 0o644

        var largestBuffer = ReachdConfiguration()
        largestBuffer.netlink.receiveBufferSize = 1 << 30

        var metrics = ReachdConfiguration()
        metrics.metrics.listen = .tcp(address: IPAddress("::1")!, port: 9799)
        metrics.metrics.textfileDirectory = "/var/lib/prometheus/node-exporter"
        var unixMetrics = ReachdConfiguration()
        unixMetrics.metrics.listen = .unix(path: "/run/reachd/metrics.sock")

        var probing = ReachdConfiguration()
        probing.probe.url = HTTPEndpoint("http://probe.test/generate_204")
        probing.probe.httpsURL = HTTPEndpoint("https://probe.test:8443/generate_204?v=1")
        probing.probe.expectation = ProbeExpectation(status: 204, bodyPrefix: "NetworkManager is online",
                                                     header: (name: "x-networkmanager-status", value: "online"))
        probing.probe.timeout = .seconds(3)
        probing.probe.schedule = ProbeSchedule.Configuration(initialDelay: .seconds(2), maximumDelay: .seconds(60), recheckInterval: .seconds(600))
        probing.probe.families = [.ipv4]
        probing.probe.trust = try TrustPolicy(pinning: .publicKey, publicKeyPins: ["sha256/" + String(repeating: "A", count: 43) + "="])
        probing.captivePortal.routerAdvertisements = false
        probing.captivePortal.fetchAPI = true
        var blankHeader = ReachdConfiguration()
        blankHeader.probe.expectation.header = (name: "x-networkmanager-status", value: "online")

        let cases: [(name: String, text: String, expected: ReachdConfiguration)] = [
            ("empty file", "", ReachdConfiguration()),
            ("metrics over IPv6 and a textfile", "[metrics]\nlisten = \"[::1]:9799\"\ntextfile-directory = \"/var/lib/prometheus/node-exporter\"\n", metrics),
            ("metrics on a Unix socket", "[metrics]\nlisten = \"/run/reachd/metrics.sock\"\n", unixMetrics),
            (
                "probe and captive-portal settings",
                """
                [probe]
                url = "http://probe.test/generate_204"
                https-url = "https://probe.test:8443/generate_204?v=1"
                expect-body = "NetworkManager is online"
                expect-header = "X-NetworkManager-Status: online"
                timeout = 3
                initial-delay = 2
                maximum-delay = 60
                recheck-interval = 600
                families = ["ipv4"]
                [probe.trust]
                pinning = "publicKey"
                public-key-pins = ["sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]
                [captive-portal]
                router-advertisements = false
                fetch-api = true
                """,
                probing
            ),
            ("expect-header with blanks around name and value", "[probe]\nexpect-header = \" X-NetworkManager-Status\t:  online \\t\"\n", blankHeader),
            ("comments and empty sections", "# nothing\n[socket]\n[log]\n[interfaces]\n[netlink]\n", ReachdConfiguration()),
            (
                "every setting",
                """
                [socket]
                path = "/run/reachd/custom.sock"
                mode = "0660"
                [log]
                level = "debug"
                [interfaces]
                ignore = ["docker*", "tailscale?"]
                [[interfaces.override]]
                match = "wwan*"
                type = "cellular"
                expensive = true
                [[interfaces.override]]
                match = "usb0"
                type = "wiredEthernet"
                expensive = true
                constrained = true
                [netlink]
                receive-buffer-size = 65536
                """,
                full
            ),
            ("dotted keys at the root", "socket.mode = \"0600\"\nlog.level = \"critical\"\n", dotted),
            ("no ignores", "[interfaces]\nignore = []\n", noIgnores),
            ("three-digit mode", "[socket]\nmode = \"644\"\n", threeDigitMode),
            ("largest buffer", "[netlink]\nreceive-buffer-size = 1073741824\n", largestBuffer),
        ]
        for testCase in cases {
            XCTAssertEqual(try ReachdConfiguration(parsing: testCase.text, file: file), testCase.expected, testCase.name)
        }
    }

    /// A `full` interface is checked again every 300 s (NetworkManager's interval) unless the
    /// file says otherwise; 0 still means never.
    func testStallTableIsReadWithAndroidsDefaults() throws {
        XCTAssertEqual(ReachdConfiguration().stall.rule, DataStallRule())
        XCTAssertEqual(ReachdConfiguration().stall.pollInterval, .seconds(10))
        let text = "[stall]\nenabled = false\npoll-interval = 2\nfail-percent = 50\nminimum-segments = 4\nsyn-sent-minimum = 2\nminimum-destinations = 1\nsocket-limit = 100\n"
        let stall = try ReachdConfiguration(parsing: text, file: file).stall
        XCTAssertEqual(stall.enabled, false)
        XCTAssertEqual(stall.pollInterval, .seconds(2))
        XCTAssertEqual([stall.rule.failPercent, stall.rule.minimumSegments, stall.rule.synSentMinimum, stall.rule.minimumDestinations, stall.socketLimit], [50, 4, 2, 1, 100])
    }

    func testRecheckIntervalDefaultsToFiveMinutes() throws {
        let cases: [(name: String, text: String, expected: Duration?)] = [
            ("no file", "", .seconds(300)),
            ("probing on, no recheck-interval", "[probe]\nurl = \"http://probe.test/generate_204\"\n", .seconds(300)),
            ("explicit 0: never", "[probe]\nrecheck-interval = 0\n", nil),
            ("explicit 10 s", "[probe]\nrecheck-interval = 10\n", .seconds(10)),
            ("the longest", "[probe]\nrecheck-interval = 86400\n", .seconds(86_400)),
        ]
        for testCase in cases {
            let parsed = try ReachdConfiguration(parsing: testCase.text, file: file)
            XCTAssertEqual(parsed.probe.schedule.recheckInterval, testCase.expected, testCase.name)
        }
        XCTAssertEqual(ReachdConfiguration.Probe.defaultRecheckInterval, .seconds(300))
    }

    func testEveryLogLevelIsAccepted() throws {
        for level in Logger.Level.allCases {
            let parsed = try ReachdConfiguration(parsing: "[log]\nlevel = \"\(level.rawValue)\"\n", file: file)
            XCTAssertEqual(parsed.log.level, level)
        }
    }

    func testEveryInterfaceTypeIsAccepted() throws {
        for type in InterfaceType.allCases {
            let parsed = try ReachdConfiguration(parsing: "[[interfaces.override]]\nmatch = \"x*\"\ntype = \"\(type.rawValue)\"\n", file: file)
            XCTAssertEqual(parsed.interfaces.policy.overrides, [InterfacePolicy.Override(pattern: "x*", type: type)])
        }
    }

    private func diagnostics(_ text: String) -> [String] {
        configurationDiagnostics(text, file: file)
    }
}

/// Every line a configuration text is refused with (empty when it is accepted).
func configurationDiagnostics(_ text: String, file: String) -> [String] {
    do {
        _ = try ReachdConfiguration(parsing: text, file: file)
        return []
    } catch {
        return error.description.split(separator: "\n").map(String.init)
    }
}
