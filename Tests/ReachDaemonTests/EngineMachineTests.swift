import Glibc
import NetlinkMonitor
import NIOCore
import NIOEmbedded
import ReachabilityCore
@testable import ReachDaemon
import ReachServer
import XCTest
import ReachTargets


/// The engine's machine as tables: what woke it (and what the IO it asked for found) in,
/// its actions out, wake-up after wake-up, fed as `ReachabilityEngine.run` feeds them.
final class EngineMachineTests: XCTestCase {
    /// What reading the netlink event socket found.
    enum NetlinkRead {
        case drained(DrainOutcome)
        case failed
    }

    /// One wake-up: what woke the engine, what the IO the machine asked for found, the
    /// snapshot an evaluation takes, and the actions expected.
    struct Turn {
        /// When, after the machine started.
        var at: Duration = .zero
        var signals: [Int32] = []
        var commands: [EngineCommand] = []
        var netlink: NetlinkRead?
        var resolverFiles: ResolverFilesRead?
        var socketFileMayBeGone = false
        /// When a held RA option is due (after the start), as the kernel view says once the
        /// wake-up's reads are done, and after a release.
        var held: Duration?
        var heldAfter: Duration?
        /// What a reload's re-read of the resolver files says.
        var resolverChangesOnReload = false
        var resync: ResyncOutcome?
        var announcementsReleased = false
        /// Whether `.learnDNS64` changed what the link carries.
        var learnChanges = true
        var snapshot = NetworkSnapshot()
        /// The machine's time asleep since boot as the wake-up's first look says (nil: the
        /// same as before, so the look is left out).
        var asleep: Duration?
        var expect: [EngineAction]
    }

    /// A table row: the loop's settings and its wake-ups in order.
    struct Case {
        var name: String
        var watchdog: Duration?
        var recheckSchedule = LookupRecheck.schedule
        var backoff = RetryBackoff.netlinkResync
        var resolverRest: Duration = .milliseconds(100)
        var stallPollInterval: Duration?
        var turns: [Turn]
    }

    private let start = ContinuousClock.now
    private let eventLoop = EmbeddedEventLoop()
    private var lookupPromises: [EventLoopPromise<[TargetLookup]>] = []

    override func tearDown() {
        // Every promise is completed: NIO calls a dropped one a leak.
        for promise in lookupPromises { promise.succeed([]) }
        lookupPromises = []
    }

    private static let route = DefaultRoute(family: .ipv4, nextHops: [NextHop(interfaceIndex: 2, gateway: IPAddress("192.0.2.1"))])
    private static let throughRoute = NetworkSnapshot(
        lookups: [.ipv4: .route(RouteLookupResult(outputInterface: 2, gateway: IPAddress("192.0.2.1"), table: 254))]
    )
    private static let noRoute = NetworkSnapshot(lookups: [.ipv4: .failure(.noRoute)])
    /// eth0 up, addressed, its default route the lookup's answer: a satisfied path.
    private static let satisfied = NetworkSnapshot(
        links: [2: Link(index: 2, name: "eth0", flags: [.up, .lowerUp, .running], operState: .up, carrier: true)],
        addresses: [InterfaceAddress(interfaceIndex: 2, address: IPAddress("192.0.2.2")!, prefixLength: 24)],
        defaultRoutes: [route],
        lookups: [.ipv4: .route(RouteLookupResult(outputInterface: 2, gateway: IPAddress("192.0.2.1"), table: 254))]
    )
    private static let ignoringEth = InterfacePolicy(ignoredPatterns: ["eth*"])
    private static let target = TargetKey(address: IPAddress("192.0.2.80")!, uid: 0)
    private static let otherTarget = TargetKey(address: IPAddress("2001:db8::80")!, uid: 1000)
    private static let unchanged = NetlinkRead.drained(DrainOutcome(events: 1))
    private static let changed = NetlinkRead.drained(DrainOutcome(changed: true, events: 1))

