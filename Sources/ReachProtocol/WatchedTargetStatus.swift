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

/// Reply of `GetStatus` with what the configuration watches: the status reply's fields and
/// `targets` beside them, in one JSON object. `StatusReply` stays what `Subscribe` streams
/// (and what the direct encoder writes); only `GetStatus` carries `targets`.
public struct StatusWithTargets: Codable, Sendable, Hashable {
    /// `sequence`, `instance`, `path`.
    public var status: StatusReply
    /// The watched targets, in the configuration's order; nil when it names none.
    public var targets: [WatchedTargetStatus]?

    /// Creates the reply.
    public init(status: StatusReply, targets: [WatchedTargetStatus]?) {
        self.status = status
        self.targets = targets
    }

    /// Reads the status reply's fields and `targets` from the same object.
    public init(from decoder: any Decoder) throws {
        status = try StatusReply(from: decoder)
        targets = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent([WatchedTargetStatus].self, forKey: .targets)
    }

    /// Writes the status reply's fields and `targets` into one object.
    public func encode(to encoder: any Encoder) throws {
        try status.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(targets, forKey: .targets)
    }

    private enum CodingKeys: String, CodingKey { case targets }
}
