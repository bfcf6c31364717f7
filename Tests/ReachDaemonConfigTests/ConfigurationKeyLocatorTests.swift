import ReachDaemon
import XCTest

final class ConfigurationKeyLocatorTests: XCTestCase {
    private func path(_ text: String) -> ConfigurationKeyPath {
        // "a.b[1].c" → components; enough for the keys used below.
        var components: [ConfigurationKeyPath.Component] = []
        for part in text.split(separator: ".") {
            var name = Substring(part)
            var indices: [Int] = []
            while let open = name.lastIndex(of: "["), name.hasSuffix("]") {
                indices.insert(Int(name[name.index(after: open)..<name.index(before: name.endIndex)])!, at: 0)
                name = name[..<open]
            }
            components.append(.key(String(name)))
            components += indices.map { .index($0) }
        }
        return ConfigurationKeyPath(components)
    }

    func testLines() {
        let document = """
            # header comment
            top = 1
            [socket]
            path = "/run/x"   # trailing comment
              mode = "0666"
            [ "quoted table" ]
            "quoted key" = 2
            [[a]]
            x = 1
            [[a]]
            x = 2
            [[a.b]]
            y = 3
            [a.c]
            z = 4
            [text]
            long = \"\"\"
            [not.a.table]
            fake = 1
            \"\"\"
            after = 5
            list = [
              "[neither]",
              { inline = 1 },
            ]
            later = 6
            dotted.key.here = 7
            inline = { k = 1 }
            """
        let locator = ConfigurationKeyLocator(text: document)
        let cases: [(key: String, line: Int?)] = [
            ("top", 2),
            ("socket", 3),
            ("socket.path", 4),
            ("socket.mode", 5),
            ("a", 8),
            ("a[0]", 8),
            ("a[0].x", 9),
            ("a[1]", 10),
            ("a[1].x", 11),
            ("a[1].b[0]", 12),
            ("a[1].b[0].y", 13),
            ("a[1].c", 14),
            ("a[1].c.z", 15),
            ("text.long", 17),
            ("text.after", 21),
            ("text.list", 22),
            ("text.later", 26),
            ("text.dotted", 27),
            ("text.dotted.key.here", 27),
            ("text.inline.k", 28),
            ("text.list[1].inline", 22),
            ("not.a.table", nil),
            ("text.fake", 16),
            ("missing", nil),
        ]
        for testCase in cases {
            XCTAssertEqual(locator.line(of: path(testCase.key)), testCase.line, testCase.key)
        }
        XCTAssertEqual(locator.line(of: ConfigurationKeyPath([.key("quoted table"), .key("quoted key")])), 7)
        XCTAssertNil(locator.exactLine(of: path("text.fake")))
    }

    func testCarriageReturnLineEndings() {
        let locator = ConfigurationKeyLocator(text: "[log]\r\n\r\nlevel = \"info\"\r\n")
        XCTAssertEqual(locator.line(of: path("log.level")), 3)
    }

    func testKeyPathDescriptions() {
        let cases: [(ConfigurationKeyPath, String)] = [
            (ConfigurationKeyPath([.key("socket"), .key("path")]), "socket.path"),
            (ConfigurationKeyPath([.key("interfaces"), .key("override"), .index(1), .key("type")]), "interfaces.override[1].type"),
            (ConfigurationKeyPath([.key("a b"), .key("c\"d")]), "\"a b\".\"c\\\"d\""),
            (ConfigurationKeyPath([.key("receive-buffer-size")]), "receive-buffer-size"),
            (ConfigurationKeyPath(), ""),
        ]
        for (path, text) in cases { XCTAssertEqual(path.description, text) }
    }
}
