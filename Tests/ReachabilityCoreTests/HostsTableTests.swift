import ReachabilityCore
import XCTest

/// hosts(5) as glibc's `files` service reads it, and which nsswitch.conf lines put it first.
final class HostsTableTests: XCTestCase {
    func testLookups() {
        let table = HostsTable(parsing: """
            # a comment line
            127.0.0.1\tlocalhost
            ::1 localhost ip6-localhost   # trailing comment
            10.77.0.1 Gateway.TEST gw
            2001:db8::5 dual.test
            198.51.100.5 dual.test
            198.51.100.5 dual.test
              198.51.100.6   indented.test
            999.1.1.1 bad-address.test
            fe80::1%eth0 scoped.test
            198.51.100.7
            198.51.100.8 #commented.test
            198.51.100.9 tail.test#comment
            """)
        let cases: [(String, [String]?)] = [
            ("localhost", ["127.0.0.1", "::1"]),  // both families, file order
            ("ip6-localhost", ["::1"]),
            ("gateway.test", ["10.77.0.1"]),
            ("GATEWAY.test", ["10.77.0.1"]),
            ("gw", ["10.77.0.1"]),
            ("dual.test", ["2001:db8::5", "198.51.100.5"]),  // a repeated line adds nothing
            ("indented.test", ["198.51.100.6"]),
            ("bad-address.test", nil),
            ("scoped.test", nil),
            ("commented.test", nil),
            ("tail.test", ["198.51.100.9"]),
            ("missing.test", nil),
            ("gateway.test.", nil),  // glibc does not strip a final dot either
            ("", nil),
        ]
        for (name, expected) in cases {
            XCTAssertEqual(table.addresses(of: name), expected?.map { IPAddress($0)! }, name)
        }
        XCTAssertEqual(HostsTable(parsing: "").count, 0)
    }

    func testFilesFirst() {
        let cases: [(String?, Bool, String)] = [
            (nil, false, "no nsswitch.conf: glibc's default asks dns first"),
            ("passwd: files\n", false, "no hosts line: the default"),
            ("hosts: files dns\n", true, "Debian's"),
            ("hosts:          files mymachines resolve [!UNAVAIL=return] dns myhostname\n", true, "systemd's"),
            ("  hosts :\tfiles dns", true, "spaces before the colon, no newline"),
            ("hosts: dns files\n", false, "dns first"),
            ("hosts: resolve [!UNAVAIL=return] files\n", false, "resolved first"),
            ("hosts: files dns\nhosts: dns\n", false, "the last hosts line counts"),
            ("#hosts: files\nhosts: dns\n", false, "a commented line"),
            ("hosts: # files\n", false, "nothing but a comment"),
            ("hostsx: files\n", false, "another database"),
            ("hosts: Files\n", false, "service names are case-sensitive"),
        ]
        for (text, expected, name) in cases {
            XCTAssertEqual(HostsTable.consultsFilesFirst(nsswitch: text), expected, name)
        }
    }
}
