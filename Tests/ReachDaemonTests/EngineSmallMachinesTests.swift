import ReachabilityCore
@testable import ReachDaemon
import XCTest

/// The small machines `EngineMachine` sequences, each alone, as tables: a row is a machine's
/// inputs in order, and after each what it decided and where it stands.
final class EngineSmallMachinesTests: XCTestCase {
    private static let start = ContinuousClock.now
    private static func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    // MARK: ResyncSchedule

    private enum ResyncInput { case readFailed(Int), resynchronized, failed(Int) }

    func testResyncSchedule() {
        let backoff = RetryBackoff(initial: .milliseconds(100), maximum: .milliseconds(400), attempts: 3)
        // (name, inputs, expected delay per `failed` (nil: spent), state after, due at 1000 ms)
        let rows: [(String, [ResyncInput], [Duration?], ResyncSchedule.State, Bool)] = [
            ("untouched: following, nothing due", [], [], .following, false),
            ("a failed read: resync at once", [.readFailed(10)], [], .resyncing(at: Self.at(10)), true),
            ("a failed resync: retried on the backoff", [.readFailed(10), .failed(20)], [.milliseconds(100)], .resyncing(at: Self.at(120)), true),
            ("the backoff doubles up to its maximum", [.readFailed(0), .failed(0), .failed(0), .failed(0)],
             [.milliseconds(100), .milliseconds(200), .milliseconds(400)], .resyncing(at: Self.at(400)), true),
            ("spent after its attempts", [.readFailed(0), .failed(0), .failed(0), .failed(0), .failed(0)],
             [.milliseconds(100), .milliseconds(200), .milliseconds(400), nil], .resyncing(at: Self.at(400)), true),
            ("a success follows again and starts the backoff afresh", [.readFailed(0), .failed(0), .failed(0), .resynchronized, .readFailed(5), .failed(5)],
             [.milliseconds(100), .milliseconds(200), .milliseconds(100)], .resyncing(at: Self.at(105)), true),
            ("a retry not yet due", [.readFailed(0), .failed(1000)], [.milliseconds(100)], .resyncing(at: Self.at(1100)), false),
        ]
        for (name, inputs, delays, state, due) in rows {
            var schedule = ResyncSchedule(backoff: backoff)
            var seen: [Duration?] = []
            for input in inputs {
                switch input {
                case let .readFailed(ms): schedule.readFailed(now: Self.at(ms))
                case .resynchronized: schedule.resynchronized()
                case let .failed(ms): seen.append(schedule.resyncFailed(now: Self.at(ms)))
                }
            }
            XCTAssertEqual(seen, delays, name)
            XCTAssertEqual(schedule.state, state, name)
            XCTAssertEqual(schedule.isFollowing, state == .following, name)
            XCTAssertEqual(schedule.isDue(now: Self.at(1000)), due, name)
        }
    }

    // MARK: RecheckTimer

    func testRecheckTimer() {
        let route = DefaultRoute(family: .ipv4, nextHops: [NextHop(interfaceIndex: 2, gateway: IPAddress("192.0.2.1"))])
        var throughRoute = NetworkSnapshot()
        throughRoute.lookups = [.ipv4: .route(RouteLookupResult(outputInterface: 2, gateway: IPAddress("192.0.2.1"), table: 254))]
        var noRoute = NetworkSnapshot()
        noRoute.lookups = [.ipv4: .failure(.noRoute)]
        // (name, [(removed, snapshot, at ms)], reports expected, deadline after)
        let rows: [(String, [(Set<DefaultRoute>, NetworkSnapshot, Int)], [EngineReport?], ContinuousClock.Instant?)] = [
            ("nothing removed: trusted", [([], throughRoute, 0)], [nil], nil),
            ("a lookup through a removed route: looked at again", [([route], throughRoute, 0)],
             [.lookingAgain(after: .milliseconds(50), attempt: 1)], Self.at(50)),
            ("the recheck sees the route gone: trusted, no timer", [([route], throughRoute, 0), ([], noRoute, 50)],
             [.lookingAgain(after: .milliseconds(50), attempt: 1), nil], nil),
            ("the schedule spent: the kernel's answer stands", [([route], throughRoute, 0), ([], throughRoute, 50), ([], throughRoute, 150)],
             [.lookingAgain(after: .milliseconds(50), attempt: 1), .lookingAgain(after: .milliseconds(100), attempt: 2), .gaveUpRechecking], nil),
        ]
        for (name, steps, reports, deadline) in rows {
            var timer = RecheckTimer(schedule: [.milliseconds(50), .milliseconds(100)])
            XCTAssertFalse(timer.isDue(now: Self.at(0)), name)
            let seen = steps.map { timer.evaluated(removed: $0.0, snapshot: $0.1, now: Self.at($0.2)) }
            XCTAssertEqual(seen, reports, name)
            XCTAssertEqual(timer.deadline, deadline, name)
            if let deadline {
                XCTAssertFalse(timer.isDue(now: deadline - .milliseconds(1)), name)
                XCTAssertTrue(timer.isDue(now: deadline), name)
            }
        }
    }

