import ReachabilityCore

extension ReachdConfiguration {
    /// `[targets]`: hosts reachd watches from start-up on, each as a `SubscribeTarget` stream
    /// would (its name resolved, its addresses looked up with every change of the kernel's
    /// state), for the metrics, the journal and `reachctl status`.
    package struct Targets: Sendable, Equatable, ConfigurationTable {
        /// The most targets `watch` may name: each is looked up again with every kernel change.
        package static let maximum = 64
        /// `watch`: the targets, in the file's order.
        package var watch: [WatchedTarget] = []

        package init() {}
        /// Reads `watch`.
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let watch = try container.setting([WatchedTarget].self, .watch) {
                if watch.count > Self.maximum {
                    throw container.invalid(.watch, "\(watch.count) targets, more than \(Self.maximum) (each is looked up again with every change of the routes)")
                }
                var seen = Set<WatchedTarget>()
                for target in watch where !seen.insert(target).inserted {
                    throw container.invalid(.watch, "\(target) is listed twice")
                }
                self.watch = watch
            }
            try decoder.rejectUnknownKeys(CodingKeys.self)
        }
        private enum CodingKeys: String, CodingKey, CaseIterable { case watch }
    }
}

/// One `[targets] watch` entry: `"db.internal"`, `"10.0.0.5"`, or a table
/// `{ target = "registry.internal", uid = 1000 }` whose addresses are looked up as that user
/// (per-user policy routing applies); without `uid`, as root.
package struct WatchedTarget: Sendable, Hashable, Setting, CustomStringConvertible {
    static let expected = "a string or a table"
    /// The name (lowercased) or the address.
    package var target: Target
    /// The uid given, if any.
    package var uid: UInt32?

    /// A target looked up as `uid` (root when nil).
    package init(_ target: Target, uid: UInt32? = nil) {
        self.target = target
        self.uid = uid
    }

    /// The uid its addresses are looked up with.
    package var lookupUID: UInt32 { uid ?? 0 }

    /// `db.internal`, or `db.internal (uid 1000)`.
    package var description: String { uid.map { "\(target) (uid \($0))" } ?? target.description }

    /// Reads a string, or a table with `target` and `uid`.
    package init(from decoder: any Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self) {
            self.init(try Self.target(text, decoder: decoder))
            return
        }
        let container: KeyedDecodingContainer<CodingKeys>
        do {
            container = try decoder.container(keyedBy: CodingKeys.self)
        } catch DecodingError.typeMismatch(_, let context) {
            throw DecodingError.typeMismatch(Self.self, context)
        }
        guard let text = try container.setting(String.self, .target) else {
            throw DecodingError.keyNotFound(CodingKeys.target, .init(
                codingPath: decoder.codingPath, debugDescription: "missing required key \"target\" (a host name or an address)"
            ))
        }
        let target = try Self.target(text, decoder: decoder)
        let uid = try container.setting(Bounded<UserID>.self, .uid)?.value
        self.init(target, uid: uid)
        try decoder.rejectUnknownKeys(CodingKeys.self)
    }
    private enum CodingKeys: String, CodingKey, CaseIterable { case target, uid }

    private static func target(_ text: String, decoder: any Decoder) throws -> Target {
        switch Target.parse(host: text) {
        case let .success(target): return target
        case let .failure(problem): throw decoder.invalid("\"\(UntrustedText.escaped(text, limit: 120))\" is \(problem)")
        }
    }
}