    private func time(_ offset: Duration) -> ContinuousClock.Instant { start + offset }

    private func lookupPromise() -> EventLoopPromise<[TargetLookup]> {
        let promise = eventLoop.makePromise(of: [TargetLookup].self)
        lookupPromises.append(promise)
        return promise
    }

    /// Plays the turns as `ReachabilityEngine.run` does and compares each wake-up's actions.
    private func play(_ row: Case, file: StaticString = #filePath, line: UInt = #line) {
        var machine = EngineMachine(now: start, watchdogInterval: row.watchdog, recheckSchedule: row.recheckSchedule, backoff: row.backoff,
                                    resolverRest: row.resolverRest, stallPollInterval: row.stallPollInterval)
        for (index, turn) in row.turns.enumerated() {
            let actions = Self.take(turn, &machine, at: time(turn.at), time: time)
            XCTAssertEqual(actions, turn.expect, "\(row.name), wake-up \(index) at \(turn.at)", file: file, line: line)
            if Self.ends(actions) {
                XCTAssertEqual(index, row.turns.count - 1, "\(row.name): the machine stopped at wake-up \(index)", file: file, line: line)
                return
            }
        }
    }

    /// One wake-up's inputs, `.timers` and `.quiet`, each action's outcome (as `turn`
    /// scripts it) handed back in at once; every action, in order.
    static func take(
        _ turn: Turn, _ machine: inout EngineMachine, at now: ContinuousClock.Instant, time: (Duration) -> ContinuousClock.Instant
    ) -> [EngineAction] {
        var inputs: [EngineInput] = turn.asleep.map { [.clocks(asleepSinceBoot: $0)] } ?? []
        inputs += turn.signals.map(EngineInput.signal) + turn.commands.map(EngineInput.command)
        switch turn.netlink {
        case let .drained(outcome)?: inputs.append(.drained(outcome))
        case .failed?: inputs.append(.readFailed)
        case nil: break
        }
        if let read = turn.resolverFiles { inputs.append(.resolverFiles(read, watched: true)) }
        if turn.socketFileMayBeGone { inputs.append(.socketFileMayBeGone) }
        inputs += [.timers(heldAnnouncementsDue: turn.held.map(time)), .quiet]
        var actions: [EngineAction] = []
        func handle(_ input: EngineInput) {
            for action in machine.handle(input, at: now) {
                actions.append(action)
                switch action {
                case .rereadResolverFiles: handle(.resolverFiles(turn.resolverChangesOnReload ? .changed : .unchanged, watched: false))
                case .resynchronize: if let resync = turn.resync { handle(.resynced(resync)) }
                case .releaseHeldAnnouncements: handle(.announcementsReleased(changed: turn.announcementsReleased, nextDue: turn.heldAfter.map(time)))
                case .learnDNS64: handle(.nat64Learnt(changed: turn.learnChanges))
                case .evaluate: handle(.evaluated(turn.snapshot))
                default: break
                }
            }
        }
        inputs.forEach(handle)
        return actions
    }

    private static func ends(_ actions: [EngineAction]) -> Bool {
        actions.contains { action in
            switch action {
            case .stop, .fail: true
            default: false
            }
        }
    }

    private static let sleep = EngineAction.sleep(until: nil, pollingNetlink: true)

    // MARK: - Two sources in one wake-up

