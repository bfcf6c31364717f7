import LinuxSystem
import Logging
import NIOCore
import ReachMetrics
import ReachSystemd
import SystemPackage

/// The open connections and what they hold: `ServerBudget`'s books, each connection's
/// buffered bytes, the refusals counted by reason and their rate-limited log lines, and when
/// to give freed memory back after a burst. On the event loop only.
final class ConnectionLedger {
    private let eventLoop: any EventLoop
    private let logger: Logger
    private var budget: ServerBudget
    private var logLimiter = LogLimiter()
    private var connections: [Int: any Channel] = [:]
    private var bufferedByConnection: [Int: Int] = [:]
    private var lastConnectionID = 0
    /// Connections refused or closed for breaking a limit, by reason, for the metrics.
    private(set) var refusals: [RefusalReason: Int] = [:]
    /// The most connections open at once since memory was last given back.
    private var peakConnections = 0
    private var memoryTrim: Scheduled<Void>?

    init(limits: ServerLimits, eventLoop: any EventLoop, logger: Logger) {
        self.budget = ServerBudget(limits: limits)
        self.eventLoop = eventLoop
        self.logger = logger
    }

    /// The limits in force.
    var limits: ServerLimits { budget.limits }

    /// Takes `channel` of `uid` into the books, or names the limit that refuses it.
    func admit(_ channel: any Channel, uid: UInt32) -> Result<ConnectionTicket, ServerBudget.Limit> {
        if let limit = budget.admit(uid: uid) { return .failure(limit) }
        lastConnectionID += 1
        let ticket = ConnectionTicket(id: lastConnectionID, uid: uid)
        connections[ticket.id] = channel
        peakConnections = max(peakConnections, budget.connections)
        return .success(ticket)
    }

    /// A connection now holds `bytes` of an unfinished message; nil if the budget allows it,
    /// else the limit it breaks (the caller closes the connection).
    func buffering(_ ticket: ConnectionTicket, bytes: Int) -> ServerBudget.Limit? {
        let old = bufferedByConnection[ticket.id, default: 0]
        if let limit = budget.rebuffer(uid: ticket.uid, from: old, to: bytes) { return limit }
        bufferedByConnection[ticket.id] = bytes == 0 ? nil : bytes
        return nil
    }

    /// Takes a closed connection off the books; false if it was not on them.
    func release(_ ticket: ConnectionTicket) -> Bool {
        guard connections.removeValue(forKey: ticket.id) != nil else { return false }
        budget.release(uid: ticket.uid, bufferedBytes: bufferedByConnection.removeValue(forKey: ticket.id) ?? 0)
        if Self.burstLeft(peak: peakConnections, open: budget.connections) { scheduleMemoryTrim() }
        return true
    }

    /// Whether enough of a burst of clients has gone that glibc should give their memory
    /// back (it keeps what they freed otherwise). Pure.
    static func burstLeft(peak: Int, open: Int) -> Bool {
        peak - open >= 32
    }

    /// Gives freed memory back a couple of seconds after the last of a burst leaves.
    private func scheduleMemoryTrim() {
        memoryTrim?.cancel()
        memoryTrim = eventLoop.assumeIsolated().scheduleTask(in: .seconds(2)) { [self] in
            ProcessResources.returnFreedMemory()
            peakConnections = budget.connections
            memoryTrim = nil
        }
    }

    /// Counts a refusal and logs it, rate-limited per reason: `ticket` says which connection
    /// was cut off, nil that one was refused (the line says who).
    func refuse(_ ticket: ConnectionTicket?, _ reason: RefusalReason, _ what: String) {
        refusals[reason, default: 0] += 1
        let (allowed, suppressed) = logLimiter.allow(reason.label, now: .now)
        guard allowed else { return }
        let more = suppressed > 0 ? " (\(suppressed) more like it since the last such line)" : ""
        let line = ticket.map { "closing connection \($0.id) of uid \($0.uid): \(what)\(more)" } ?? "\(what)\(more)"
        logger.notice("\(line)", metadata: JournalTrail.fields(limit: reason.label, uid: ticket?.uid))
    }

    /// `accept(2)` failed (descriptors exhausted, most likely): how long to wait before
    /// accepting again, so a full descriptor table costs no CPU. Logged at most once a minute.
    func acceptFailed(_ error: IOError) -> TimeAmount {
        let (allowed, suppressed) = logLimiter.allow("accept", now: .now)
        if allowed {
            let more = suppressed > 0 ? " (\(suppressed) more since the last such line)" : ""
            logger.warning("cannot accept connections: \(Errno(rawValue: error.errnoCode)); pausing accepts for 1 s\(more)")
        }
        return .seconds(1)
    }

    /// Closes every open connection (at shutdown).
    func closeAll() -> [EventLoopFuture<Void>] {
        memoryTrim?.cancel()
        return connections.values.map { $0.close().recover { _ in } }
    }
}
