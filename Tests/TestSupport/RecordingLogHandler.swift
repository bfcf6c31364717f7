import Logging
import Synchronization

/// Keeps each message logged, as "LEVEL message [metadata]", so a test can look for one.
public struct RecordingLogHandler: LogHandler {
    /// The lines logged so far, shared by every copy of the handler.
    public final class Lines: Sendable {
        private let lines = Mutex<[String]>([])

        /// No lines yet.
        public init() {}

        /// Every line so far, in order.
        public var all: [String] { lines.withLock { $0 } }

        fileprivate func append(_ line: String) { lines.withLock { $0.append(line) } }
    }

    /// Where the lines go.
    public let lines: Lines
    /// The handler's metadata.
    public var metadata: Logger.Metadata = [:]
    /// Everything is kept.
    public var logLevel: Logger.Level = .debug

    /// A handler writing to `lines`.
    public init(lines: Lines) {
        self.lines = lines
    }

    /// The handler's metadata value for `key`.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Keeps the event's line.
    public func log(event: LogEvent) {
        lines.append("\(event.level) \(event.message)" + (event.metadata.map { " \($0)" } ?? ""))
    }
}
