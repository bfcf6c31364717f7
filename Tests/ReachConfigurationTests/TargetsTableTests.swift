import ReachabilityCore
import ReachConfiguration
import ReachProtocol
import XCTest

/// `[targets] watch`: names, addresses and per-uid tables are read in order; bad entries,
/// duplicates and too many are refused with `FILE:LINE: KEY: message`.
final class TargetsTableTests: XCTestCase {
    private let file = "/etc/reachd/reachd.toml"

    func testGoodTablesAreRead() throws {
        let cases: [(name: String, text: String, expected: [WatchedTarget])] = [
            ("no table", "", []),
            ("empty list", "[targets]\nwatch = []\n", []),
            ("a name, lowercased, its final dot dropped", "[targets]\nwatch = [\"DB.Internal.\"]\n", [WatchedTarget(.host("db.internal"))]),
            ("addresses of both families", "[targets]\nwatch = [\"10.0.0.5\", \"2001:db8::5\"]\n", [
                WatchedTarget(.address(IPAddress("10.0.0.5")!)), WatchedTarget(.address(IPAddress("2001:db8::5")!)),
            ]),
            ("a scoped link-local address", "[targets]\nwatch = [\"fe80::1%eth0\"]\n", [
                WatchedTarget(.scopedAddress(IPAddress("fe80::1")!, interface: "eth0")),
            ]),
            ("strings and a table with a uid, in order",
             "[targets]\nwatch = [\"db.internal\", { target = \"registry.internal\", uid = 1000 }, { target = \"10.0.0.5\" }]\n", [
                WatchedTarget(.host("db.internal")), WatchedTarget(.host("registry.internal"), uid: 1000),
                WatchedTarget(.address(IPAddress("10.0.0.5")!)),
            ]),
            ("the same name for two uids", "[targets]\nwatch = [\"db\", { target = \"db\", uid = 0 }, { target = \"db\", uid = 1000 }]\n", [
                WatchedTarget(.host("db")), WatchedTarget(.host("db"), uid: 0), WatchedTarget(.host("db"), uid: 1000),
            ]),
            ("an array of tables", "[[targets.watch]]\ntarget = \"db\"\n[[targets.watch]]\ntarget = \"vpn\"\nuid = 4294967294\n", [
                WatchedTarget(.host("db")), WatchedTarget(.host("vpn"), uid: 4_294_967_294),
            ]),
            ("exactly the maximum", "[targets]\nwatch = [\((1...64).map { "\"h\($0)\"" }.joined(separator: ", "))]\n",
             (1...64).map { WatchedTarget(.host("h\($0)")) }),
        ]
        for test in cases {
            XCTAssertEqual(try ReachdConfiguration(parsing: test.text, file: file).targets.watch, test.expected, test.name)
        }
        XCTAssertEqual(WatchedTarget(.host("db"), uid: 1000).lookupUID, 1000)
        XCTAssertEqual(WatchedTarget(.host("db")).lookupUID, 0)
    }

    func testBadEntriesAreRefusedWithFileLineAndKey() {
        let cases: [(name: String, text: String, expected: [String])] = [
            ("not a name", "[targets]\nwatch = [\"db internal\"]\n",
             [":2: targets.watch[0]: \"db internal\" is neither an address nor a valid host name"]),
            ("an unspecified address", "# watched\n[targets]\nwatch = [\"db\", \"0.0.0.0\"]\n",
             [":3: targets.watch[1]: \"0.0.0.0\" is an unspecified address: it names no host"]),
            ("link-local without its interface", "[targets]\nwatch = [\"fe80::1\"]\n",
             [":2: targets.watch[0]: \"fe80::1\" is a link-local address without an interface: write fe80::1%INTERFACE"]),
            ("control characters are escaped in the message", "[targets]\nwatch = [\"db\\u001b[2J\"]\n",
             [":2: targets.watch[0]: \"db\\x1b[2J\" is neither an address nor a valid host name"]),
            ("a number", "[targets]\nwatch = [5]\n", [":2: targets.watch[0]: expected a string or a table, found integer"]),
            ("not an array", "[targets]\nwatch = \"db\"\n", [":2: targets.watch: expected an array, found string"]),
            ("a table without target", "[targets]\nwatch = [{ uid = 1000 }]\n",
             [":2: targets.watch[0]: missing required key \"target\" (a host name or an address)"]),
            ("a negative uid", "[targets]\nwatch = [{ target = \"db\", uid = -1 }]\n",
             [":2: targets.watch[0].uid: -1 is out of range (0…4294967294, a uid)"]),
            ("uid (uint32)-1, which means no uid", "[targets]\nwatch = [{ target = \"db\", uid = 4294967295 }]\n",
             [":2: targets.watch[0].uid: 4294967295 is out of range (0…4294967294, a uid)"]),
            ("a uid that is not a number", "[targets]\nwatch = [{ target = \"db\", uid = \"root\" }]\n",
             [":2: targets.watch[0].uid: expected an integer, found string"]),
            ("an unknown key in an entry", "[targets]\nwatch = [{ target = \"db\", uids = 1000 }]\n",
             [":2: unknown key \"targets.watch[0].uids\" (did you mean \"targets.watch[0].uid\"?)"]),
            ("an unknown key in the table", "[targets]\nwatchs = [\"db\"]\n",
             [":2: unknown key \"targets.watchs\" (did you mean \"targets.watch\"?)"]),
            ("the same target twice (a name is lowercased first)", "[targets]\nwatch = [\"db\", \"DB\"]\n",
             [":2: targets.watch: db is listed twice"]),
            ("the same target and uid twice", "[targets]\nwatch = [{ target = \"db\", uid = 7 }, { target = \"db\", uid = 7 }]\n",
             [":2: targets.watch: db (uid 7) is listed twice"]),
            ("too many", "[targets]\nwatch = [\((1...65).map { "\"h\($0)\"" }.joined(separator: ", "))]\n",
             [":2: targets.watch: 65 targets, more than 64 (each is looked up again with every change of the routes)"]),
        ]
        for test in cases {
            XCTAssertEqual(configurationDiagnostics(test.text, file: file), test.expected.map { file + $0 }, test.name)
        }
    }
}
