import ReachabilityCore
import XCTest

final class GlobTests: XCTestCase {
    func testMatchesWholeName() {
        let cases: [(name: String, pattern: String, text: String, matches: Bool)] = [
            ("literal equal", "eth0", "eth0", true),
            ("literal is not a prefix match", "eth", "eth0", false),
            ("literal is not a suffix match", "eth0", "xeth0", false),
            ("star alone", "*", "anything", true),
            ("star matches empty", "*", "", true),
            ("empty pattern, empty name", "", "", true),
            ("empty pattern, some name", "", "eth0", false),
            ("trailing star", "docker*", "docker0", true),
            ("trailing star, empty rest", "docker*", "docker", true),
            ("trailing star, other prefix", "docker*", "dock0", false),
            ("leading star", "*0", "wlan0", true),
            ("leading star, wrong end", "*0", "wlan1", false),
            ("question mark one char", "eth?", "eth1", true),
            ("question mark needs a char", "eth?", "eth", false),
            ("question mark only one char", "eth?", "eth10", false),
            ("star in the middle", "br-*-x", "br-abc-x", true),
            ("star in the middle needs the tail", "br-*-x", "br-abc-y", false),
            ("backtracking", "a*b*c", "aXbYbZc", true),
            ("backtracking fails", "a*b*c", "aXbYbZ", false),
            ("consecutive stars", "**0", "eth0", true),
            ("dot is literal", "flannel.*", "flannel.1", true),
            ("dot is literal, not any char", "flannel.*", "flannelX1", false),
            ("case sensitive", "ETH0", "eth0", false),
        ]
        for c in cases {
            XCTAssertEqual(Glob.matches(c.pattern, c.text), c.matches, "\(c.name): \(c.pattern) vs \(c.text)")
        }
    }
}