    func testAnEvaluationAskedForIsNeverTakenBackByABatchThatChangedNothing() {
        let rows = [
            Case(name: "a new target and an RA that changed nothing", turns: [
                Turn(commands: [.monitorTargets(add: [Self.target], remove: [])], netlink: Self.unchanged,
                     expect: [.watch([Self.target.address]), .evaluate, Self.sleep]),
            ]),
            Case(name: "a reload with a resolver change and a batch that changed nothing", turns: [
                Turn(commands: [.reloaded(policy: InterfacePolicy())], netlink: Self.unchanged, resolverChangesOnReload: true,
                     expect: [.rereadResolverFiles, .evaluate, Self.sleep]),
            ]),
            Case(name: "a resolver file event and a batch that changed nothing", turns: [
                Turn(netlink: Self.unchanged, resolverFiles: .changed,
                     expect: [.evaluate, .sleep(until: time(.milliseconds(100)), pollingNetlink: true, pollingResolverFiles: false)]),
            ]),
            Case(name: "a released RA option and a batch that changed nothing", turns: [
                Turn(at: .seconds(1), netlink: Self.unchanged, held: .seconds(1), announcementsReleased: true,
                     expect: [.releaseHeldAnnouncements, .evaluate, Self.sleep]),
            ]),
            Case(name: "a due recheck and a batch that changed nothing", recheckSchedule: [.milliseconds(5)], turns: [
                Turn(netlink: .drained(DrainOutcome(changed: true, removedDefaultRoutes: [Self.route])), snapshot: Self.throughRoute,
                     expect: [.evaluate, .report(.lookingAgain(after: .milliseconds(5), attempt: 1)),
                              .sleep(until: time(.milliseconds(5)), pollingNetlink: true)]),
                Turn(at: .milliseconds(5), netlink: Self.unchanged, snapshot: Self.noRoute, expect: [.evaluate, Self.sleep]),
            ]),
            Case(name: "a new target while a failed read is resynchronised", turns: [
                Turn(commands: [.monitorTargets(add: [Self.target], remove: [])], netlink: .failed,
                     resync: .resynchronized(removed: []), expect: [.watch([Self.target.address]), .resynchronize, .evaluate, Self.sleep]),
            ]),
        ]
        for row in rows { play(row) }
    }

    // MARK: - One source

    func testEachSourceAlone() {
        let lookup = lookupPromise()
        let rows = [
            Case(name: "nothing: wait for an event, no timer", turns: [Turn(expect: [Self.sleep])]),
            Case(name: "a batch that changed something", turns: [Turn(netlink: Self.changed, expect: [.evaluate, Self.sleep])]),
            Case(name: "a batch that changed nothing", turns: [Turn(netlink: Self.unchanged, expect: [Self.sleep])]),
            Case(name: "SIGHUP: the loop is asked to reload", turns: [Turn(signals: [SIGHUP], expect: [.requestReload, Self.sleep])]),
            Case(name: "the loop reloaded: the resolver files are read again", turns: [
                Turn(commands: [.reloaded(policy: InterfacePolicy())], resolverChangesOnReload: true,
                     expect: [.rereadResolverFiles, .evaluate, Self.sleep]),
            ]),
            Case(name: "the loop reloaded, resolver files unchanged", turns: [
                Turn(commands: [.reloaded(policy: InterfacePolicy())], expect: [.rereadResolverFiles, Self.sleep]),
            ]),
            Case(name: "a lookup is answered, nothing published", turns: [
                Turn(commands: [.lookUpTargets([Self.target], reply: lookup)], expect: [.lookUp([Self.target], reply: lookup), Self.sleep]),
            ]),
            Case(name: "the socket's directory changed", turns: [Turn(socketFileMayBeGone: true, expect: [.restoreSocket, Self.sleep])]),
            Case(name: "targets are counted: watched until the last one asking releases them", turns: [
                Turn(commands: [.monitorTargets(add: [Self.target, Self.otherTarget], remove: [])],
                     expect: [.watch([Self.target.address, Self.otherTarget.address]), .evaluate, Self.sleep]),
                Turn(commands: [.monitorTargets(add: [Self.target], remove: [])],
                     expect: [.watch([Self.target.address, Self.otherTarget.address]), .evaluate, Self.sleep]),
                Turn(commands: [.monitorTargets(add: [], remove: [Self.target, Self.otherTarget])],
                     expect: [.watch([Self.target.address]), Self.sleep]),
                Turn(commands: [.monitorTargets(add: [], remove: [Self.target])], expect: [.watch([]), Self.sleep]),
            ]),
        ]
        for row in rows { play(row) }
    }

