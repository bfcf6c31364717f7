import Logging
import ReachabilityCore

/// How log lines are written: for the journal or for a person at a terminal.
package enum LogOutputStyle: Sendable, Equatable {
    /// `<6>message key=value`: journald reads the syslog priority from the prefix and
    /// stamps the time itself.
    case journal
    /// `2026-11-21T05:30:00Z info reachd: message key=value`.
    case plain
}

/// Formats one log record as text. Pure, so the exact output is tested as a table.
package enum LogFormat {
    /// The syslog priority journald assigns for a `<N>` prefix (sd-daemon(3)).
    package static func syslogPriority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// The record as exactly one line, ending in a newline.
    ///
    /// - Parameters:
    ///   - secondsSinceEpoch: the record's time (plain style only).
    ///   - metadata: appended as `key=value`, sorted by key; values with spaces, quotes or
    ///     `=` are quoted.
    ///   Journal fields (`isJournalField`) are left out: they are the journal's alone.
    ///
    /// Messages and values carry text from the network (portal URLs, probe answers,
    /// certificate names, interface names), so both are written under `UntrustedText`'s rule:
    /// a newline in them is `\n`, never a second line (which journald would take for a
    /// record of its own), and no terminal control reaches whoever reads the log. A caller
    /// with several lines to say logs several records.
    package static func format(
        style: LogOutputStyle, level: Logger.Level, label: String, message: String,
        metadata: Logger.Metadata = [:], secondsSinceEpoch: Int = 0
    ) -> String {
        let body = self.body(message: message, metadata: metadata)
        switch style {
        case .journal:
            return "<\(syslogPriority(level))>\(body)\n"
        case .plain:
            return "\(timestamp(secondsSinceEpoch)) \(level.rawValue) \(label): \(body)\n"
        }
    }

    /// The message with its metadata as `key=value`, sorted by key, journal fields left out;
    /// one line, everything under `UntrustedText`'s rule.
    package static func body(message: String, metadata: Logger.Metadata) -> String {
        var body = UntrustedText.escaped(message)
        for key in metadata.keys.sorted() where !isJournalField(key) {
            body += " \(UntrustedText.escaped(key))=\(quoteIfNeeded(UntrustedText.escaped(render(metadata[key]!))))"
        }
        return body
    }

    /// Whether a metadata key names a journal field (`MESSAGE_ID`, `REACHD_STATUS`): upper-case
    /// letters, digits and `_`, starting with a letter, as journald requires. A record with
    /// such keys becomes a structured journal entry when stderr is the journal; in text they
    /// never appear.
    package static func isJournalField(_ key: String) -> Bool {
        guard let first = key.utf8.first, (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(first) else { return false }
        return key.utf8.allSatisfy {
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_")
        }
    }

    /// A record's journal fields, rendered under `UntrustedText`'s rule (one line, no
    /// controls: `journalctl` and log shippers print them as they are), sorted by key.
    package static func journalFields(_ metadata: Logger.Metadata) -> [(String, String)] {
        metadata.keys.sorted().filter(isJournalField).map { ($0, UntrustedText.escaped(render(metadata[$0]!))) }
    }

    /// `2026-11-21T05:30:00Z`: RFC 3339 in UTC, to the second.
    package static func timestamp(_ secondsSinceEpoch: Int) -> String {
        let days = secondsSinceEpoch.floorDivided(by: 86_400)
        let seconds = secondsSinceEpoch - days * 86_400
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day))T\(two(seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60))Z"
    }

    /// Proleptic Gregorian date of a day count from 1970-01-01 (Howard Hinnant's algorithm).
    static func civilDate(daysSinceEpoch: Int) -> (year: Int, month: Int, day: Int) {
        let z = daysSinceEpoch + 719_468
        let era = z.floorDivided(by: 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func render(_ value: Logger.MetadataValue) -> String {
        switch value {
        case let .string(text): text
        case let .stringConvertible(convertible): convertible.description
        case let .array(items): "[" + items.map(render).joined(separator: ",") + "]"
        case let .dictionary(entries):
            "{" + entries.keys.sorted().map { "\($0):\(render(entries[$0]!))" }.joined(separator: ",") + "}"
        }
    }

    /// Quotes an escaped value (`UntrustedText`: its only whitespace is U+0020, its `\` are
    /// already doubled) when it has a space, a quote or `=`.
    private static func quoteIfNeeded(_ text: String) -> String {
        let needsQuotes = text.isEmpty || text.utf8.contains { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "=") }
        guard needsQuotes else { return text }
        return "\"" + text.replacing("\"", with: "\\\"") + "\""
    }
}

extension Int {
    fileprivate func floorDivided(by divisor: Int) -> Int {
        let quotient = self / divisor
        return (self % divisor < 0) ? quotient - 1 : quotient
    }
}
