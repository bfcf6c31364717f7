@testable import ReachServer
import ReachTargets
import TestSupport
import XCTest

/// The engine hears of stall listeners only when someone starts or stops listening.
final class DaemonLinkTests: XCTestCase {
    func testWhoListens() {
        let cases: [(subscribers: Int, endpoint: Bool, textfile: Bool, listens: Bool)] = [
            (0, false, false, false),
            (1, false, false, true),
            (0, true, false, true),
            (0, false, true, true),
            (3, true, true, true),
        ]
        for (subscribers, endpoint, textfile, listens) in cases {
            XCTAssertEqual(DaemonLink.someoneListens(subscribers: subscribers, metricsEndpoint: endpoint, metricsTextfile: textfile), listens,
                           "\(subscribers) subscribers, endpoint \(endpoint), textfile \(textfile)")
        }
    }

    func testOnlyChangesAreTold() {
        let steps: [(listening: Bool, told: EngineCommand?)] = [
            (false, nil),  // the engine starts out assuming nobody listens
            (true, .someoneListens(true)),
            (true, nil),
            (true, nil),
            (false, .someoneListens(false)),
            (false, nil),
            (true, .someoneListens(true)),
        ]
        var link = DaemonLink(ScriptedEngine(), owner: ScriptedEngine())
        for (index, step) in steps.enumerated() {
            XCTAssertEqual(link.someoneListens(step.listening), step.told, "step \(index)")
            XCTAssertEqual(link.toldSomeoneListens, step.listening, "step \(index)")
        }
    }
}
