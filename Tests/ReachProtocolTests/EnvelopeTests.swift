import ReachabilityCore
import ReachProtocol
import XCTest

final class EnvelopeTests: XCTestCase {
    func testCallEncoding() throws {
        let cases: [(AnyVarlinkCall, String)] = [
            (VarlinkCall(method: "io.reachd.Reachability.GetStatus"), #"{"method":"io.reachd.Reachability.GetStatus"}"#),
            (VarlinkCall(method: "a.B", parameters: [:]), #"{"method":"a.B","parameters":{}}"#),
            (VarlinkCall(method: "a.B", parameters: ["x": .integer(1)], more: true), #"{"method":"a.B","more":true,"parameters":{"x":1}}"#),
            (VarlinkCall(method: "a.B", oneway: true), #"{"method":"a.B","oneway":true}"#),
            (VarlinkCall(method: "a.B", upgrade: true), #"{"method":"a.B","upgrade":true}"#),
        ]
        for (call, json) in cases {
            XCTAssertEqual(try VarlinkCoding.encodeText(call), json)
            let decoded = try VarlinkCoding.decode(AnyVarlinkCall.self, from: Array(json.utf8))
            XCTAssertEqual(decoded.method, call.method)
            XCTAssertEqual(decoded.parameters, call.parameters)
            XCTAssertEqual(decoded.wantsMore, call.wantsMore)
            XCTAssertEqual(decoded.isOneway, call.isOneway)
            XCTAssertEqual(decoded.wantsUpgrade, call.wantsUpgrade)
        }
    }

    func testCallDecodingOfForeignShapes() throws {
        let valid: [(String, JSONObject?)] = [
            (#"{"method":"a.B","parameters":{"n":null,"f":1.5,"s":"x","a":[true,{}]}}"#,
             ["n": .null, "f": .number(1.5), "s": .string("x"), "a": .array([.bool(true), .object([:])])]),
            (#"{"method":"a.B","more":false,"oneway":false}"#, nil),
            (#"{"method":"a.B","unknownField":1}"#, nil),
        ]
        for (json, parameters) in valid {
            XCTAssertEqual(try VarlinkCoding.decode(AnyVarlinkCall.self, from: Array(json.utf8)).parameters, parameters, json)
        }
        let invalid = [#"[]"#, #""x""#, #"{"parameters":{}}"#, #"{"method":1}"#, #"{"method":"a.B","parameters":[]}"#, #"{"method":"a.B""#, ""]
        for json in invalid {
            XCTAssertThrowsError(try VarlinkCoding.decode(AnyVarlinkCall.self, from: Array(json.utf8)), json)
        }
    }

    func testReplyEncoding() throws {
        let status = StatusReply(sequence: 3, instance: "i", path: Path(status: .unsatisfied, unsatisfiedReason: .noRoute, reachability: .notReachable))
        let streamed = try VarlinkCoding.encodeText(VarlinkReply(parameters: status, continues: true))
        XCTAssertTrue(streamed.hasPrefix(#"{"continues":true,"parameters":{"instance":"i","path":{"#), streamed)
        XCTAssertTrue(streamed.hasSuffix(#"},"sequence":3}}"#), streamed)
        let decoded = try VarlinkCoding.decode(VarlinkReply<StatusReply>.self, from: Array(streamed.utf8))
        XCTAssertEqual(decoded.parameters, status)
        XCTAssertTrue(decoded.isContinuing)

        let single = try VarlinkCoding.encodeText(VarlinkReply(parameters: ServiceInfo.reachd))
        XCTAssertFalse(single.contains("continues"))
        XCTAssertFalse(single.contains("error"))
    }

    func testErrorReplies() throws {
        let cases: [(VarlinkError, String)] = [
            (.methodNotFound(method: "io.reachd.Reachability.Nope"),
             #"{"error":"org.varlink.service.MethodNotFound","parameters":{"method":"io.reachd.Reachability.Nope"}}"#),
            (.interfaceNotFound(interface: "com.example"),
             #"{"error":"org.varlink.service.InterfaceNotFound","parameters":{"interface":"com.example"}}"#),
            (.invalidParameter(parameter: "requiredInterfaceType"),
             #"{"error":"org.varlink.service.InvalidParameter","parameters":{"parameter":"requiredInterfaceType"}}"#),
            (.expectedMore, #"{"error":"org.varlink.service.ExpectedMore","parameters":{}}"#),
            (.methodNotImplemented(method: "a.B"),
             #"{"error":"org.varlink.service.MethodNotImplemented","parameters":{"method":"a.B"}}"#),
            (.other(name: "com.example.Broken", parameters: ["why": .string("x")]),
             #"{"error":"com.example.Broken","parameters":{"why":"x"}}"#),
        ]
        for (error, json) in cases {
            XCTAssertEqual(try VarlinkCoding.encodeText(AnyVarlinkReply(error: error)), json)
            let decoded = try VarlinkCoding.decode(AnyVarlinkReply.self, from: Array(json.utf8))
            XCTAssertEqual(decoded.varlinkError, error, json)
        }
        // A known name with unexpected parameters is kept as it came.
        XCTAssertEqual(VarlinkError(name: VarlinkError.Name.methodNotFound, parameters: [:]),
                       .other(name: VarlinkError.Name.methodNotFound, parameters: [:]))
        XCTAssertEqual("\(VarlinkError.invalidParameter(parameter: "x"))", #"org.varlink.service.InvalidParameter {"parameter":"x"}"#)
    }

    func testSubscribeParameterValidation() {
        let cases: [(JSONObject, Result<PathFilter, VarlinkError>)] = [
            ([:], .success(.none)),
            (["requiredInterfaceType": .null, "prohibitedInterfaceTypes": .null], .success(.none)),
            (["requiredInterfaceType": .string("wifi")], .success(PathFilter(requiredInterfaceType: .wifi))),
            (["prohibitedInterfaceTypes": .array([.string("cellular"), .string("other")])],
             .success(PathFilter(prohibitedInterfaceTypes: [.cellular, .other]))),
            (["requiredInterfaceType": .string("wlan")], .failure(.invalidParameter(parameter: "requiredInterfaceType"))),
            (["requiredInterfaceType": .integer(1)], .failure(.invalidParameter(parameter: "requiredInterfaceType"))),
            (["prohibitedInterfaceTypes": .string("wifi")], .failure(.invalidParameter(parameter: "prohibitedInterfaceTypes"))),
            (["prohibitedInterfaceTypes": .array([.string("wifi"), .string("ethernet")])],
             .failure(.invalidParameter(parameter: "prohibitedInterfaceTypes"))),
            (["requiredInterfaceType": .string("wifi"), "colour": .string("red")], .failure(.invalidParameter(parameter: "colour"))),
        ]
        for (parameters, expected) in cases {
            let result = Result { () throws(VarlinkError) -> PathFilter in try SubscribeParameters(validating: parameters).filter }
            XCTAssertEqual(result, expected, "\(parameters)")
        }
    }

    func testSubscribeParametersFromFilterRoundTrip() throws {
        let filter = PathFilter(requiredInterfaceType: .wiredEthernet, prohibitedInterfaceTypes: [.other, .wifi])
        let json = try VarlinkCoding.encodeText(SubscribeParameters(filter: filter))
        XCTAssertEqual(json, #"{"prohibitedInterfaceTypes":["wifi","other"],"requiredInterfaceType":"wiredEthernet"}"#)
        XCTAssertEqual(try VarlinkCoding.encodeText(SubscribeParameters(filter: .none)), "{}")
        let object = try VarlinkCoding.decode(JSONObject.self, from: Array(json.utf8))
        XCTAssertEqual(try SubscribeParameters(validating: object).filter, filter)
    }

    func testJSONValueRoundTrip() throws {
        let json = #"{"a":[1,-2,3.25,"s",null,true,false],"b":{"c":{}},"d":9007199254740993}"#
        let value = try VarlinkCoding.decode(JSONValue.self, from: Array(json.utf8))
        XCTAssertEqual(value.objectValue?["d"], .integer(9_007_199_254_740_993))
        XCTAssertEqual(try VarlinkCoding.encodeText(value), json)
    }
}
