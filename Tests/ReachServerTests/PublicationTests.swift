import ReachabilityCore
import ReachProtocol
@testable import ReachServer
@testable import ReachSystemd
import TestSupport
import XCTest


/// The one place that decides "changed": inputs in, announcements and group updates out.
final class PublicationTests: XCTestCase {
    private static let wifiOnly = PathFilter(requiredInterfaceType: .wifi)
    private static let noWifi = PathFilter(prohibitedInterfaceTypes: [.wifi])

    private enum Input {
        case snapshot(NetworkSnapshot)
        case policy(InterfacePolicy)
    }

    /// What an input should produce: the sequence after it, whether it is announced (and
    /// which changes the line names), and which groups hear about it.
    private struct Expected {
        var sequence: Int
        var announced: [PathChange]?
        var notified: [PathFilter: [PathChange]]
    }

    private struct Case {
        var name: String
        var subscribers: [PathFilter]
        var input: Input
        var expected: Expected
    }

    private let cases: [Case] = [
        Case(name: "the same snapshot again is nothing",
             subscribers: [.none, wifiOnly], input: .snapshot(makeSnapshot()),
             expected: Expected(sequence: 1, announced: nil, notified: [:])),
        Case(name: "the primary's gateway: announced, unfiltered and no-wifi groups hear it, wifi does not",
             subscribers: [.none, wifiOnly, noWifi], input: .snapshot(makeSnapshot(ethGateway: "10.0.0.254")),
             expected: Expected(sequence: 2, announced: [.gateways],
                                notified: [.none: [.gateways], noWifi: [.gateways]])),
        Case(name: "wifi's gateway only: no announcement, only the wifi group hears it",
             subscribers: [.none, wifiOnly], input: .snapshot(makeSnapshot(wifiGateway: "192.168.1.254")),
             expected: Expected(sequence: 1, announced: nil, notified: [wifiOnly: [.gateways]])),
        Case(name: "wifi loses carrier: everyone sees wlan0 leave the available list",
             subscribers: [.none, wifiOnly], input: .snapshot(makeSnapshot(wifiCarrier: false)),
             expected: Expected(sequence: 2, announced: [.availableInterfaces],
                                notified: [.none: [.availableInterfaces],
                                           wifiOnly: [.status, .reachability, .primaryInterface, .gateways, .ipv4, .addresses,
                                                      .dns, .flags, .availableInterfaces, .connectivity]])),
        Case(name: "a change with no subscribers is still announced",
             subscribers: [], input: .snapshot(makeSnapshot(ethGateway: "10.0.0.254")),
             expected: Expected(sequence: 2, announced: [.gateways], notified: [:])),
        Case(name: "a policy that ignores eth0 moves the path to wlan0",
             subscribers: [.none], input: .policy(InterfacePolicy(ignoredPatterns: ["eth*"])),
             expected: Expected(sequence: 2, announced: [.reachability, .primaryInterface, .gateways, .addresses, .availableInterfaces],
                                notified: [.none: [.reachability, .primaryInterface, .gateways, .addresses, .availableInterfaces]])),
        Case(name: "the same policy again is nothing",
             subscribers: [.none], input: .policy(InterfacePolicy()),
             expected: Expected(sequence: 1, announced: nil, notified: [:])),
    ]

    func testInputsAndTheirActions() {
        for testCase in cases {
            var publication = Publication(instance: "i", snapshot: makeSnapshot(), policy: InterfacePolicy())
            for (id, filter) in testCase.subscribers.enumerated() { _ = publication.subscribe(filter: filter, id: id) }
            let actions: [Publication.Action]
            switch testCase.input {
            case let .snapshot(snapshot): actions = publication.update(snapshot: snapshot)
            case let .policy(policy): actions = publication.update(policy: policy)
            }
            var announced: [PathChange]?
            var notified: [PathFilter: [PathChange]] = [:]
            for action in actions {
                switch action {
                case let .announce(change):
                    XCTAssertEqual(change.status, publication.state.path.summary, testCase.name)
                    XCTAssertEqual(change.path, publication.state.path, testCase.name)
                    announced = change.changes
                case let .notify(filter, members, update):
                    XCTAssertNil(notified[filter], "\(testCase.name): one update per group")
                    XCTAssertEqual(members, Set(testCase.subscribers.indices.filter { testCase.subscribers[$0] == filter }),
                                   "\(testCase.name): the group's members")
                    notified[filter] = update.reply.changes
                    XCTAssertEqual(update.reply.sequence, publication.sequence, testCase.name)
                    XCTAssertEqual(update.reply.path, update.answer.path, testCase.name)
                    XCTAssertEqual(update.reply.changes, update.answer.changes(since: update.previous), testCase.name)
                case .notifySummary:
                    XCTFail("\(testCase.name): no summary subscriber")
                }
            }
            XCTAssertEqual(publication.sequence, testCase.expected.sequence, testCase.name)
            XCTAssertEqual(announced, testCase.expected.announced, testCase.name)
            XCTAssertEqual(notified, testCase.expected.notified, testCase.name)
            XCTAssertEqual(publication.statusReply.sequence, testCase.expected.sequence, testCase.name)
        }
    }