    // MARK: - Stopping

    func testSignalsAndFailuresStopTheLoopAndAbandonWhatIsLeft() {
        let (first, second) = (lookupPromise(), lookupPromise())
        let rows = [
            Case(name: "SIGTERM: commands taken with it are answered, not carried out", turns: [
                Turn(signals: [SIGTERM], commands: [.reloaded(policy: InterfacePolicy()), .lookUpTargets([Self.target], reply: first)],
                     netlink: Self.changed,
                     expect: [.stop(signal: SIGTERM), .abandon(.reloaded(policy: InterfacePolicy())),
                              .abandon(.lookUpTargets([Self.target], reply: first))]),
            ]),
            Case(name: "SIGHUP then SIGINT: the reload is asked for first", turns: [
                Turn(signals: [SIGHUP, SIGINT], expect: [.requestReload, .stop(signal: SIGINT)]),
            ]),
            Case(name: "a fatal command: earlier ones are carried out, later ones abandoned", turns: [
                Turn(commands: [.lookUpTargets([Self.target], reply: first), .fail("the loop broke"), .lookUpTargets([Self.target], reply: second)],
                     netlink: Self.changed,
                     expect: [.lookUp([Self.target], reply: first), .fail("the loop broke"), .abandon(.lookUpTargets([Self.target], reply: second))]),
            ]),
        ]
        for row in rows { play(row) }
    }

    // MARK: - Timers

    func testAFailedReadIsResynchronisedOnTheBackoffUntilItWorks() {
        play(Case(name: "receive failure, two failed resyncs, then one that works", turns: [
            Turn(netlink: .failed, resync: .failed("ENOBUFS"),
                 expect: [.resynchronize, .report(.resyncFailed("ENOBUFS", retryingAfter: .milliseconds(100))),
                          .sleep(until: time(.milliseconds(100)), pollingNetlink: false)]),
            // A command before the retry is due: netlink stays left out, no resync yet.
            Turn(at: .milliseconds(50), signals: [SIGHUP], expect: [.requestReload, .sleep(until: time(.milliseconds(100)), pollingNetlink: false)]),
            Turn(at: .milliseconds(100), resync: .failed("EIO"),
                 expect: [.resynchronize, .report(.resyncFailed("EIO", retryingAfter: .milliseconds(200))),
                          .sleep(until: time(.milliseconds(300)), pollingNetlink: false)]),
            Turn(at: .milliseconds(300), resync: .resynchronized(removed: []), expect: [.resynchronize, .evaluate, Self.sleep]),
            // The next failure starts the backoff over.
            Turn(at: .seconds(5), netlink: .failed, resync: .failed("EIO"),
                 expect: [.resynchronize, .report(.resyncFailed("EIO", retryingAfter: .milliseconds(100))),
                          .sleep(until: time(.milliseconds(5100)), pollingNetlink: false)]),
        ]))
    }

    func testAResyncThatFailsThroughEveryRetryStopsTheEngine() {
        var turns = [Turn]()
        var backoff = RetryBackoff.netlinkResync
        var now = Duration.zero
        while let delay = backoff.failed() {
            turns.append(Turn(at: now, netlink: turns.isEmpty ? .failed : nil, resync: .failed("EIO"), expect: [
                .resynchronize, .report(.resyncFailed("EIO", retryingAfter: delay)), .sleep(until: time(now + delay), pollingNetlink: false),
            ]))
            now += delay
        }
        turns.append(Turn(at: now, resync: .failed("EIO"), expect: [.resynchronize, .fail("netlink stayed broken through 10 retries: EIO")]))
        XCTAssertEqual(turns.count, 11)
        play(Case(name: "every retry fails", turns: turns))
    }

