import ReachabilityCore
import ReachProtocol
import TestSupport
import XCTest

@testable import ReachDaemon

/// `io.systemd.service`: who may reload, and what each call means. The table runs through
/// the pure dispatcher; the integration tests carry a reload out for real.
final class VarlinkDispatcherTests: XCTestCase {
    private enum Expected: Equatable {
        case reply, reload, error(VarlinkError)
    }

    func testSystemdServiceInterface() {
        let publication = Publication(instance: "i", snapshot: makeSnapshot(), policy: InterfacePolicy())
        let dispatcher = VarlinkDispatcher(serviceInfo: .reachd)
        let cases: [(method: String, parameters: JSONObject?, privileged: Bool, expected: Expected)] = [
            (SystemdServiceInterface.Method.ping, nil, false, .reply),
            (SystemdServiceInterface.Method.ping, nil, true, .reply),
            (SystemdServiceInterface.Method.reload, nil, true, .reload),
            (SystemdServiceInterface.Method.reload, [:], true, .reload),
            (SystemdServiceInterface.Method.reload, nil, false, .error(.permissionDenied)),
            (SystemdServiceInterface.Method.reload, ["force": .bool(true)], true, .error(.invalidParameter(parameter: "force"))),
            ("io.systemd.service.SetLogLevel", ["level": .integer(7)], true, .error(.invalidParameter(parameter: "level"))),
            ("io.systemd.service.SetLogLevel", nil, true, .error(.methodNotFound(method: "io.systemd.service.SetLogLevel"))),
        ]
        for test in cases {
            let call = AnyVarlinkCall(method: test.method, parameters: test.parameters)
            let got: Expected
            switch dispatcher.outcome(for: call, publication: publication, privileged: test.privileged) {
            case .reply: got = .reply
            case .reload: got = .reload
            case let .error(error): got = .error(error)
            case .subscribe: got = .error(.other(name: "subscribe", parameters: [:]))
            }
            XCTAssertEqual(got, test.expected, "\(test.method) \(test.parameters ?? [:]) privileged: \(test.privileged)")
        }
    }

    func testSystemdServiceIsDescribedAndListed() {
        let publication = Publication(instance: "i", snapshot: makeSnapshot(), policy: InterfacePolicy())
        let dispatcher = VarlinkDispatcher(serviceInfo: .reachd)
        XCTAssertEqual(ServiceInfo.reachd.interfaces, ["org.varlink.service", "io.reachd.Reachability", "io.systemd.service"])
        let call = AnyVarlinkCall(method: VarlinkService.Method.getInterfaceDescription, parameters: ["interface": .string("io.systemd.service")])
        guard case let .reply(reply) = dispatcher.outcome(for: call, publication: publication, privileged: false),
              let description = reply as? InterfaceDescriptionReply else { return XCTFail("no description") }
        XCTAssertTrue(description.description.hasPrefix("# An interface to control basic properties of systemd services."))
        XCTAssertTrue(description.description.contains("method Reload() -> ()"))
    }
}
