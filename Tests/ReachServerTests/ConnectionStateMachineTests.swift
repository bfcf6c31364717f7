import NIOCore
import ReachProtocol
@testable import ReachServer
import XCTest

/// The connection's decisions, event by event: one call at a time, back-pressure, the
/// stream and its coalescer, closing once.
final class ConnectionStateMachineTests: XCTestCase {
    /// A stream reply that remembers every change it carries.
    private struct Change: Coalescible, Equatable {
        var values: [Int]
        func coalesced(with newer: Change) -> Change { Change(values: values + newer.values) }
    }

    private typealias Machine = ConnectionStateMachine<Change>

    private enum Event {
        case received(String, writable: Bool = true)
        case answerDeferred
        case answerArrived
        case nextCall(writable: Bool)
        case streamStarted(writable: Bool)
        case readRequested(writable: Bool)
        case writability(Bool)
        case offer(Int)
        case close(ConnectionRefusal?)
    }

    private static func apply(_ event: Event, to machine: inout Machine) -> Machine.Action {
        switch event {
        case let .received(text, writable): return machine.received(ByteBuffer(string: text), writable: writable)
        case .answerDeferred:
            machine.answerDeferred()
            return .none
        case .answerArrived: return machine.answerArrived()
        case let .nextCall(writable): return machine.nextCall(writable: writable)
        case let .streamStarted(writable): return machine.streamStarted(writable: writable)
        case let .readRequested(writable): return machine.readRequested(writable: writable)
        case let .writability(writable): return machine.writabilityChanged(writable: writable)
        case let .offer(value): return machine.offer(Change(values: [value]))
        case let .close(refusal): return machine.close(refusal)
        }
    }

    private static func handle(_ text: String) -> Machine.Action { .handle(ByteBuffer(string: text)) }
    private static func frame(_ values: Int...) -> Machine.Action { .writeFrame(Change(values: values)) }

    func testEventsInActionsOut() {
        let cases: [(name: String, steps: [(Event, Machine.Action)])] = [
            ("plain calls are handled as they come", [
                (.received("a"), Self.handle("a")), (.received("b"), Self.handle("b")), (.readRequested(writable: true), .read),
            ]),
            ("calls behind a deferred answer wait, in order, and so does reading", [
                (.received("a"), Self.handle("a")), (.answerDeferred, .none),
                (.received("b"), .none), (.received("c"), .none), (.readRequested(writable: true), .none),
                (.answerArrived, .writeAnswer),
                (.nextCall(writable: true), Self.handle("b")), (.nextCall(writable: true), Self.handle("c")),
                (.nextCall(writable: true), .read), (.nextCall(writable: true), .none),
            ]),
            ("a queued call answered later keeps the rest waiting", [
                (.received("a"), Self.handle("a")), (.answerDeferred, .none), (.received("b"), .none), (.received("c"), .none),
                (.answerArrived, .writeAnswer), (.nextCall(writable: true), Self.handle("b")), (.answerDeferred, .none),
                (.nextCall(writable: true), .none), (.received("d"), .none),
                (.answerArrived, .writeAnswer), (.nextCall(writable: true), Self.handle("c")),
                (.nextCall(writable: true), Self.handle("d")), (.nextCall(writable: true), .none),
            ]),
            ("a client not reading its replies is not read from", [
                (.readRequested(writable: false), .none), (.writability(false), .none),
                (.writability(true), .read), (.writability(true), .none), (.readRequested(writable: true), .read),
            ]),
            ("calls that arrive while replies cannot be written wait, then are answered in order", [
                (.received("a", writable: false), .none), (.received("b"), .none), (.readRequested(writable: false), .none),
                (.writability(true), Self.handle("a")), (.nextCall(writable: true), Self.handle("b")),
                (.nextCall(writable: true), .read), (.nextCall(writable: true), .none),
            ]),
            ("calls queued behind an answer wait for a writable socket too", [
                (.received("a"), Self.handle("a")), (.answerDeferred, .none), (.received("b"), .none),
                (.answerArrived, .writeAnswer), (.nextCall(writable: false), .none), (.writability(false), .none),
                (.writability(true), Self.handle("b")), (.nextCall(writable: true), .none),
            ]),
            ("a read held during an answer waits for a writable socket", [
                (.received("a"), Self.handle("a")), (.answerDeferred, .none), (.readRequested(writable: true), .none),
                (.writability(true), .none), (.answerArrived, .writeAnswer), (.nextCall(writable: false), .none),
                (.writability(true), .read),
            ]),
            ("a stream's replies go at once; a slow reader gets the newest with every change", [
                (.received("s"), Self.handle("s")), (.streamStarted(writable: true), .none),
                (.offer(1), Self.frame(1)), (.offer(2), Self.frame(2)), (.writability(false), .none),
                (.offer(3), .none), (.offer(4), .none), (.writability(true), Self.frame(3, 4)), (.offer(5), Self.frame(5)),
            ]),
            ("a stream waits while the socket is full", [
                (.streamStarted(writable: false), .none), (.offer(1), .none), (.offer(2), .none),
                (.writability(true), Self.frame(1, 2)), (.writability(true), .none), (.writability(false), .none),
                (.offer(3), .none), (.writability(true), Self.frame(3)),
            ]),
            ("a stream is always read, and releases a read held before it", [
                (.readRequested(writable: false), .none), (.received("s"), Self.handle("s")),
                (.streamStarted(writable: false), .read), (.readRequested(writable: false), .read),
            ]),
            ("no stream, no replies", [
                (.offer(1), .none), (.writability(true), .none), (.streamStarted(writable: true), .none),
                (.streamStarted(writable: true), .none), (.offer(2), Self.frame(2)),
            ]),
            ("calls a streaming connection sends are dropped, then too many close it", [
                (.streamStarted(writable: true), .none), (.received("abcd"), .none), (.received("abcd"), .none),
                (.received("a"), .close(.keptSendingWhileSubscribed)), (.received("a"), .none), (.offer(1), .none),
            ]),
            ("calls still queued when a stream starts are dropped", [
                (.received("a"), Self.handle("a")), (.answerDeferred, .none), (.received("s"), .none), (.received("b"), .none),
                (.answerArrived, .writeAnswer), (.nextCall(writable: true), Self.handle("s")),
                (.streamStarted(writable: true), .none), (.nextCall(writable: true), .none),
            ]),
            ("only the first close counts, and nothing is looked at after it", [
                (.close(.malformed("x")), .close(.malformed("x"))), (.close(nil), .none),
                (.received("a"), .none), (.readRequested(writable: true), .read), (.answerArrived, .none),
            ]),
            ("an answer arriving after the close is dropped", [
                (.received("a"), Self.handle("a")), (.answerDeferred, .none), (.received("b"), .none),
                (.close(.framing(.emptyMessage)), .close(.framing(.emptyMessage))),
                (.answerArrived, .none), (.nextCall(writable: true), .none),
            ]),
            ("a close of reachd's own blames nobody", [
                (.streamStarted(writable: true), .none), (.close(nil), .close(nil)), (.offer(1), .none),
            ]),
        ]
        for (name, steps) in cases {
            var machine = Machine(maximumDiscardedBytes: 10)
            for (index, (event, expected)) in steps.enumerated() {
                XCTAssertEqual(Self.apply(event, to: &machine), expected, "\(name), step \(index + 1): \(event)")
            }
        }
    }
}
