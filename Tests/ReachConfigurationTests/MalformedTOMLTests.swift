@testable import ReachConfiguration
import TestSupport
import XCTest

/// Text that made TOMLKit's bundled toml++ abort (F9) is a located syntax error, and the
/// guard that stops it lets every valid document through.
final class MalformedTOMLTests: XCTestCase {
    private let file = "/etc/reachd/reachd.toml"

    private static let headerKey = "Error while parsing key: expected bare key starting character or string delimiter, saw "
    private static let arrayValue = "Error while parsing array: expected a value or ']', saw "

    /// Each of these aborted the process before the guard (`toml.hpp` line in the name).
    func testCrashersAreLocatedSyntaxErrors() {
        let cases: [(name: String, text: String, expected: String)] = [
            ("15481: the typo from the issue", "[[[ broken\n", ":1:3: \(Self.headerKey)'['"),
            ("15481: array-of-tables name starting with '['", "[[[1]]]\n", ":1:3: \(Self.headerKey)'['"),
            ("15481: '[' after blanks in an array-of-tables header", "[[ [a]]\n", ":1:4: \(Self.headerKey)'['"),
            ("15481: '=' as a table name", "[=]\n", ":1:2: \(Self.headerKey)'='"),
            ("15481: dot first", "[log]\nlevel = \"info\"\n\n  [.log]\n", ":4:4: \(Self.headerKey)'.'"),
            ("15481: header cut at the end of the line", "[\n", ":1:2: \(Self.headerKey)'\\n'"),
            ("15481: inline table as a table name", "[ {a}]\n", ":1:3: \(Self.headerKey)'{'"),
            ("15481: non-ASCII letter", "[é]\n", ":1:2: \(Self.headerKey)'é'"),
            ("15481: byte-order mark is not a column", "\u{FEFF}[[[x", ":1:3: \(Self.headerKey)'['"),
            ("15481: CRLF lines", "[log]\r\nlevel = \"info\"\r\n[#]\r\n", ":3:2: \(Self.headerKey)'#'"),
            ("14994: '}' right after '['", "a = [}", ":1:6: \(Self.arrayValue)'}'"),
            ("14994: '}' after a comma", "[interfaces]\nignore = [\"eth*\", }\n", ":2:19: \(Self.arrayValue)'}'"),
            ("14994: '}' after a comment line", "ignore = [\n  # comment\n  }\n", ":3:3: \(Self.arrayValue)'}'"),
            ("14994: in an array in an inline table", "a = { b = [ } ] }\n", ":1:13: \(Self.arrayValue)'}'"),
            ("14994: in a nested array", "a = [[1], [\n}]]\n", ":2:1: \(Self.arrayValue)'}'"),
            ("14994: U+2028 LINE SEPARATOR", "a = [\u{2028}]\n", ":1:6: \(Self.arrayValue)'\\u2028'"),
            ("14994: U+2029 PARAGRAPH SEPARATOR", "a = [1,\u{2029}]\n", ":1:8: \(Self.arrayValue)'\\u2029'"),
            ("14994: U+0085 NEXT LINE", "a = [ \u{85} ]\n", ":1:7: \(Self.arrayValue)'\\u0085'"),
            (
                "14790: date-time without an hour", "a = 1979-05-27T:",
                ":1:16: Error while parsing date-time: expected a 2-digit hour after 'T', saw ':'"
            ),
            (
                "14790: lower-case t, offset first, in an array", "a = [2024-01-01t+01:00]\n",
                ":1:17: Error while parsing date-time: expected a 2-digit hour after 't', saw '+'"
            ),
            (
                "14790: as an inline table's value", "socket = { mode = 2024-01-01TZ }\n",
                ":1:30: Error while parsing date-time: expected a 2-digit hour after 'T', saw 'Z'"
            ),
            (
                "15080: a date, a space, a digit, a line break", "a = 1979-05-27 4\n",
                ":1:17: Error while parsing date-time: expected a time after the date, saw '\\n'"
            ),
            (
                "15080: underscores are not counted, in an array", "a = [19_79-05-27 4]\n",
                ":1:19: Error while parsing date-time: expected a time after the date, saw ']'"
            ),
            (
                "NUL: toml++ would never see what follows it", "[log]\nlevel = \"info\"\0garbage",
                ":2:15: NUL characters (U+0000) are not allowed in TOML"
            ),
            ("NUL in a comment", "# \0\n[[[x\n", ":1:3: NUL characters (U+0000) are not allowed in TOML"),
            (
                "an earlier error toml++ finds itself comes first", "[log]\nlevel =\n[[[ broken\n",
                ":2:8: Error while parsing key-value pair: expected value, saw '\\n'"
            ),
        ]
        for testCase in cases {
            XCTAssertEqual(diagnostics(testCase.text), [file + testCase.expected], testCase.name)
        }
    }

