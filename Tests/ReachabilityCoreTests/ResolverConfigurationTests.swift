import ReachabilityCore
import XCTest

final class ResolverConfigurationTests: XCTestCase {
    func testNameserverLines() {
        let text = """
            # generated
            search example.org
            nameserver 192.0.2.53
            nameserver\t2001:db8::53
            options edns0
            nameserver
            ;nameserver 198.51.100.1
            """
        XCTAssertEqual(ResolverConfiguration.nameservers(in: text), ["192.0.2.53", "2001:db8::53"])
    }

    func testHasNameserver() {
        let stub = "nameserver 127.0.0.53\noptions edns0 trust-ad\n"
        let cases: [(name: String, resolvConf: String?, upstream: String?, expected: Bool)] = [
            ("no resolv.conf", nil, nil, false),
            ("empty resolv.conf", "", nil, false),
            ("comments only", "# nothing\n", nil, false),
            ("a real server", "nameserver 192.0.2.53\n", nil, true),
            ("stub, upstream has servers", stub, "nameserver 192.0.2.1\n", true),
            ("stub, upstream empty (resolved knows no server)", stub, "# no servers\n", false),
            ("stub, upstream only lists the stub", stub, "nameserver 127.0.0.53\n", false),
            ("stub, upstream unreadable: trust the stub", stub, nil, true),
            ("stub 127.0.0.54 too", "nameserver 127.0.0.54\n", "", false),
            ("stub and a real server", "nameserver 127.0.0.53\nnameserver 192.0.2.9\n", "", true),
        ]
        for test in cases {
            XCTAssertEqual(ResolverConfiguration.hasNameserver(resolvConf: test.resolvConf, resolvedUpstream: test.upstream),
                           test.expected, test.name)
        }
    }
}