    func testAStaleLookupIsMadeAgainOnTheScheduleThenTrusted() {
        let removal = NetlinkRead.drained(DrainOutcome(changed: true, removedDefaultRoutes: [Self.route]))
        play(Case(name: "recheck until the lookup stops answering through the removed route", recheckSchedule: [.milliseconds(1), .milliseconds(2)], turns: [
            Turn(netlink: removal, snapshot: Self.throughRoute,
                 expect: [.evaluate, .report(.lookingAgain(after: .milliseconds(1), attempt: 1)), .sleep(until: time(.milliseconds(1)), pollingNetlink: true)]),
            // Woken early (a command): not due yet, the timer stays.
            Turn(at: .microseconds(500), commands: [.monitorTargets(add: [], remove: [])],
                 expect: [.watch([]), .sleep(until: time(.milliseconds(1)), pollingNetlink: true)]),
            Turn(at: .milliseconds(1), snapshot: Self.throughRoute,
                 expect: [.evaluate, .report(.lookingAgain(after: .milliseconds(2), attempt: 2)), .sleep(until: time(.milliseconds(3)), pollingNetlink: true)]),
            Turn(at: .milliseconds(3), snapshot: Self.noRoute, expect: [.evaluate, Self.sleep]),
        ]))
        play(Case(name: "a legitimate answer: the schedule is spent, then the kernel's answer stands", recheckSchedule: [.milliseconds(1), .milliseconds(2)], turns: [
            Turn(netlink: removal, snapshot: Self.throughRoute,
                 expect: [.evaluate, .report(.lookingAgain(after: .milliseconds(1), attempt: 1)), .sleep(until: time(.milliseconds(1)), pollingNetlink: true)]),
            Turn(at: .milliseconds(1), snapshot: Self.throughRoute,
                 expect: [.evaluate, .report(.lookingAgain(after: .milliseconds(2), attempt: 2)), .sleep(until: time(.milliseconds(3)), pollingNetlink: true)]),
            Turn(at: .milliseconds(3), snapshot: Self.throughRoute, expect: [.evaluate, .report(.gaveUpRechecking), Self.sleep]),
            Turn(at: .seconds(1), expect: [Self.sleep]),
        ]))
    }

    func testTheWatchdogIsPingedOnItsIntervalWhateverElseHappens() {
        play(Case(name: "watchdog every 10 s", watchdog: .seconds(10), turns: [
            Turn(expect: [.sleep(until: time(.seconds(10)), pollingNetlink: true)]),
            Turn(at: .seconds(4), netlink: Self.changed, expect: [.evaluate, .sleep(until: time(.seconds(10)), pollingNetlink: true)]),
            Turn(at: .seconds(10), expect: [.pingWatchdog, .sleep(until: time(.seconds(20)), pollingNetlink: true)]),
            // Late (the engine was busy): the next ping counts from this one.
            Turn(at: .seconds(21), netlink: Self.changed, expect: [.evaluate, .pingWatchdog, .sleep(until: time(.seconds(31)), pollingNetlink: true)]),
        ]))
    }

    func testHeldAnnouncementsAreReleasedWhenDue() {
        play(Case(name: "an RA option held over its link's budget", turns: [
            Turn(netlink: Self.unchanged, held: .seconds(2), expect: [.sleep(until: time(.seconds(2)), pollingNetlink: true)]),
            // Not due yet.
            Turn(at: .seconds(1), netlink: Self.unchanged, held: .seconds(2), expect: [.sleep(until: time(.seconds(2)), pollingNetlink: true)]),
            Turn(at: .seconds(2), held: .seconds(2), heldAfter: .seconds(3), announcementsReleased: true,
                 expect: [.releaseHeldAnnouncements, .evaluate, .sleep(until: time(.seconds(3)), pollingNetlink: true)]),
            // Released, but the link went down meanwhile: nothing changed, nothing published.
            Turn(at: .seconds(3), held: .seconds(3), expect: [.releaseHeldAnnouncements, Self.sleep]),
        ]))
    }

