import ReachTargets

/// The engine as the event loop reaches it: where requests go, and what the engine was last
/// told about stall listeners, so it hears only when that changes.
struct EngineLink {
    /// What the server asks of the engine (a reload, target lookups); each request carries its reply.
    let requests: any EngineRequests
    /// Whether the engine was told someone listens for stalls.
    private(set) var toldSomeoneListens = false

    /// A link to the engine behind `requests`, which has been told nobody listens yet.
    init(_ requests: any EngineRequests) {
        self.requests = requests
    }

    /// Whether anyone listens for stalls: a subscriber, the metrics endpoint or the textfile.
    static func someoneListens(subscribers: Int, metricsEndpoint: Bool, metricsTextfile: Bool) -> Bool {
        subscribers > 0 || metricsEndpoint || metricsTextfile
    }

    /// The command to post now that `listening` says whether anyone listens for stalls;
    /// nil when the engine already knows. The engine follows whether the path is
    /// satisfied itself, so a flapping route sends it nothing.
    mutating func someoneListens(_ listening: Bool) -> EngineCommand? {
        guard listening != toldSomeoneListens else { return nil }
        toldSomeoneListens = listening
        return .someoneListens(listening)
    }
}