    // MARK: WatchdogTimer

    func testWatchdogTimer() {
        // (name, interval ms, ping attempts at ms, pinged per attempt, deadline after)
        let rows: [(String, Int?, [Int], [Bool], ContinuousClock.Instant?)] = [
            ("off: never pinged", nil, [0, 1000, 100_000], [false, false, false], nil),
            ("not before the first interval", 100, [0, 99], [false, false], Self.at(100)),
            ("on the interval, then one interval on from the ping", 100, [100, 150, 199, 230], [true, false, false, true], Self.at(330)),
            ("late: pinged once, not to catch up", 100, [1000, 1000, 1099], [true, false, false], Self.at(1100)),
        ]
        for (name, interval, attempts, pinged, deadline) in rows {
            var timer = WatchdogTimer(now: Self.start, interval: interval.map { .milliseconds($0) })
            XCTAssertEqual(attempts.map { timer.ping(now: Self.at($0)) }, pinged, name)
            XCTAssertEqual(timer.deadline, deadline, name)
        }
    }

    // MARK: ResolverWatchRest

    private enum WatchInput { case wokeUp(Int), read(Int) }

    func testResolverWatchRest() {
        // (name, inputs, polled after, deadline after)
        let rows: [(String, [WatchInput], Bool, ContinuousClock.Instant?)] = [
            ("untouched: polled", [], true, nil),
            ("read: rests", [.read(10)], false, Self.at(110)),
            ("woken during the rest: still resting", [.read(10), .wokeUp(109)], false, Self.at(110)),
            ("woken when the rest is over: polled again", [.read(10), .wokeUp(110)], true, nil),
            ("read again after the rest: rests from then", [.read(10), .wokeUp(200), .read(200)], false, Self.at(300)),
        ]
        for (name, inputs, polled, deadline) in rows {
            var watch = ResolverWatchRest(rest: .milliseconds(100))
            for input in inputs {
                switch input {
                case let .wokeUp(ms): watch.wokeUp(now: Self.at(ms))
                case let .read(ms): watch.read(now: Self.at(ms))
                }
            }
            XCTAssertEqual(watch.isPolled, polled, name)
            XCTAssertEqual(watch.deadline, deadline, name)
        }
    }

    // MARK: SocketReadSchedule

    private enum SocketInput { case listens(Bool, Int), path(Bool, Int), read(Int) }

    func testSocketReadSchedule() {
        // (name, interval ms, inputs, decisions per input (a change, or whether a read was made), state after)
        let rows: [(String, Int?, [SocketInput], [String], SocketReadSchedule.State)] = [
            ("stall off: never read", nil, [.listens(true, 0), .path(true, 0), .read(10_000)], ["none", "none", "no read"], .off),
            ("someone listens, path satisfied: the baseline one interval on", 1000, [.listens(true, 0), .path(true, 5)],
             ["none", "none"], .due(at: Self.at(1005))),
            ("nobody listens: not read", 1000, [.path(true, 0), .read(5000)], ["none", "no read"], .off),
            ("path not satisfied: not read", 1000, [.listens(true, 0), .path(false, 0), .read(5000)], ["none", "none", "no read"], .off),
            ("read when due, then every interval from the read", 1000, [.listens(true, 0), .path(true, 0), .read(999), .read(1000), .read(1500), .read(2100)],
             ["none", "none", "no read", "read", "no read", "read"], .due(at: Self.at(3100))),
            ("the path goes: forget once", 1000, [.listens(true, 0), .path(true, 0), .path(false, 10), .path(false, 20)],
             ["none", "none", "forget", "none"], .off),
            ("the last listener goes: forget", 1000, [.path(true, 0), .listens(true, 0), .listens(false, 10)],
             ["none", "none", "forget"], .off),
            ("a flapping path restarts the baseline", 1000, [.listens(true, 0), .path(true, 0), .path(false, 10), .path(true, 20)],
             ["none", "none", "forget", "none"], .due(at: Self.at(1020))),
        ]
        for (name, interval, inputs, decisions, state) in rows {
            var schedule = SocketReadSchedule(interval: interval.map { .milliseconds($0) })
            let seen = inputs.map { input -> String in
                switch input {
                case let .listens(listens, ms): schedule.listens(listens, now: Self.at(ms)) == .forget ? "forget" : "none"
                case let .path(satisfied, ms): schedule.pathIs(satisfied: satisfied, now: Self.at(ms)) == .forget ? "forget" : "none"
                case let .read(ms): schedule.read(now: Self.at(ms)) ? "read" : "no read"
                }
            }
            XCTAssertEqual(seen, decisions, name)
            XCTAssertEqual(schedule.state, state, name)
        }
    }