    func testTheEarliestTimerIsTheWakeUp() {
        play(Case(name: "watchdog, recheck, resync retry and a held RA at once", watchdog: .seconds(10), recheckSchedule: [.milliseconds(8)], turns: [
            Turn(netlink: .drained(DrainOutcome(changed: true, removedDefaultRoutes: [Self.route])), held: .milliseconds(20),
                 snapshot: Self.throughRoute,
                 expect: [.evaluate, .report(.lookingAgain(after: .milliseconds(8), attempt: 1)), .sleep(until: time(.milliseconds(8)), pollingNetlink: true)]),
            Turn(at: .milliseconds(1), netlink: .failed, held: .milliseconds(20), resync: .failed("EIO"),
                 expect: [.resynchronize, .report(.resyncFailed("EIO", retryingAfter: .milliseconds(100))),
                          .sleep(until: time(.milliseconds(8)), pollingNetlink: false)]),
            Turn(at: .milliseconds(8), held: .milliseconds(20), snapshot: Self.noRoute,
                 expect: [.evaluate, .sleep(until: time(.milliseconds(20)), pollingNetlink: false)]),
        ]))
    }

    /// A sleep: logind's word pauses the socket reads (the verdicts stand); the wake, seen
    /// by logind or by the clocks alone, starts the stall watch afresh with a read at once,
    /// reads the gateways again, re-evaluates and tells the loop, once.
    func testSleepPausesTheReadsAndAWakeStartsThemAfresh() {
        let poll = { (at: Duration) in EngineAction.sleep(until: self.time(at), pollingNetlink: true) }
        let woke = { (after: Duration) -> [EngineAction] in [.startStallWatchAfresh, .rereadGateways, .announceWake(after: after)] }
        play(Case(name: "logind", stallPollInterval: .seconds(10), turns: [
            Turn(netlink: Self.changed, snapshot: Self.satisfied, expect: [.evaluate, Self.sleep]),
            Turn(at: .seconds(1), commands: [.someoneListens(true)], expect: [poll(.seconds(11))]),
            Turn(at: .seconds(11), expect: [.readSockets, poll(.seconds(21))]),
            // Paused: no forget (nothing is published about the sleep), no timer.
            Turn(at: .seconds(12), commands: [.systemSleeps(true)], asleep: .zero, expect: [Self.sleep]),
            Turn(at: .seconds(13), netlink: Self.changed, snapshot: Self.satisfied, asleep: .zero, expect: [.evaluate, Self.sleep]),
            // Seven hours later on CLOCK_BOOTTIME, a second on CLOCK_MONOTONIC.
            Turn(at: .seconds(14 + 25_920), commands: [.systemSleeps(false)], snapshot: Self.satisfied, asleep: .seconds(25_920),
                 expect: woke(.seconds(25_920)) + [.readSockets, .evaluate, poll(.seconds(24 + 25_920))]),
        ]))
        play(Case(name: "no logind: the clocks alone", stallPollInterval: .seconds(10), turns: [
            Turn(netlink: Self.changed, snapshot: Self.satisfied, expect: [.evaluate, Self.sleep]),
            Turn(at: .seconds(1), commands: [.someoneListens(true)], expect: [poll(.seconds(11))]),
            Turn(at: .seconds(3611), snapshot: Self.satisfied, asleep: .seconds(3600),
                 expect: woke(.seconds(3600)) + [.readSockets, .evaluate, poll(.seconds(3621))]),
            // Seen once.
            Turn(at: .seconds(3612), commands: [.systemSleeps(false)], asleep: .seconds(3600), expect: [poll(.seconds(3621))]),
        ]))
        play(Case(name: "nobody listens: nothing read at the wake", stallPollInterval: .seconds(10), turns: [
            Turn(netlink: Self.changed, snapshot: Self.satisfied, expect: [.evaluate, Self.sleep]),
            Turn(at: .seconds(3600), snapshot: Self.satisfied, asleep: .seconds(3600), expect: woke(.seconds(3600)) + [.evaluate, Self.sleep]),
        ]))
    }

