import LinuxSystem
import ReachabilityCore
import ReachProtocol
@testable import ReachServer
import TestSupport
import XCTest


/// `io.systemd.service`: who may reload, and what each call means. The table runs through
/// the pure dispatcher; the integration tests carry a reload out for real.
final class VarlinkDispatcherTests: XCTestCase {
    private enum Expected: Equatable {
        case reply, reload, metrics, summary, target(Target), connectivity(String?), error(VarlinkError)
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
            (ReachabilityInterface.Method.checkConnectivity, nil, false, .connectivity(nil)),
            (ReachabilityInterface.Method.checkConnectivity, ["interface": .null], false, .connectivity(nil)),
            (ReachabilityInterface.Method.checkConnectivity, ["interface": .string("wlan0")], false, .connectivity("wlan0")),
            (ReachabilityInterface.Method.checkConnectivity, ["interface": .integer(3)], false, .error(.invalidParameter(parameter: "interface"))),
            (ReachabilityInterface.Method.checkConnectivity, ["family": .string("ipv4")], false, .error(.invalidParameter(parameter: "family"))),
            (ReachabilityInterface.Method.getMetrics, nil, false, .metrics),
            (ReachabilityInterface.Method.getMetrics, [:], false, .metrics),
            (ReachabilityInterface.Method.getMetrics, ["format": .string("json")], false, .error(.invalidParameter(parameter: "format"))),
            (ReachabilityInterface.Method.subscribeSummary, nil, false, .summary),
            (ReachabilityInterface.Method.subscribeSummary, [:], false, .summary),
            (ReachabilityInterface.Method.subscribeSummary, ["requiredInterfaceType": .string("wifi")], false,
             .error(.invalidParameter(parameter: "requiredInterfaceType"))),
        ]
        for test in cases {
            let streams = test.method == ReachabilityInterface.Method.subscribeSummary
            let call = AnyVarlinkCall(method: test.method, parameters: test.parameters, more: streams)
            let got: Expected
            switch dispatcher.outcome(for: call, publication: publication, privileged: test.privileged) {
            case .reply: got = .reply
            case .reload: got = .reload
            case .metrics: got = .metrics
            case let .checkTarget(target), let .subscribeTarget(target): got = .target(target)
            case let .checkConnectivity(interface): got = .connectivity(interface)
            case let .error(error): got = .error(error)
            case .subscribe: got = .error(.other(name: "subscribe", parameters: [:]))
            case .subscribeSummary: got = .summary
            }
            XCTAssertEqual(got, test.expected, "\(test.method) \(test.parameters ?? [:]) privileged: \(test.privileged)")
        }
        let once = AnyVarlinkCall(method: ReachabilityInterface.Method.subscribeSummary)
        guard case let .error(error) = dispatcher.outcome(for: once, publication: publication, privileged: false) else {
            return XCTFail("SubscribeSummary without more must be refused")
        }
        XCTAssertEqual(error, .expectedMore)
    }

    /// CheckTarget: exactly one of host and address; names checked before anything is resolved.
    func testCheckTargetParameters() {
        let publication = Publication(instance: "i", snapshot: makeSnapshot(), policy: InterfacePolicy())
        let dispatcher = VarlinkDispatcher(serviceInfo: .reachd)
        let long = String(repeating: "a.", count: 126) + "ab"  // 254 bytes
        let cases: [(JSONObject?, Expected)] = [
            (["host": .string("API.Example.com.")], .target(.host("api.example.com"))),
            (["host": .string("_sip._tcp.example")], .target(.host("_sip._tcp.example"))),
            (["host": .string("192.0.2.7")], .target(.address(IPAddress("192.0.2.7")!))),
            (["address": .string("2001:db8::7")], .target(.address(IPAddress("2001:db8::7")!))),
            (["host": .string("a"), "address": .null], .target(.host("a"))),
            (["address": .string("example.com")], .error(.invalidParameter(parameter: "address"))),
            (["host": .string("a"), "address": .string("192.0.2.7")], .error(.invalidParameter(parameter: "host"))),
            (nil, .error(.invalidParameter(parameter: "host"))),
            (["host": .integer(7)], .error(.invalidParameter(parameter: "host"))),
            (["host": .string("")], .error(.invalidParameter(parameter: "host"))),
            (["host": .string(long)], .error(.invalidParameter(parameter: "host"))),
            (["host": .string(String(repeating: "a", count: 64) + ".com")], .error(.invalidParameter(parameter: "host"))),
            (["host": .string("-bad.example")], .error(.invalidParameter(parameter: "host"))),
            (["host": .string("bad..example")], .error(.invalidParameter(parameter: "host"))),
            (["host": .string("sp ace.example")], .error(.invalidParameter(parameter: "host"))),
            (["host": .string("ünï.example")], .error(.invalidParameter(parameter: "host"))),
            (["host": .string("a"), "port": .integer(80)], .error(.invalidParameter(parameter: "port"))),
        ]
        for (parameters, expected) in cases {
            let call = AnyVarlinkCall(method: ReachabilityInterface.Method.checkTarget, parameters: parameters)
            let got: Expected
            switch dispatcher.outcome(for: call, publication: publication, privileged: false) {
            case let .checkTarget(target): got = .target(target)
            case let .error(error): got = .error(error)
            default: got = .reply
            }
            XCTAssertEqual(got, expected, "\(parameters ?? [:])")
        }
    }

    /// GetNetworkNamespace answers the inode the dispatcher was made with (nil: unknown), takes no parameters.
    func testNetworkNamespace() throws {
        let publication = Publication(instance: "i", snapshot: makeSnapshot(), policy: InterfacePolicy())
        let cases: [(inode: UInt64?, parameters: JSONObject?, expected: NetworkNamespaceReply?)] = [
            (4_026_531_840, nil, NetworkNamespaceReply(inode: 4_026_531_840)),
            (4_026_531_840, [:], NetworkNamespaceReply(inode: 4_026_531_840)),
            (nil, nil, NetworkNamespaceReply(inode: nil)),
            (7, ["inode": .integer(7)], nil),
        ]
        for test in cases {
            let dispatcher = VarlinkDispatcher(serviceInfo: .reachd, networkNamespace: test.inode)
            let call = AnyVarlinkCall(method: ReachabilityInterface.Method.getNetworkNamespace, parameters: test.parameters)
            switch dispatcher.outcome(for: call, publication: publication, privileged: false) {
            case let .reply(reply): XCTAssertEqual(reply as? NetworkNamespaceReply, test.expected, "\(test)")
            case let .error(error): XCTAssertNil(test.expected, "\(test): \(error)")
            default: XCTFail("\(test): neither a reply nor an error")
            }
        }
        XCTAssertNotNil(FileSystem.networkNamespaceInode(), "this process can read its own /proc/self/ns/net")
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
