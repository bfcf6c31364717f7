/// A published change of the system-wide path, with what a journal entry says about it.
package struct AnnouncedChange: Equatable {
    /// The publication's sequence after the change.
    package var sequence: Int
    /// What changed.
    package var changes: [PathChange]
    /// The path now.
    package var path: Path

    /// The log line, `path changed (gateways): <summary>`: built only when it is logged.
    package var line: String {
        let what = changes.isEmpty ? "" : " (\(changes.map(\.rawValue).joined(separator: ", ")))"
        return "path changed\(what): \(status)"
    }

    /// What systemd shows (`STATUS=`): the path's one-line summary.
    package var status: String { path.summary }

    /// A change as published.
    package init(sequence: Int, changes: [PathChange], path: Path) {
        self.sequence = sequence
        self.changes = changes
        self.path = path
    }
}
