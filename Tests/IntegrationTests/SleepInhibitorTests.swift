import Foundation
import Glibc
import TestSupport
import XCTest

/// `SleepSource` against a stand-in logind (`Tests/Fixtures/logind_stub.py`) on a private
/// system bus, run on an event loop of the test's own (`SleepHarness`): the delay inhibitor
/// taken, released once the daemon paused, taken again on waking; only logind's signal counts.
final class SleepInhibitorTests: XCTestCase {
    private var bus: PrivateSystemBus!
    private var stubs: [LogindStub] = []
    private var harness: SleepHarness?

    override func setUpWithError() throws {
        try requirePrerequisite(getuid() == 0, "needs root, as the integration tests run")
        try requirePrerequisite(FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon"), "needs dbus-daemon (dbus-daemon; scripts/bootstrap --test)")
        try requirePrerequisite(
            (try? Command.run(["/usr/bin/python3", "-c", "import gi; gi.require_version('Gio', '2.0')"]).status) == 0,
            "needs /usr/bin/python3 with PyGObject (python3-gi; scripts/bootstrap --test)")
        bus = try PrivateSystemBus(directory: try temporaryDirectory("reachd-logind-bus"))
        // sd-bus reads it when the source connects.
        setenv("DBUS_SYSTEM_BUS_ADDRESS", bus.address, 1)
    }

    override func tearDown() {
        if let harness, (testRun?.totalFailureCount ?? 0) > 0 { print("log:\n" + harness.log.joined(separator: "\n")) }
        harness?.stop()
        harness = nil
        stubs.forEach { $0.stop() }
        stubs = []
        unsetenv("DBUS_SYSTEM_BUS_ADDRESS")
        bus?.stop()
        bus = nil
    }

    private func startLogind() throws -> LogindStub {
        let stub = try LogindStub(address: bus.address)
        stubs.append(stub)
        return stub
    }

    private func startSource() throws -> SleepHarness {
        let harness = try SleepHarness()
        self.harness = harness
        return harness
    }

    /// Taken at start; on `sleep` the daemon hears it, pauses, and the inhibitor is gone within
    /// 1 s; on `wake` it hears that and another inhibitor is taken.
    func testSleepReleasesTheInhibitorAndWakeTakesAnother() throws {
        let logind = try startLogind()
        let source = try startSource()
        let first = try XCTUnwrap(logind.wait { $0.event == "inhibited" }, "an inhibitor at start")
        XCTAssertEqual([first.what, first.who, first.why, first.mode], ["sleep", "reachd", "pausing probes and the stall watch", "delay"])

        try logind.send("sleep")
        XCTAssertTrue(source.wait { $0.told == [true] }, "onSleep(true): \(source.told)")
        XCTAssertNil(logind.wait(timeout: .milliseconds(200)) { $0.event == "released" }, "held until the daemon paused")
        let paused = ContinuousClock.now
        source.paused()
        XCTAssertNotNil(logind.wait(timeout: .seconds(1)) { $0.event == "released" && $0.id == first.id }, "released within 1 s of paused()")
        let released = ContinuousClock.now - paused

        try logind.send("wake")
        XCTAssertTrue(source.wait { $0.told == [true, false] }, "onSleep(false): \(source.told)")
        let second = logind.wait { $0.event == "inhibited" && $0.id != first.id }
        XCTAssertNotNil(second, "another inhibitor after waking")
        XCTAssertEqual(logind.events.filter { $0.event == "inhibited" }.count, 2)
        print("logind: inhibited \(first.id ?? 0), slept, released \(released) after paused(), woke, inhibited \(second?.id ?? 0)")
    }

    /// A PrepareForSleep(true) sent to reachd directly by another connection is ignored: no
    /// onSleep, the inhibitor still held; logind's own still counts after it.
    func testAForeignPrepareForSleepIsIgnored() throws {
        let logind = try startLogind()
        let source = try startSource()
        let inhibited = try XCTUnwrap(logind.wait { $0.event == "inhibited" })
        let reachd = try XCTUnwrap(inhibited.sender)

        let foreign = try LogindStub.sendForeign(address: bus.address, destination: reachd)
        XCTAssertTrue(source.wait { $0.log.contains { $0.contains("ignored a PrepareForSleep not from logind") && $0.contains(foreign) } },
                      "the foreign signal arrived and was ignored: \(source.log)")
        XCTAssertNil(logind.wait(timeout: .milliseconds(300)) { $0.event == "released" }, "the inhibitor is still held")
        XCTAssertEqual(source.told, [])

        try logind.send("sleep")
        XCTAssertTrue(source.wait { $0.told == [true] }, "logind's own signal counts: \(source.told)")
        print("logind: a PrepareForSleep(true) from \(foreign) to \(reachd) ignored; logind's (\(logind.wait { $0.event == "ready" }?.name ?? "?")) followed")
    }

    /// Without logind nothing is asked (said at debug); logind arriving, and restarting, is
    /// followed by a new inhibitor each time.
    func testWithoutLogindNothingIsAskedUntilItComes() throws {
        let source = try startSource()
        XCTAssertTrue(source.wait { $0.log.contains { $0.contains("logind is not on the system bus: no sleep inhibitor is taken") } }, "\(source.log)")
        usleep(200_000)
        XCTAssertFalse(source.log.contains { $0.contains("inhibitor for sleep") || $0.contains("refused") }, "nothing asked: \(source.log)")

        let first = try startLogind()
        XCTAssertNotNil(first.wait { $0.event == "inhibited" }, "logind arrived: inhibited")
        first.stop()
        let second = try startLogind()
        XCTAssertNotNil(second.wait { $0.event == "inhibited" }, "logind restarted: inhibited again")
        XCTAssertEqual(source.told, [])
    }
}

/// `Tests/Fixtures/logind_stub.py` on the private bus: logind's name, Inhibit and PrepareForSleep.
final class LogindStub {
    /// One line the stub printed.
    struct Event: Decodable {
        var event: String
        var id: Int?
        var name: String?
        var sender: String?
        var what: String?
        var who: String?
        var why: String?
        var mode: String?
    }

