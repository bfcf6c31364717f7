import ReachabilityCore

/// A target reachd watches because its configuration names it (`[targets] watch`), as
/// `GetStatus` lists it. Field names are the wire names of
/// `io.reachd.Reachability.WatchedTarget`.
public struct WatchedTargetStatus: Codable, Sendable, Hashable {
    /// The name lowercased, or the address in canonical form.
    public var target: String
    /// The uid its addresses are looked up with, when the configuration gives one (else root's).
    public var uid: Int?
    /// Its answer, as `SubscribeTarget` gives it; nil until the first.
    public var path: TargetPath?

    /// Creates an entry.
    public init(target: String, uid: Int? = nil, path: TargetPath? = nil) {
        self.target = target
        self.uid = uid
        self.path = path
    }
}

/// The machine's last wake from sleep, as `GetStatus` reports it. Field names are the wire
/// names of `io.reachd.Reachability.Wake`.
public struct WakeStatus: Codable, Sendable, Hashable {
    /// When it woke, in seconds since the epoch.
    public var at: Int
    /// How long it slept, in seconds.
    public var asleepSeconds: Int

    /// Creates the entry.
    public init(at: Int, asleepSeconds: Int) {
        self.at = at
        self.asleepSeconds = asleepSeconds
    }
}

/// Reply of `GetStatus` with what only it carries: the status reply's fields, and
/// `targets` and `lastWake` beside them, in one JSON object. `StatusReply` stays what
/// `Subscribe` streams (and what the direct encoder writes).
public struct StatusWithTargets: Codable, Sendable, Hashable {
    /// `sequence`, `instance`, `path`.
    public var status: StatusReply
    /// The watched targets, in the configuration's order; nil when it names none.
    public var targets: [WatchedTargetStatus]?
    /// The last wake from sleep since reachd started; nil before the first.
    public var lastWake: WakeStatus?

    /// Creates the reply.
    public init(status: StatusReply, targets: [WatchedTargetStatus]?, lastWake: WakeStatus? = nil) {
        self.status = status
        self.targets = targets
        self.lastWake = lastWake
    }

    /// Reads the status reply's fields, `targets` and `lastWake` from the same object.
    public init(from decoder: any Decoder) throws {
        status = try StatusReply(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        targets = try container.decodeIfPresent([WatchedTargetStatus].self, forKey: .targets)
        lastWake = try container.decodeIfPresent(WakeStatus.self, forKey: .lastWake)
    }

    /// Writes the status reply's fields, `targets` and `lastWake` into one object.
    public func encode(to encoder: any Encoder) throws {
        try status.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(targets, forKey: .targets)
        try container.encodeIfPresent(lastWake, forKey: .lastWake)
    }

    private enum CodingKeys: String, CodingKey { case targets, lastWake }
}
