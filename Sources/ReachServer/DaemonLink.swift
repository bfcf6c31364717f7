import ReachTargets

/// The daemon around the server as the event loop reaches it: the engine (where requests
/// go, and what it was last told about stall listeners, so it hears only when that changes)
/// and the owner (who reads a reload, and whether one runs and who waits for it).
struct DaemonLink {
    /// What the server asks of the engine (target lookups, what a reload put in force); a
    /// lookup carries its reply.
    let requests: any EngineRequests
    /// Reads the configuration for a reload and puts the socket file back.
    let owner: any ServerOwner
    /// Whether a reload runs, and who waits for one.
    var reloads = ReloadQueue()
    /// Whether the engine was told someone listens for stalls.
    private(set) var toldSomeoneListens = false

    /// A link to the engine behind `requests`, which has been told nobody listens yet, and
    /// to `owner`.
    init(_ requests: any EngineRequests, owner: any ServerOwner) {
        self.requests = requests
        self.owner = owner
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