    /// The TCP sockets are read only while someone listens (the server says so) and the last
    /// snapshot's path is satisfied (the loop judges it under the policy in force): one
    /// interval after that began, then every interval; never when `[stall]` is off; stopping
    /// forgets what the reads saw.
    func testSocketsAreReadOnlyWhileWantedOnTheirInterval() {
        XCTAssertEqual(PathDerivation.derive(Self.satisfied).status, .satisfied, "the fixture")
        XCTAssertNotEqual(PathDerivation.derive(Self.satisfied, policy: Self.ignoringEth).status, .satisfied, "the fixture")
        XCTAssertNotEqual(PathDerivation.derive(Self.noRoute).status, .satisfied, "the fixture")
        let poll = { (at: Duration) in EngineAction.sleep(until: self.time(at), pollingNetlink: true) }
        play(Case(name: "a subscriber comes and goes", stallPollInterval: .seconds(10), turns: [
            // Idle and nobody listens: no timer at all.
            Turn(expect: [Self.sleep]),
            Turn(at: .seconds(1), netlink: Self.changed, snapshot: Self.satisfied, expect: [.evaluate, Self.sleep]),
            Turn(at: .seconds(2), commands: [.someoneListens(true)], expect: [poll(.seconds(12))]),
            // Another wake-up meanwhile keeps the schedule.
            Turn(at: .seconds(5), netlink: Self.changed, snapshot: Self.satisfied, expect: [.evaluate, poll(.seconds(12))]),
            Turn(at: .seconds(12), expect: [.readSockets, poll(.seconds(22))]),
            // Said twice: nothing new.
            Turn(at: .seconds(13), commands: [.someoneListens(true)], expect: [poll(.seconds(22))]),
            // Late: the next read counts from this one.
            Turn(at: .seconds(25), expect: [.readSockets, poll(.seconds(35))]),
            Turn(at: .seconds(26), commands: [.someoneListens(false)], expect: [.forgetSockets, Self.sleep]),
            Turn(at: .seconds(27), commands: [.someoneListens(false)], expect: [Self.sleep]),
            Turn(at: .seconds(40), commands: [.someoneListens(true)], expect: [poll(.seconds(50))]),
            // The route flaps: the loop sees the path go and come back, and a flap shorter
            // than the interval reads nothing.
            Turn(at: .seconds(45), netlink: Self.changed, snapshot: Self.noRoute, expect: [.evaluate, .forgetSockets, Self.sleep]),
            Turn(at: .seconds(46), netlink: Self.changed, snapshot: Self.satisfied, expect: [.evaluate, poll(.seconds(56))]),
            Turn(at: .seconds(56), expect: [.readSockets, poll(.seconds(66))]),
        ]))
        play(Case(name: "someone listens before the path is satisfied", stallPollInterval: .seconds(10), turns: [
            Turn(netlink: Self.changed, snapshot: Self.noRoute, expect: [.evaluate, Self.sleep]),
            Turn(at: .seconds(1), commands: [.someoneListens(true)], expect: [Self.sleep]),
            Turn(at: .seconds(3), netlink: Self.changed, snapshot: Self.satisfied, expect: [.evaluate, poll(.seconds(13))]),
            // Nobody listens any more, and the next snapshot reads nothing either.
            Turn(at: .seconds(4), commands: [.someoneListens(false)], expect: [.forgetSockets, Self.sleep]),
            Turn(at: .seconds(5), netlink: Self.changed, snapshot: Self.satisfied, expect: [.evaluate, Self.sleep]),
        ]))
        play(Case(name: "a reload ignores the only interface", stallPollInterval: .seconds(10), turns: [
            Turn(commands: [.someoneListens(true)], netlink: Self.changed, snapshot: Self.satisfied, expect: [.evaluate, poll(.seconds(10))]),
            // The same snapshot, unsatisfied under the new policy: evaluated again, reads stop.
            Turn(at: .seconds(2), commands: [.reloaded(policy: Self.ignoringEth)], snapshot: Self.satisfied,
                 expect: [.rereadResolverFiles, .evaluate, .forgetSockets, Self.sleep]),
            // The same policy again changes nothing.
            Turn(at: .seconds(3), commands: [.reloaded(policy: Self.ignoringEth)], expect: [.rereadResolverFiles, Self.sleep]),
            Turn(at: .seconds(4), commands: [.reloaded(policy: InterfacePolicy())], snapshot: Self.satisfied,
                 expect: [.rereadResolverFiles, .evaluate, poll(.seconds(14))]),
        ]))
        play(Case(name: "[stall] enabled = false", turns: [
            Turn(commands: [.someoneListens(true)], netlink: Self.changed, snapshot: Self.satisfied, expect: [.evaluate, Self.sleep]),
            Turn(at: .seconds(3), commands: [.someoneListens(false)], expect: [Self.sleep]),
        ]))
        play(Case(name: "the earliest timer wins", watchdog: .seconds(4), stallPollInterval: .seconds(1), turns: [
            Turn(commands: [.someoneListens(true)], netlink: Self.changed, snapshot: Self.satisfied, expect: [.evaluate, poll(.seconds(1))]),
            Turn(at: .seconds(1), expect: [.readSockets, poll(.seconds(2))]),
            Turn(at: .seconds(4), expect: [.readSockets, .pingWatchdog, poll(.seconds(5))]),
        ]))
    }