    func testTheAnnouncementLine() {
        var publication = Publication(instance: "i", snapshot: makeSnapshot(), policy: InterfacePolicy())
        let actions = publication.update(snapshot: makeSnapshot(ethGateway: "10.0.0.254"))
        let change = AnnouncedChange(sequence: 2, changes: [.gateways], path: publication.state.path)
        XCTAssertEqual(actions.first, .announce(change))
        XCTAssertEqual(change.line, "path changed (gateways): \(publication.state.path.summary)")
        XCTAssertEqual(change.status, publication.state.path.summary)
        let unchanged = AnnouncedChange(sequence: 3, changes: [], path: publication.state.path)
        XCTAssertEqual(unchanged.line, "path changed: \(publication.state.path.summary)")
    }

    func testSubscribersComeAndGoPerFilter() {
        var publication = Publication(instance: "i", snapshot: makeSnapshot(), policy: InterfacePolicy())
        let first = publication.subscribe(filter: Self.wifiOnly, id: 1)
        XCTAssertEqual(first.reply.changes, [], "the first reply reports no change")
        XCTAssertEqual(first.reply.path.primaryInterface, "wlan0")
        XCTAssertEqual(first.previous, first.answer)
        _ = publication.subscribe(filter: Self.wifiOnly, id: 2)
        _ = publication.subscribe(filter: .none, id: 3)
        XCTAssertEqual(publication.subscriberCount, 3)

        XCTAssertEqual(publication.unsubscribe(1), .path(Self.wifiOnly))
        let actions = publication.update(snapshot: makeSnapshot(wifiGateway: "192.168.1.9"))
        XCTAssertEqual(actions.count, 1)
        guard case let .notify(filter, members, _)? = actions.first else { return XCTFail("\(actions)") }
        XCTAssertEqual(filter, Self.wifiOnly)
        XCTAssertEqual(members, [2], "one wifi subscriber left")
        XCTAssertEqual(publication.unsubscribe(2), .path(Self.wifiOnly))
        XCTAssertEqual(publication.update(snapshot: makeSnapshot(wifiGateway: "192.168.1.10")), [], "the wifi group is gone")
        XCTAssertNil(publication.unsubscribe(2), "only once")
        XCTAssertNil(publication.unsubscribe(9), "never subscribed")
        XCTAssertEqual(publication.subscriberCount, 1, "removing an absent subscriber is a no-op")
    }

    /// A group that joins after changes starts from the answer as it is then, with the sequence as it is then.
    func testLateSubscriberStartsFromNow() {
        var publication = Publication(instance: "i", snapshot: makeSnapshot(), policy: InterfacePolicy())
        _ = publication.update(snapshot: makeSnapshot(ethGateway: "10.0.0.254"))
        let first = publication.subscribe(filter: .none, id: 1)
        XCTAssertEqual(first.reply.sequence, 2)
        XCTAssertEqual(first.reply.path.gateways, ["10.0.0.254"])
        XCTAssertEqual(publication.update(snapshot: makeSnapshot(ethGateway: "10.0.0.254")), [])
    }

