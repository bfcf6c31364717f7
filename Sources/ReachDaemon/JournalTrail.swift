import CSystemd
import Glibc
import ReachabilityCore

/// A published change of the system-wide path, with what a journal entry says about it.
struct AnnouncedChange: Equatable {
    /// The publication's sequence after the change.
    var sequence: Int
    /// What changed.
    var changes: [PathChange]
    /// The path now.
    var path: Path
}

/// reachd's journal event trail: when stderr is the journal, each published change (and
/// each limit a client hits) is one structured entry with a fixed `MESSAGE_ID` and
/// `REACHD_*` fields, so `journalctl MESSAGE_ID=… -o json` is the path's history and log
/// shippers carry it fleet-wide. The entry replaces the plain log line: nothing is logged
/// twice. The IDs are explained in `systemd/reachd.catalog` (`journalctl -x`).
enum JournalTrail {
    /// The path changed (status, interface, gateways, …).
    static let pathChanged = "3864895a11494312937013b5eb910ceb"
    /// Only the probes' connectivity verdict or the captive-portal facts changed.
    static let connectivityChanged = "baefa9228f8745a7bcfe5737a6fec199"
    /// A client hit a limit and was refused or disconnected.
    static let limitHit = "a35f83f3185a4995aa0aedc7c141cc1c"

    /// The fields of a change's entry, in order; empty values are left out. Pure.
    static func fields(line: String, change: AnnouncedChange) -> [(String, String)] {
        let path = change.path
        let id = change.changes == [.connectivity] ? connectivityChanged : pathChanged
        let fields: [(String, String)] = [
            ("MESSAGE", line), ("MESSAGE_ID", id), ("PRIORITY", "6"),
            ("REACHD_STATUS", path.status.rawValue), ("REACHD_REASON", path.unsatisfiedReason?.rawValue ?? ""),
            ("REACHD_REACHABILITY", path.reachability.rawValue), ("REACHD_PRIMARY", path.primaryInterface ?? ""),
            ("REACHD_PRIMARY_TYPE", path.primaryInterfaceType?.rawValue ?? ""),
            ("REACHD_CHANGES", change.changes.map(\.rawValue).joined(separator: ",")), ("REACHD_SEQUENCE", "\(change.sequence)"),
            ("REACHD_CONNECTIVITY", path.connectivity.rawValue), ("REACHD_CAPTIVE_PORTAL", path.captivePortal?.userPortalURL ?? ""),
        ]
        return fields.filter { !$0.1.isEmpty }
    }

    /// The fields of a limit's entry. Pure.
    static func fields(line: String, limit: String, uid: UInt32?) -> [(String, String)] {
        var fields = [("MESSAGE", line), ("MESSAGE_ID", limitHit), ("PRIORITY", "5"), ("REACHD_LIMIT", limit)]
        if let uid { fields.append(("REACHD_UID", "\(uid)")) }
        return fields
    }

    /// Sends one entry (`sd_journal_sendv`); a journal that refuses it loses the entry,
    /// never the daemon's time: the socket is a datagram socket journald drains.
    static func send(_ fields: [(String, String)]) {
        // One buffer holds every FIELD=value; each iovec points into it.
        var bytes: [UInt8] = []
        var ranges: [Range<Int>] = []
        for (name, value) in fields {
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