    // MARK: MonitoredTargets

    func testMonitoredTargets() {
        let a = TargetKey(address: IPAddress("192.0.2.10")!, uid: 0)
        let b = TargetKey(address: IPAddress("2001:db8::10")!, uid: 1000)
        // (name, [(add, remove)], counts after)
        let rows: [(String, [([TargetKey], [TargetKey])], [TargetKey: Int])] = [
            ("asked for once", [([a], [])], [a: 1]),
            ("asked for twice, released once: still looked up", [([a], []), ([a], []), ([], [a])], [a: 1]),
            ("released by all: dropped", [([a, b], []), ([], [a])], [b: 1]),
            ("released more often than asked: dropped, not negative", [([a], []), ([], [a, a])], [:]),
            ("released without being asked: nothing", [([], [b])], [:]),
            ("added and removed in one command", [([a], [a])], [:]),
        ]
        for (name, steps, counts) in rows {
            var targets = MonitoredTargets()
            for (add, remove) in steps { targets.count(add: add, remove: remove) }
            XCTAssertEqual(targets.counts, counts, name)
            XCTAssertEqual(Set(targets.keys), Set(counts.keys), name)
        }
    }

    // MARK: DNS64Schedule

    private enum DNS64Input { case snapshot(NetworkSnapshot, Int), resolverChanged, answered(DNS64Discovery.Answer), takeReevaluation(Int) }

    func testDNS64Schedule() {
        let eth0 = Link(index: 2, name: "eth0", flags: [.up, .lowerUp, .running], operState: .up, carrier: true)
        let ipv6Only = NetworkSnapshot(
            links: [2: eth0], addresses: [InterfaceAddress(interfaceIndex: 2, address: IPAddress("fd77::2")!, prefixLength: 64)],
            defaultRoutes: [DefaultRoute(family: .ipv6, nextHops: [NextHop(interfaceIndex: 2, gateway: IPAddress("fd77::1"))])]
        )
        var gone = ipv6Only
        gone.defaultRoutes = []
        let prefix = IPAddress("64:ff9b::c000:aa")!
        // (name, discover, inputs, what each input decided, generation after, reevaluation after)
        let rows: [(String, Bool, [DNS64Input], [String], Int, ContinuousClock.Instant?)] = [
            ("off: nothing asked, the generation still counted", false, [.snapshot(ipv6Only, 0), .resolverChanged, .answered(.failed)],
             ["", "", ""], 1, nil),
            ("an IPv6-only link: asked once", true, [.snapshot(ipv6Only, 0), .snapshot(ipv6Only, 10)], ["ask 2", ""], 0, nil),
            ("answered: learnt", true, [.snapshot(ipv6Only, 0), .answered(.addresses([prefix]))], ["ask 2", "learn 2"], 0, nil),
            ("the resolver files changed: asked again", true, [.snapshot(ipv6Only, 0), .answered(.failed), .resolverChanged],
             ["ask 2", "learn 2", "ask 2"], 1, nil),
            ("the link stops qualifying: withdrawn, evaluated again at once", true,
             [.snapshot(ipv6Only, 0), .answered(.addresses([prefix])), .snapshot(gone, 30)], ["ask 2", "learn 2", "withdraw 2"], 0, Self.at(30)),
            ("the evaluation after a withdrawal is taken once", true,
             [.snapshot(ipv6Only, 0), .answered(.addresses([prefix])), .snapshot(gone, 30), .takeReevaluation(29), .takeReevaluation(30), .takeReevaluation(31)],
             ["ask 2", "learn 2", "withdraw 2", "no", "yes", "no"], 0, nil),
        ]
        for (name, discover, inputs, decided, generation, reevaluation) in rows {
            var schedule = DNS64Schedule(discover: discover)
            let seen = inputs.map { input -> String in
                switch input {
                case let .snapshot(snapshot, ms): Self.describe(schedule.evaluated(snapshot, now: Self.at(ms)))
                case .resolverChanged: Self.describe(schedule.resolverChanged())
                case let .answered(answer): Self.describe(schedule.answered(2, answer))
                case let .takeReevaluation(ms): schedule.takeReevaluation(now: Self.at(ms)) ? "yes" : "no"
                }
            }
            XCTAssertEqual(seen, decided, name)
            XCTAssertEqual(schedule.resolverGeneration, generation, name)
            XCTAssertEqual(schedule.deadline, reevaluation, name)
        }
    }

    private static func describe(_ actions: [DNS64Discovery.Action]) -> String {
        actions.map { action in
            switch action {
            case let .ask(link): "ask \(link)"
            case let .learn(link, _): "learn \(link)"
            case let .withdraw(link): "withdraw \(link)"
            }
        }.joined(separator: ", ")
    }
}