    private static let script = Paths.repository.appendingPathComponent("Tests/Fixtures/logind_stub.py").path
    private let process: Process
    private let input = Pipe()
    private let lines: LineReader
    /// Every line read so far.
    private(set) var events: [Event] = []

    init(address: String) throws {
        let output = Pipe()
        lines = LineReader(output)
        process = try Command.launch(["/usr/bin/python3", Self.script, address], stdin: input, stdout: output)
        guard wait(timeout: .seconds(10), { $0.event == "ready" }) != nil else {
            stop()
            throw CommandFailed(command: "logind_stub.py", status: 0, stderr: "did not own org.freedesktop.login1 in 10 s")
        }
    }

    /// Sends PrepareForSleep(true) to `destination` from a connection of its own; its unique name.
    static func sendForeign(address: String, destination: String) throws -> String {
        let result = try Command.run(["/usr/bin/python3", script, address, "foreign", destination])
        let sent = try? JSONDecoder().decode(Event.self, from: Data(result.stdout.utf8))
        guard result.status == 0, let sender = sent?.sender else {
            throw CommandFailed(command: "logind_stub.py foreign", status: result.status, stderr: result.stdout + result.stderr)
        }
        return sender
    }

    /// The first event so far or within `timeout` that satisfies `predicate`.
    func wait(timeout: Duration = .seconds(5), _ predicate: (Event) -> Bool) -> Event? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let event = events.first(where: predicate) { return event }
            let left = deadline - ContinuousClock.now
            guard left > .zero, let text = lines.next(timeout: left) else { return nil }
            if let event = try? JSONDecoder().decode(Event.self, from: Data(text.utf8)) { events.append(event) }
        }
    }

    /// `sleep` or `wake`: PrepareForSleep(true) or (false), broadcast.
    func send(_ command: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((command + "\n").utf8))
    }

    /// logind stops: its name leaves the bus.
    func stop() {
        try? input.fileHandleForWriting.close()
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
