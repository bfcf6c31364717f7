import ReachProtocol
import XCTest

/// The linear pre-check every request passes before decoding.
final class JSONShapeTests: XCTestCase {
    func testProblems() {
        let cases: [(name: String, text: String, expected: JSONShape.Problem?)] = [
            ("a plain call", #"{"method":"io.reachd.Reachability.GetStatus"}"#, nil),
            ("parameters three deep", #"{"method":"m","parameters":{"prohibitedInterfaceTypes":["wifi"]}}"#, nil),
            ("exactly at the limit", String(repeating: "[", count: 4) + String(repeating: "]", count: 4), nil),
            ("one over the limit", String(repeating: "[", count: 5) + String(repeating: "]", count: 5), .tooDeep(limit: 4)),
            ("unbalanced deep opening, past the limit", String(repeating: "{", count: 1000), .tooDeep(limit: 4)),
            ("brackets inside strings do not count", #"{"x":"[[[[[[[[[[{{{{{{{{"}"#, nil),
            ("escaped quote inside a string", #"{"x":"a\"[[[[[[[[[[","y":1}"#, nil),
            ("duplicate method", #"{"method":"a","method":"b"}"#, .duplicateKey("method")),
            ("duplicate written with an escape", #"{"method":"a","\u006dethod":"b"}"#, .duplicateKey("method")),
            ("same key in a nested object is fine", #"{"method":"a","parameters":{"method":"b"}}"#, nil),
            ("same key in two nested objects is fine", #"{"a":{"k":1},"b":{"k":2}}"#, nil),
            ("a string value equal to a key is not a key", #"{"method":"method","more":true}"#, nil),
            ("keys with white space around the colon", "{ \"more\" : true , \"more\" :false}", .duplicateKey("more")),
            ("not JSON at all is the decoder's business", "this is not json", nil),
        ]
        for test in cases {
            XCTAssertEqual(JSONShape.problem(in: Array(test.text.utf8), maximumDepth: test.name.contains("limit") ? 4 : 32), test.expected, test.name)
        }
    }

    func testCostIsLinear() {
        let deep = Array((String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)).utf8)
        let started = ContinuousClock.now
        XCTAssertEqual(JSONShape.problem(in: deep, maximumDepth: 32), .tooDeep(limit: 32))
        let wide = Array(("[" + String(repeating: "{\"k\":[1,2,\"s\"]},", count: 20_000) + "0]").utf8)
        XCTAssertNil(JSONShape.problem(in: wide, maximumDepth: 32))
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(1))
    }
}