    /// Valid TOML with the crashers' shapes where they are harmless (strings, comments,
    /// keys), and the lexical corners the guard must get right, is not touched by it and
    /// parses.
    func testValidDocumentsPassTheGuard() {
        let documents: [(name: String, text: String)] = [
            ("basic string", "a = \"[[[ broken\"\n"),
            ("literal string", "a = '[}'\n"),
            ("multi-line basic string", "a = \"\"\"\n[[[\n[}\n\"\"\"\n"),
            ("multi-line literal string", "a = '''\n[=]\n'''\n"),
            ("escaped quotes", "a = \"\\\"[[[\"\nb = \"\"\"\\\"\"\"[[[\"\"\"\n"),
            ("quotes before the closing delimiter", "a = \"\"\"x\"\"\"\"\"\n[t]\nb = '''y'''''\n[u]\n"),
            ("empty strings", "a = \"\"\nb = ''\nc = \"\"\"\"\"\"\n[t]\n"),
            ("comments", "# [[[ broken\na = [ # [}\n  1, # ,}\n]\n"),
            ("separators in strings and comments", "a = \"\u{2028}\"\n# \u{2029}\u{85}\n"),
            ("nested arrays and inline tables", "a = [[1, 2], [3], [ { b = [4] } ]]\nc = [\n  [1],\n]\n[t]\n"),
            ("quoted header keys", "[\"a]b\".c]\n[ 'x' ]\n[[ \"q\" ]]\n[[ \"q\" ]]\n"),
            ("date-times", "a = 1979-05-27T07:32:00Z\nb = 1979-05-27t07:32:00\nc = 1979-05-27 07:32:00\nd = [1979-05-27T07:32:00-08:00]\n"),
            ("dates and times", "a = 1979-05-27\nb = 07:32:00\nc = [1979-05-27, 07:32:00.5]\nd = [1979-05-27 , 4]\n"),
            ("keys shaped like a bad date-time", "1979-05-27T-x = 1\n[1979-05-27T-y]\nz = { 2024-01-01T-z = 2 }\n"),
            ("header after a multi-line array", "a = [\n  1,\n  2,\n]\n[t]\nb = 1\n"),
            ("CRLF", "[log]\r\nlevel = \"info\"\r\n[t]\r\na = [\r\n1]\r\n"),
            ("byte-order mark", "\u{FEFF}[log]\nlevel = \"info\"\n"),
            ("the shipped configuration", Self.shipped),
        ]
        for document in documents {
            XCTAssertNil(TOMLInputGuard.problem(in: document.text), document.name)
            if case .failure(let error) = ReachdConfiguration.parseTable(document.text, file: file) {
                XCTFail("\(document.name): \(error)")
            }
        }
    }

    private static var shipped: String {
        (try? String(contentsOf: Paths.repository.appendingPathComponent("config/reachd.toml"), encoding: .utf8)) ?? ""
    }

    private func diagnostics(_ text: String) -> [String] {
        configurationDiagnostics(text, file: file)
    }
}
