import CSystemd
import Glibc
import Logging
import ReachabilityCore

/// reachd's journal event trail: each published change (and each limit a client hits) is
/// logged with journal fields, a fixed `MESSAGE_ID` and `REACHD_*` facts. When stderr is the
/// journal, `ReachdLogHandler` sends such a record as one structured entry instead of its
/// line (nothing is logged twice), so `journalctl MESSAGE_ID=… -o json` is the path's
/// history and log shippers carry it fleet-wide. The IDs are explained in
/// `systemd/reachd.catalog` (`journalctl -x`).
package enum JournalTrail {
    /// The path changed (status, interface, gateways, …).
    package static let pathChanged = "3864895a11494312937013b5eb910ceb"
    /// Only the probes' connectivity verdict or the captive-portal facts changed.
    static let connectivityChanged = "baefa9228f8745a7bcfe5737a6fec199"
    /// A client hit a limit and was refused or disconnected.
    static let limitHit = "a35f83f3185a4995aa0aedc7c141cc1c"

    /// The journal fields of a change; empty values are left out. Pure.
    package static func fields(_ change: AnnouncedChange) -> Logger.Metadata {
        let path = change.path
        let fields: [(String, String)] = [
            ("MESSAGE_ID", change.changes == [.connectivity] ? connectivityChanged : pathChanged),
            ("REACHD_STATUS", path.status.rawValue), ("REACHD_REASON", path.unsatisfiedReason?.rawValue ?? ""),
            ("REACHD_REACHABILITY", path.reachability.rawValue), ("REACHD_PRIMARY", path.primaryInterface ?? ""),
            ("REACHD_PRIMARY_TYPE", path.primaryInterfaceType?.rawValue ?? ""),
            ("REACHD_CHANGES", change.changes.map(\.rawValue).joined(separator: ",")), ("REACHD_SEQUENCE", "\(change.sequence)"),
            ("REACHD_CONNECTIVITY", path.connectivity.rawValue), ("REACHD_CAPTIVE_PORTAL", path.captivePortal?.userPortalURL ?? ""),
            // Which gateway stopped answering; its recovery is the next change's satisfied status.
            ("REACHD_GATEWAY_UNREACHABLE", path.unsatisfiedReason == .gatewayUnreachable ? path.gateways.joined(separator: ",") : ""),
            // Why connectivity is what it is without a probe (dataStall); cleared by the next entry without it.
            ("REACHD_CONNECTIVITY_CAUSE", path.connectivityCause?.rawValue ?? ""),
            ("REACHD_LINK_QUALITY", path.linkQuality.flatMap { $0 == .unknown ? nil : $0.rawValue } ?? ""),
        ]
        return Logger.Metadata(uniqueKeysWithValues: fields.filter { !$0.1.isEmpty }.map { ($0.0, .string($0.1)) })
    }

    /// The journal fields of a limit hit. Pure.
    package static func fields(limit: String, uid: UInt32?) -> Logger.Metadata {
        var fields: Logger.Metadata = ["MESSAGE_ID": .string(limitHit), "REACHD_LIMIT": .string(limit)]
        if let uid { fields["REACHD_UID"] = .string("\(uid)") }
        return fields
    }

    /// Sends one entry (`sd_journal_sendv`); a journal that refuses it loses the entry.
    ///
    /// No value can add a field: each field is an iovec of its own, and `sd_journal_sendv`
    /// writes a value holding a newline in the protocol's binary form (name, newline, 64-bit
    /// length, bytes). Values arrive escaped besides (`LogFormat.journalFields`: one line, no
    /// controls), and a field whose name journald would not take is left out.
    package static func send(_ fields: [(String, String)]) {
        // One buffer holds every FIELD=value; each iovec points into it.
        var bytes: [UInt8] = []
        var ranges: [Range<Int>] = []
        for (name, value) in fields where LogFormat.isJournalField(name) {
            let start = bytes.count
            bytes += "\(name)=\(value)".utf8
            ranges.append(start..<bytes.count)
        }
        bytes.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            let vectors = ranges.map { iovec(iov_base: base + $0.lowerBound, iov_len: $0.count) }
            _ = sd_journal_sendv(vectors, Int32(vectors.count))
        }
    }
}
