import Logging
import ReachabilityCore

extension JournalTrail {
    /// A target the configuration watches changed its answer.
    package static let targetChanged = "5b56d3b318164b7489dc12ed7d702f78"

    /// The log line of a watched target's answer: `target db.internal: satisfied via eth0`.
    /// The target is the configuration's text; the interface is the kernel's name, escaped
    /// by the log handler like every value.
    package static func line(target: String, uid: UInt32?, path: TargetPath) -> String {
        let who = uid.map { "\(target) (uid \($0))" } ?? target
        let how = path.unsatisfiedReason.map { " (\($0.rawValue))" } ?? path.primaryInterface.map { " via \($0)" } ?? ""
        return "target \(who): \(path.status.rawValue)\(how)"
    }

    /// The journal fields of a watched target's answer; empty values are left out. Pure.
    package static func fields(target: String, uid: UInt32?, path: TargetPath) -> Logger.Metadata {
        let fields: [(String, String)] = [
            ("MESSAGE_ID", targetChanged), ("REACHD_TARGET", target), ("REACHD_TARGET_UID", uid.map { "\($0)" } ?? ""),
            ("REACHD_TARGET_STATUS", path.status.rawValue), ("REACHD_TARGET_REASON", path.unsatisfiedReason?.rawValue ?? ""),
            ("REACHD_TARGET_REACHABILITY", path.reachability.rawValue), ("REACHD_TARGET_INTERFACE", path.primaryInterface ?? ""),
        ]
        return Logger.Metadata(uniqueKeysWithValues: fields.filter { !$0.1.isEmpty }.map { ($0.0, .string($0.1)) })
    }
}