    /// Summary subscribers hear only of a change of status, connectivity or cost, once each.
    func testSummarySubscribersHearOnlyWhatTheSummarySays() {
        var publication = Publication(instance: "i", snapshot: makeSnapshot(), policy: InterfacePolicy())
        let first = publication.subscribeSummary(id: 7)
        XCTAssertEqual(first, SummaryReply(status: .satisfied, connectivity: .unknown, isExpensive: false, isConstrained: false))
        XCTAssertEqual(publication.subscriberCount, 1)
        func summaries(_ actions: [Publication.Action]) -> [SummaryReply] {
            actions.compactMap { action -> SummaryReply? in
                guard case let .notifySummary(summary, members) = action else { return nil }
                XCTAssertEqual(members, [7])
                return summary
            }
        }

        XCTAssertEqual(summaries(publication.update(snapshot: makeSnapshot(ethGateway: "10.0.0.254"))), [], "a gateway is not in it")
        XCTAssertEqual(summaries(publication.update(snapshot: NetworkSnapshot())),
                       [SummaryReply(status: .unsatisfied, connectivity: .none, isExpensive: false, isConstrained: false)])
        XCTAssertEqual(summaries(publication.update(snapshot: makeSnapshot())), [first])
        let portal = [Int32(2): InterfaceConnectivity(ipv4: .portal, captivePortal: CaptivePortal(captive: true))]
        XCTAssertEqual(summaries(publication.update(connectivity: portal)),
                       [SummaryReply(status: .satisfied, connectivity: .portal, isExpensive: false, isConstrained: false)])
        XCTAssertEqual(summaries(publication.update(policy: InterfacePolicy(ignoredPatterns: ["wlan*"]))), [], "another backup: nothing")

        XCTAssertEqual(publication.unsubscribe(7), .summary)
        XCTAssertEqual(publication.subscriberCount, 0)
        XCTAssertEqual(summaries(publication.update(snapshot: NetworkSnapshot())), [], "nobody listens")
        XCTAssertEqual(publication.subscribeSummary(id: 8).status, .unsatisfied, "a later subscriber starts from now")
    }

    /// Who follows which answer, step by step: the publication alone keeps it, and every
    /// group update names exactly its members.
    func testMembershipSteps() {
        enum Step {
            case subscribe(Int, PathFilter)
            case summary(Int)
            case unsubscribe(Int, left: Subscription?)
        }
        let cases: [(name: String, steps: [Step], count: Int, wifiMembers: Set<Int>?, summaryMembers: Set<Int>?)] = [
            ("nobody", [], 0, nil, nil),
            ("two in one group, one elsewhere", [.subscribe(1, Self.wifiOnly), .subscribe(2, Self.wifiOnly), .subscribe(3, .none)], 3, [1, 2], nil),
            ("a group goes with its last member",
             [.subscribe(1, Self.wifiOnly), .unsubscribe(1, left: .path(Self.wifiOnly)), .unsubscribe(1, left: nil)], 0, nil, nil),
            ("subscribing again moves a connection, never doubles it",
             [.subscribe(1, Self.wifiOnly), .subscribe(1, .none), .subscribe(2, Self.wifiOnly)], 2, [2], nil),
            ("a summary subscriber is in no filter group",
             [.summary(4), .subscribe(5, Self.wifiOnly), .unsubscribe(5, left: .path(Self.wifiOnly))], 1, nil, [4]),
            ("a summary subscriber that switches to a filter leaves the summary",
             [.summary(4), .subscribe(4, Self.wifiOnly)], 1, [4], nil),
        ]
        for testCase in cases {
            var publication = Publication(instance: "i", snapshot: makeSnapshot(), policy: InterfacePolicy())
            for step in testCase.steps {
                switch step {
                case let .subscribe(id, filter): _ = publication.subscribe(filter: filter, id: id)
                case let .summary(id): _ = publication.subscribeSummary(id: id)
                case let .unsubscribe(id, left): XCTAssertEqual(publication.unsubscribe(id), left, testCase.name)
                }
            }
            XCTAssertEqual(publication.subscriberCount, testCase.count, testCase.name)
            // wifi loses carrier: both the wifi group's answer and the summary change.
            var wifiMembers: Set<Int>?
            var summaryMembers: Set<Int>?
            for action in publication.update(snapshot: NetworkSnapshot()) {
                switch action {
                case let .notify(filter, members, _) where filter == Self.wifiOnly: wifiMembers = members
                case let .notifySummary(_, members): summaryMembers = members
                default: break
                }
            }
            XCTAssertEqual(wifiMembers, testCase.wifiMembers, testCase.name)
            XCTAssertEqual(summaryMembers, testCase.summaryMembers, testCase.name)
        }
    }
}
