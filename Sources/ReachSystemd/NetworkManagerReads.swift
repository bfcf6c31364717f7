import ReachabilityCore

/// When NetworkManager is read, what a read asks next, and which answer is handed on. Pure:
/// `NetworkManagerWatch` sends each question as a method call and feeds the answers back.
/// A read asks whether NetworkManager is on the bus, then its root object, then every device
/// at once; reads never overlap, and signals during one make another read after it.
package struct NetworkManagerReads {
    /// One method call of a read.
    package enum Question: Hashable, Sendable {
        /// `NameHasOwner`: whether NetworkManager is on the bus.
        case isRunning
        /// `GetAll` of the root object: its devices.
        case root
        /// `GetAll` of one device.
        case device(path: String)
    }

    /// What a question's call brought.
    package enum Answer: Equatable, Sendable {
        /// `NameHasOwner`'s boolean.
        case running(Bool)
        /// `GetAll`'s properties.
        case properties([String: BusValue])
        /// An error, a reply of another shape, or no reply in time.
        case failed
    }

    /// What the watch does next.
    package enum Action: Equatable, Sendable {
        /// Send this question's call.
        case ask(Question)
        /// A read finished with this many devices said something of (logged at debug).
        case read(devices: Int)
        /// Hand on this answer, new since the last one; `announce` when it went from no
        /// device to some or back (logged at info).
        case deliver([String: NetworkManagerDevice], announce: Bool)
    }

    /// A burst of signals (a device activating) is read once, this long after the first.
    package static let settle: Duration = .milliseconds(100)

    /// When the next read starts; nil when none is due.
    private var due: ContinuousClock.Instant?
    /// The read in flight: the device paths still to answer, and what the answered ones said.
    private var reading: (awaiting: Set<String>, devices: [String: NetworkManagerDevice])?
    /// The last answer handed on; nil before the first.
    private var delivered: [String: NetworkManagerDevice]?

    /// The first read is due at `now`.
    package init(now: ContinuousClock.Instant) { due = now }

    /// When `tick` must run next, with nothing else happening; nil while a read is in flight
    /// (its answers come first) or none is due.
    package var nextTick: ContinuousClock.Instant? { reading == nil ? due : nil }

    /// A signal that matters arrived (`NetworkManagerReading.calls(forReading:changed:)`, a
    /// name owner change): a read is due `settle` after the first of a burst.
    package mutating func signalled(now: ContinuousClock.Instant) {
        if due == nil { due = now + Self.settle }
    }

    /// The time is `now`: starts the read that is due, unless one is in flight.
    package mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        guard reading == nil, let due, due <= now else { return [] }
        self.due = nil
        reading = ([], [:])
        return [.ask(.isRunning)]
    }

    /// `question`'s call brought `answer`: the calls that follow, and the answer to hand on
    /// once the read is complete.
    package mutating func answered(_ question: Question, with answer: Answer, now: ContinuousClock.Instant) -> [Action] {
        guard var read = reading else { return [] }
        switch (question, answer) {
        case (.isRunning, .running(true)):
            return [.ask(.root)]
        case let (.root, .properties(root)):
            let paths = Set(NetworkManagerReading.devicePaths(root))
            guard !paths.isEmpty else { return finish([:], now: now) }
            reading = (paths, [:])
            return paths.sorted().map { .ask(.device(path: $0)) }
        case let (.device(path), answer):
            guard read.awaiting.remove(path) != nil else { return [] }
            // A device removed between the calls answers an error: it is left out.
            if case let .properties(properties) = answer, let (name, facts) = NetworkManagerReading.device(properties) {
                read.devices[name] = facts
            }
            reading = read
            return read.awaiting.isEmpty ? finish(read.devices, now: now) : []
        case (.isRunning, _), (.root, _):
            // Not on the bus, or not answering: nothing is said of any device (a restart reads again).
            return finish([:], now: now)
        }
    }

    /// The connection is gone: NetworkManager's word is taken back if it said anything.
    package mutating func closed() -> [Action] {
        (due, reading) = (nil, nil)
        guard let delivered, !delivered.isEmpty else { return [] }
        self.delivered = [:]
        return [.deliver([:], announce: true)]
    }

    private mutating func finish(_ devices: [String: NetworkManagerDevice], now: ContinuousClock.Instant) -> [Action] {
        reading = nil
        var actions: [Action] = [.read(devices: devices.count)]
        if devices != delivered {
            actions.append(.deliver(devices, announce: (delivered ?? [:]).isEmpty != devices.isEmpty))
            delivered = devices
        }
        return actions + tick(now: now)
    }
}
