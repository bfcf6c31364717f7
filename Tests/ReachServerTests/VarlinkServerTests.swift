import Foundation
import ReachabilityCore
import ReachProtocol
@testable import ReachServer
import TestSupport
import XCTest


final class VarlinkServerTests: XCTestCase {
    private var fixture: ServerFixture!

    override func setUp() async throws {
        fixture = ServerFixture()
        try fixture.server.start()
    }

    override func tearDown() async throws {
        await fixture.stop()
    }

    private func connect() throws -> VarlinkConnection { try VarlinkConnection(path: fixture.socketPath) }

    func testGetStatus() throws {
        let connection = try connect()
        try connection.call(ReachabilityInterface.Method.getStatus)
        let (reply, continues) = try connection.status()
        XCTAssertFalse(continues)
        XCTAssertEqual(reply.sequence, 1)
        XCTAssertEqual(reply.instance, ServerFixture.instance)
        XCTAssertEqual(reply.path, makeState().path)
        XCTAssertEqual(reply.path.primaryInterface, "eth0")
    }

    func testListInterfacesAndServiceMethods() throws {
        let connection = try connect()
        try connection.call(ReachabilityInterface.Method.listInterfaces, [:])
        let interfaces = try XCTUnwrap(connection.reply().parameters?["interfaces"]?.arrayValue)
        XCTAssertEqual(interfaces.compactMap { $0.objectValue?["name"]?.stringValue }, ["lo", "eth0", "wlan0"])

        try connection.call(VarlinkService.Method.getInfo)
        let info = try XCTUnwrap(connection.reply().parameters)
        XCTAssertEqual(info["interfaces"], .array([.string("org.varlink.service"), .string("io.reachd.Reachability"), .string("io.systemd.service")]))

        try connection.call(VarlinkService.Method.getInterfaceDescription, ["interface": .string("io.reachd.Reachability")])
        XCTAssertEqual(try connection.reply().parameters?["description"]?.stringValue, IDL.text)
    }

    func testErrors() throws {
        let cases: [(String, JSONObject?, Bool, VarlinkError)] = [
            ("io.reachd.Reachability.Nope", nil, false, .methodNotFound(method: "io.reachd.Reachability.Nope")),
            ("com.example.Thing.Do", nil, false, .interfaceNotFound(interface: "com.example.Thing")),
            ("NoDot", nil, false, .interfaceNotFound(interface: "NoDot")),
            (ReachabilityInterface.Method.subscribe, nil, false, .expectedMore),
            (ReachabilityInterface.Method.subscribe, ["requiredInterfaceType": .string("ethernet")], true,
             .invalidParameter(parameter: "requiredInterfaceType")),
            (ReachabilityInterface.Method.subscribe, ["prohibitedInterfaceTypes": .array([.integer(3)])], true,
             .invalidParameter(parameter: "prohibitedInterfaceTypes")),
            (ReachabilityInterface.Method.subscribe, ["bogus": .bool(true)], true, .invalidParameter(parameter: "bogus")),
            (ReachabilityInterface.Method.getStatus, ["bogus": .bool(true)], false, .invalidParameter(parameter: "bogus")),
            (VarlinkService.Method.getInterfaceDescription, ["interface": .string("com.example")], false,
             .interfaceNotFound(interface: "com.example")),
            (VarlinkService.Method.getInterfaceDescription, [:], false, .invalidParameter(parameter: "interface")),
        ]
        // All on one connection: an error reply never closes it.
        let connection = try connect()
        for (method, parameters, more, expected) in cases {
            try connection.call(method, parameters, more: more)
            XCTAssertEqual(try connection.reply().varlinkError, expected, method)
        }
    }

    func testRepliesInRequestOrderAndOneway() throws {
        let connection = try connect()
        var bytes: [UInt8] = []
        bytes += try VarlinkCoding.encodeFrame(AnyVarlinkCall(method: ReachabilityInterface.Method.getStatus, oneway: true))
        bytes += try VarlinkCoding.encodeFrame(AnyVarlinkCall(method: "io.reachd.Reachability.Nope"))
        bytes += try VarlinkCoding.encodeFrame(AnyVarlinkCall(method: ReachabilityInterface.Method.listInterfaces))
        bytes += try VarlinkCoding.encodeFrame(AnyVarlinkCall(method: ReachabilityInterface.Method.getStatus))
        try connection.send(rawBytes: bytes)
        XCTAssertEqual(try connection.reply().error, VarlinkError.Name.methodNotFound)
        XCTAssertNotNil(try connection.reply().parameters?["interfaces"])
        XCTAssertEqual(try connection.status().0.sequence, 1)
        XCTAssertEqual(connection.next(timeout: 0.2), .timeout)
    }

