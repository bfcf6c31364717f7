import ReachMetrics
import ReachProtocol
@testable import ReachServer
import XCTest

/// What each way of refusing a client counts as and logs. The counts' labels are pinned in
/// `RefusalReasonTests`; the words here may change without renaming a series.
final class ConnectionRefusalTests: XCTestCase {
    func testReasonsAndLines() {
        let cases: [(ConnectionRefusal, RefusalReason, String)] = [
            (.admission(.connections, uid: 7), .connections, "refused a connection of uid 7: limit on connections reached"),
            (.admission(.connectionsPerUser, uid: 7), .connectionsPerUser, "refused a connection of uid 7: limit on connections per user reached"),
            (.buffering(.bufferedBytes), .bufferedBytes, "its unfinished message would exceed the limit on buffered request bytes"),
            (.buffering(.bufferedBytesPerUser), .bufferedBytesPerUser,
             "its unfinished message would exceed the limit on buffered request bytes per user"),
            (.partialMessage(deadline: .seconds(10)), .partialMessageDeadline, "a message was left half-sent for 10.0 seconds"),
            (.framing(.messageTooLarge(limit: 65536)), .messageTooLarge, "message larger than 65536 bytes"),
            (.framing(.emptyMessage), .emptyMessage, "empty message"),
            (.malformed("nested deeper than 32"), .malformedMessage, "malformed message: nested deeper than 32"),
            (.keptSendingWhileSubscribed, .subscriberKeptSending, "a subscribed connection kept sending calls"),
        ]
        for (refusal, reason, line) in cases {
            XCTAssertEqual(refusal.reason, reason, "\(refusal)")
            XCTAssertEqual(refusal.line, line, "\(refusal)")
        }
    }

    /// Where the label used to be cut from the log line (up to its first colon), the typed
    /// reason gives the same series.
    func testLabelsAreWhatTheLogLinesGaveBefore() {
        let cut: [ConnectionRefusal] = [.framing(.messageTooLarge(limit: VarlinkFraming.defaultMaximumMessageSize)), .framing(.emptyMessage),
                                        .malformed("unexpected end"), .keptSendingWhileSubscribed]
        for refusal in cut {
            XCTAssertEqual(refusal.reason.label, String(refusal.line.prefix { $0 != ":" }), "\(refusal)")
        }
    }

    func testMemoryIsGivenBackOnceABurstHasLeft() {
        let cases: [(peak: Int, open: Int, trim: Bool)] = [(0, 0, false), (31, 0, false), (32, 0, true), (100, 69, false), (100, 68, true)]
        for (peak, open, trim) in cases {
            XCTAssertEqual(ConnectionLedger.burstLeft(peak: peak, open: open), trim, "peak \(peak), open \(open)")
        }
    }
}
