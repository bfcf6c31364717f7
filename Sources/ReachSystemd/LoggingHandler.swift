import Glibc
import SystemPackage
import Logging
import Synchronization

/// The process-wide log level, changeable while running (a reload may change it).
package final class LogLevelSwitch: Sendable {
    private let storage: Atomic<Int>

    /// Creates a switch at `level`.
    package init(_ level: Logger.Level) {
        storage = Atomic(Self.index(of: level))
    }

    /// The level in force.
    package var level: Logger.Level {
        get { Logger.Level.allCases[storage.load(ordering: .relaxed)] }
        set { storage.store(Self.index(of: newValue), ordering: .relaxed) }
    }

    private static func index(of level: Logger.Level) -> Int {
        Logger.Level.allCases.firstIndex(of: level) ?? 2
    }
}

/// reachd's swift-log handler: journal-style `<N>` lines when stderr is the journal,
/// timestamped readable lines otherwise (see `LogFormat`). A record carrying journal fields
/// (`MESSAGE_ID`, `REACHD_*`: see `JournalTrail`) goes to the journal as one structured
/// entry instead of its line, so it is never logged twice; in plain style only its line is
/// written.
///
/// The level lives in a shared `LogLevelSwitch`, so changing it (on reload, or through any
/// logger's `logLevel`) applies to every logger of the process at once.
package struct ReachdLogHandler: LogHandler {
    /// Every logger's metadata starts empty; set per logger.
    package var metadata: Logger.Metadata = [:]
    /// Adds contextual metadata to every record.
    package var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let style: LogOutputStyle
    private let levelSwitch: LogLevelSwitch
    private let fileDescriptor: Int32

    /// Creates a handler writing to `fileDescriptor` (stderr unless told otherwise).
    package init(
        label: String, style: LogOutputStyle, levelSwitch: LogLevelSwitch, fileDescriptor: Int32 = STDERR_FILENO,
        metadataProvider: Logger.MetadataProvider? = nil
    ) {
        self.label = label
        self.style = style
        self.levelSwitch = levelSwitch
        self.fileDescriptor = fileDescriptor
        self.metadataProvider = metadataProvider
    }

    /// The shared level; setting it changes it for the whole process.
    package var logLevel: Logger.Level {
        get { levelSwitch.level }
        set { levelSwitch.level = newValue }
    }

    /// Gets or sets one metadata value.
    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Formats the record and writes it with as few `write(2)` calls as possible, so lines
    /// from different threads do not interleave.
    package func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit = event.metadata { merged.merge(explicit) { _, new in new } }
        if let error = event.error { merged["error"] = .string("\(error)") }
        if style == .journal {
            let fields = LogFormat.journalFields(merged)
            if !fields.isEmpty {
                let message = LogFormat.body(message: event.message.description, metadata: merged)
                JournalTrail.send([("MESSAGE", message), ("PRIORITY", "\(LogFormat.syslogPriority(event.level))")] + fields)
                return
            }
        }
        let text = LogFormat.format(
            style: style, level: event.level, label: label, message: event.message.description,
            metadata: merged, secondsSinceEpoch: style == .plain ? Int(time(nil)) : 0
        )
        Self.writeAll(text, to: fileDescriptor)
    }

    private static func writeAll(_ text: String, to fileDescriptor: Int32) {
        // One write(2) for the whole record when the kernel takes it (stderr pipes do); a
        // failure is dropped: nothing useful can be done about a log that cannot be written.
        _ = try? FileDescriptor(rawValue: fileDescriptor).writeAll(text.utf8)
    }
}