    func testBadInputClosesOnlyThatConnection() throws {
        let inputs: [(String, [UInt8])] = [
            ("garbage", Array("this is not json\0".utf8)),
            ("array", Array("[]\0".utf8)),
            ("string", Array("\"io.reachd.Reachability.GetStatus\"\0".utf8)),
            ("no method", Array("{\"parameters\":{}}\0".utf8)),
            ("empty message", [0]),
            ("oversized", [UInt8](repeating: UInt8(ascii: " "), count: 70_000)),
        ]
        let bystander = try connect()
        for (name, bytes) in inputs {
            let victim = try connect()
            try? victim.send(rawBytes: bytes)  // the server may close before all of it is sent
            XCTAssertEqual(victim.next(), .closed, name)
            try bystander.call(ReachabilityInterface.Method.getStatus)
            XCTAssertEqual(try bystander.status().0.sequence, 1, name)
        }
    }

    func testSubscribeStreamsChanges() throws {
        let connection = try connect()
        try connection.call(ReachabilityInterface.Method.subscribe, [:], more: true)
        let (first, continues) = try connection.status()
        XCTAssertTrue(continues)
        XCTAssertEqual(first.sequence, 1)
        XCTAssertEqual(first.path.gateways, ["10.0.0.1"])

        // Same state again: no change, no reply.
        fixture.server.deliver(.snapshot(makeSnapshot()))
        XCTAssertEqual(connection.next(timeout: 0.2), .timeout)

        fixture.server.deliver(.snapshot(makeSnapshot(ethGateway: "10.0.0.254")))
        let (update, stillContinues) = try connection.status()
        XCTAssertTrue(stillContinues)
        XCTAssertEqual(update.sequence, 2)
        XCTAssertEqual(update.path.gateways, ["10.0.0.254"])

        // GetStatus elsewhere sees the new sequence.
        let other = try connect()
        try other.call(ReachabilityInterface.Method.getStatus)
        XCTAssertEqual(try other.status().0.sequence, 2)
    }

    func testFilteredSubscriberSeesOnlyItsChanges() throws {
        let wifi = try connect()
        try wifi.call(ReachabilityInterface.Method.subscribe, ["requiredInterfaceType": .string("wifi")], more: true)
        let (first, _) = try wifi.status()
        XCTAssertEqual(first.path.primaryInterface, "wlan0")
        XCTAssertEqual(first.path.gateways, ["192.168.1.1"])

        let all = try connect()
        try all.call(ReachabilityInterface.Method.subscribe, [:], more: true)
        _ = try all.status()

        // A change on eth0 only: the unfiltered subscriber hears it, the wifi one does not.
        fixture.server.deliver(.snapshot(makeSnapshot(ethGateway: "10.0.0.254")))
        XCTAssertEqual(try all.status().0.sequence, 2)
        XCTAssertEqual(wifi.next(timeout: 0.3), .timeout)

        // Wi-Fi loses carrier: both hear it.
        fixture.server.deliver(.snapshot(makeSnapshot(ethGateway: "10.0.0.254", wifiCarrier: false)))
        let (wifiUpdate, _) = try wifi.status()
        XCTAssertEqual(wifiUpdate.path.status, .unsatisfied)
        XCTAssertEqual(wifiUpdate.path.unsatisfiedReason, .noCarrier)
        XCTAssertEqual(try all.status().0.path.availableInterfaces, ["eth0"])
    }

    /// SubscribeSummary: the summary at once, then a reply only when status, connectivity or
    /// cost moved, in reachd's direct encoding (JSONEncoder's bytes); a slow reader gets the newest.
    func testSummaryStreamsOnlyWhatItCarries() throws {
        func summary(_ connection: VarlinkConnection) throws -> SummaryReply? {
            guard case let .message(text) = connection.next() else { return nil }
            let reply = try VarlinkCoding.decode(VarlinkReply<SummaryReply>.self, from: Array(text.utf8))
            XCTAssertTrue(reply.isContinuing)
            XCTAssertEqual(Array(text.utf8) + [0], try VarlinkCoding.encodeFrame(reply))
            return reply.parameters
        }
        let connection = try connect()
        try connection.call(ReachabilityInterface.Method.subscribeSummary, nil, more: true)
        let satisfied = SummaryReply(status: .satisfied, connectivity: .unknown, isExpensive: false, isConstrained: false)
        XCTAssertEqual(try summary(connection), satisfied)

        fixture.server.deliver(.snapshot(makeSnapshot(ethGateway: "10.0.0.254")))
        XCTAssertEqual(connection.next(timeout: 0.3), .timeout, "a gateway is not in the summary")
        fixture.server.deliver(.snapshot(NetworkSnapshot()))
        XCTAssertEqual(try summary(connection)?.status, .unsatisfied)
        for index in 1...1000 {
            fixture.server.deliver(.snapshot(index % 2 == 0 ? NetworkSnapshot() : makeSnapshot(ethGateway: "10.0.\(index / 250).\(index % 250 + 1)")))
        }
        var last: SummaryReply?
        while case let .message(text) = connection.next(timeout: 1) {
            last = try VarlinkCoding.decode(VarlinkReply<SummaryReply>.self, from: Array(text.utf8)).parameters
        }
        XCTAssertEqual(last?.status, .unsatisfied, "the newest summary arrives last")

        try connection.call(ReachabilityInterface.Method.getStatus)
        XCTAssertEqual(connection.next(timeout: 0.2), .timeout, "a summary stream serves nothing else")
        let other = try connect()
        try other.call(ReachabilityInterface.Method.subscribeSummary, ["requiredInterfaceType": .string("wifi")], more: true)
        XCTAssertEqual(try other.reply().varlinkError, .invalidParameter(parameter: "requiredInterfaceType"))
    }

