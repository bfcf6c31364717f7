import LinuxSystem
import NIOCore
import NIOEmbedded
@testable import ReachServer
import XCTest

/// The server's life: which listener to close, whose closing is fatal, which socket file
/// is the server's, and when connections are still admitted.
final class ServingStateTests: XCTestCase {
    private enum Step {
        /// Adopts listener `index`; expects whether it is the first and which listener (by index) to close.
        case adopt(Int, file: FileIdentity?, first: Bool, closes: Int?)
        /// Shuts down; expects which listener (by index) to close.
        case shutDown(closes: Int?)
    }

    private struct Case {
        var name: String
        var steps: [Step]
        /// After the steps: the listeners (by index) whose closing is fatal.
        var fatal: Set<Int>
        var socketFile: FileIdentity?
        var admits: Bool
    }

    private static let created = FileIdentity(device: 1, inode: 2)
    private static let recreated = FileIdentity(device: 1, inode: 3)

    private let cases: [Case] = [
        Case(name: "before any listener", steps: [], fatal: [], socketFile: nil, admits: true),
        Case(name: "serving on the first listener",
             steps: [.adopt(0, file: created, first: true, closes: nil)], fatal: [0], socketFile: created, admits: true),
        Case(name: "an activated listener has no socket file of ours",
             steps: [.adopt(0, file: nil, first: true, closes: nil)], fatal: [0], socketFile: nil, admits: true),
        Case(name: "a replacement closes the old listener, whose closing is then no failure",
             steps: [.adopt(0, file: created, first: true, closes: nil), .adopt(1, file: recreated, first: false, closes: 0)],
             fatal: [1], socketFile: recreated, admits: true),
        Case(name: "shutdown closes the listener, keeps the socket file to remove, admits no one",
             steps: [.adopt(0, file: created, first: true, closes: nil), .shutDown(closes: 0)], fatal: [], socketFile: created, admits: false),
        Case(name: "shutdown before any listener closes nothing",
             steps: [.shutDown(closes: nil)], fatal: [], socketFile: nil, admits: false),
        Case(name: "a listener adopted after shutdown is closed at once and changes nothing",
             steps: [.adopt(0, file: created, first: true, closes: nil), .shutDown(closes: 0), .adopt(1, file: recreated, first: false, closes: 1)],
             fatal: [], socketFile: created, admits: false),
        Case(name: "shutting down twice closes once",
             steps: [.adopt(0, file: nil, first: true, closes: nil), .shutDown(closes: 0), .shutDown(closes: nil)],
             fatal: [], socketFile: nil, admits: false),
    ]

    func testSteps() {
        let loop = EmbeddedEventLoop()
        for testCase in cases {
            let listeners = (0..<2).map { _ in EmbeddedChannel(loop: loop) as any Channel }
            func index(_ channel: (any Channel)?) -> Int? { channel.flatMap { closed in listeners.firstIndex { $0 === closed } } }
            var state = ServingState.starting
            for (number, step) in testCase.steps.enumerated() {
                let label = "\(testCase.name), step \(number)"
                switch step {
                case let .adopt(listener, file, first, closes):
                    let adoption = state.adopt(listeners[listener], socketFile: file)
                    XCTAssertEqual(adoption.isFirst, first, label)
                    XCTAssertEqual(index(adoption.toClose), closes, label)
                case let .shutDown(closes):
                    XCTAssertEqual(index(state.shutDown()), closes, label)
                }
            }
            XCTAssertEqual(Set(listeners.indices.filter { state.isFatal(closing: listeners[$0]) }), testCase.fatal, testCase.name)
            XCTAssertEqual(state.socketFile, testCase.socketFile, testCase.name)
            XCTAssertEqual(state.admitsConnections, testCase.admits, testCase.name)
        }
    }
}