    /// A process rewriting a resolver file in a loop: the first change is read at once, then
    /// the watch rests (left out of poll) and whatever came meanwhile is one drain and read.
    func testTheResolverWatchRestsAfterItsEventsWereRead() {
        let resting = { (until: Duration) in EngineAction.sleep(until: self.time(until), pollingNetlink: true, pollingResolverFiles: false) }
        play(Case(name: "a storm of rewrites", turns: [
            Turn(at: .milliseconds(10), resolverFiles: .changed, expect: [.evaluate, resting(.milliseconds(110))]),
            // The rest is over: polled again, and the writes queued meanwhile are read at once.
            Turn(at: .milliseconds(110), expect: [Self.sleep]),
            Turn(at: .milliseconds(111), resolverFiles: .unchanged, expect: [resting(.milliseconds(211))]),
            // Something else wakes the engine meanwhile: the watch keeps resting.
            Turn(at: .milliseconds(150), netlink: Self.changed, expect: [.evaluate, resting(.milliseconds(211))]),
            Turn(at: .milliseconds(211), expect: [Self.sleep]),
            // Events about other files rest the watch too (they are a storm of their own).
            Turn(at: .seconds(5), resolverFiles: .unchanged, expect: [resting(.milliseconds(5100))]),
        ]))
        play(Case(name: "the earliest timer wins", watchdog: .milliseconds(50), resolverRest: .milliseconds(100), turns: [
            Turn(at: .milliseconds(10), resolverFiles: .changed,
                 expect: [.evaluate, .sleep(until: time(.milliseconds(50)), pollingNetlink: true, pollingResolverFiles: false)]),
            Turn(at: .milliseconds(50), expect: [.pingWatchdog, resting(.milliseconds(100))]),
            // A late wake-up past the rest: polled again, sleeping until the next ping.
            Turn(at: .milliseconds(130), expect: [.pingWatchdog, .sleep(until: time(.milliseconds(180)), pollingNetlink: true)]),
        ]))
    }
}
