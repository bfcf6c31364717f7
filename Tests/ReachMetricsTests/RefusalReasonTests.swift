import ReachMetrics
import ReachProtocol
import XCTest

/// The label values of `reachd_connections_refused_total{reason}`: dashboards and alerts
/// select on them, so each is pinned here and none may change with a log line's wording.
final class RefusalReasonTests: XCTestCase {
    func testEveryReasonKeepsItsLabel() {
        let labels: [RefusalReason: String] = [
            .connections: "connections",
            .connectionsPerUser: "connections per user",
            .bufferedBytes: "buffered request bytes",
            .bufferedBytesPerUser: "buffered request bytes per user",
            .partialMessageDeadline: "partial message deadline",
            .messageTooLarge: "message larger than 65536 bytes",
            .emptyMessage: "empty message",
            .malformedMessage: "malformed message",
            .subscriberKeptSending: "a subscribed connection kept sending calls",
            .metricsConnections: "metrics connections",
            .metricsConnectionsPerPeer: "metrics connections per peer",
            .metricsRequestDeadline: "metrics request deadline",
            .metricsConnectionDeadline: "metrics connection deadline",
            .metricsRequestSize: "metrics request size",
        ]
        XCTAssertEqual(Set(labels.keys), Set(RefusalReason.allCases), "every reason has its label pinned")
        for reason in RefusalReason.allCases {
            XCTAssertEqual(reason.label, labels[reason], "\(reason)")
        }
        XCTAssertEqual(Set(RefusalReason.allCases.map(\.label)).count, RefusalReason.allCases.count, "no two reasons share a series")
    }

    func testFramingErrorsAndMetricsAdmissionMapToTheirReasons() {
        XCTAssertEqual(RefusalReason(VarlinkFramingError.messageTooLarge(limit: VarlinkFraming.defaultMaximumMessageSize)), .messageTooLarge)
        XCTAssertEqual(RefusalReason(VarlinkFramingError.emptyMessage), .emptyMessage)
        XCTAssertEqual(RefusalReason(MetricsAdmission.Refusal.connections), .metricsConnections)
        XCTAssertEqual(RefusalReason(MetricsAdmission.Refusal.connectionsPerPeer), .metricsConnectionsPerPeer)
        // The admission's own words are what the label always was.
        XCTAssertEqual(RefusalReason(MetricsAdmission.Refusal.connectionsPerPeer).label, MetricsAdmission.Refusal.connectionsPerPeer.rawValue)
    }
}