    func testSubscribedConnectionServesNothingElse() throws {
        let connection = try connect()
        try connection.call(ReachabilityInterface.Method.subscribe, nil, more: true)
        _ = try connection.status()
        try connection.call(ReachabilityInterface.Method.getStatus)
        XCTAssertEqual(connection.next(timeout: 0.2), .timeout)
        // Flooding it with calls closes it once the discard budget is spent.
        for _ in 0..<2000 { try? connection.call(ReachabilityInterface.Method.getStatus) }  // the server may close first
        XCTAssertEqual(connection.next(), .closed)
    }

    func testSlowSubscriberGetsLatestNotBacklog() throws {
        let connection = try connect()
        try connection.call(ReachabilityInterface.Method.subscribe, nil, more: true)
        _ = try connection.status()
        let count = 3000
        for index in 1...count {
            fixture.server.deliver(.snapshot(makeSnapshot(ethGateway: "10.0.\(index / 250).\(index % 250 + 1)")))
        }
        var received = 0
        var last: StatusReply?
        // Until the newest arrives (a debug build takes a while over 3,000 publishes; the
        // loop writes only between batches of them), or nothing comes for 5 s.
        while last?.sequence != count + 1, case let .message(text) = connection.next(timeout: 5) {
            received += 1
            last = try VarlinkCoding.decode(VarlinkReply<StatusReply>.self, from: Array(text.utf8)).parameters
        }
        XCTAssertEqual(last?.sequence, count + 1, "the newest state always arrives")
        XCTAssertEqual(last?.path.gateways, ["10.0.\(count / 250).\(count % 250 + 1)"])
        XCTAssertLessThan(received, count, "updates were coalesced, not queued")
    }

    func testCoalescedRepliesStillReportEveryChange() throws {
        let connection = try connect()
        try connection.call(ReachabilityInterface.Method.subscribe, nil, more: true)
        var previous = try connection.status().0
        let count = 3000
        for index in 1...count {
            // Ten publishes before the end wlan0 loses carrier and stays so: a change that
            // lands in a skipped reply when the subscriber falls behind.
            fixture.server.deliver(.snapshot(makeSnapshot(ethGateway: "10.0.\(index / 250).\(index % 250 + 1)", wifiCarrier: index < count - 10)))
        }
        var skippedReplies = false
        while previous.sequence != count + 1, case let .message(text) = connection.next(timeout: 5) {
            let reply = try VarlinkCoding.decode(VarlinkReply<StatusReply>.self, from: Array(text.utf8)).parameters!
            if reply.sequence > previous.sequence + 1 { skippedReplies = true }
            // Whatever was skipped, the changes cover every difference from the last reply received.
            let differences = PathChange.between(previous.path, addresses: [], and: reply.path, addresses: [])
            XCTAssertTrue(Set(differences).isSubset(of: Set(reply.changes ?? [])),
                          "#\(reply.sequence) after #\(previous.sequence): \(reply.changes ?? []) misses some of \(differences)")
            previous = reply
        }
        XCTAssertTrue(skippedReplies, "the subscriber fell behind, so replies were coalesced")
        XCTAssertEqual(previous.sequence, count + 1)
        XCTAssertEqual(previous.path.availableInterfaces, ["eth0"])
    }

    func testDisconnectRemovesSubscription() async throws {
        do {
            let connection = try connect()
            try connection.call(ReachabilityInterface.Method.subscribe, ["prohibitedInterfaceTypes": .array([.string("wifi")])], more: true)
            _ = try connection.status()
            let summary = try connect()
            try summary.call(ReachabilityInterface.Method.subscribeSummary, nil, more: true)
            _ = try summary.reply()
            let subscribed = try await fixture.server.subscriptionCount().get()
            XCTAssertEqual(subscribed, 2)
        }
        // The connection is closed when it goes out of scope; the hub must forget it.
        var remaining = -1
        for _ in 0..<100 {
            remaining = try await fixture.server.subscriptionCount().get()
            if remaining == 0 { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTAssertEqual(remaining, 0)
        fixture.server.deliver(.snapshot(makeSnapshot(ethGateway: "10.9.9.9")))
        let connection = try connect()
        try connection.call(ReachabilityInterface.Method.getStatus)
        XCTAssertEqual(try connection.status().0.sequence, 2)
    }
}
