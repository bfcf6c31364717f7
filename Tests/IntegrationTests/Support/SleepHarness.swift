import Foundation
import Logging
import NIOCore
import NIOPosix
import ReachConnectivity
import Synchronization
import TestSupport

/// A `SleepSource` started on a one-thread event loop of the test process (no daemon), with
/// what it told (`onSleep`) and logged recorded.
final class SleepHarness: Sendable {
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let loop: any EventLoop
    private let source: NIOLoopBound<SleepSource>
    private let record = Record()

    /// Starts the source; it connects to `$DBUS_SYSTEM_BUS_ADDRESS`.
    init() throws {
        let (loop, record) = (group.next(), record)
        self.loop = loop
        source = try loop.submit {
            var logger = Logger(label: "reachd") { _ in RecordingLogHandler(lines: record.lines) }
            logger.logLevel = .debug
            let source = SleepSource(eventLoop: loop, logger: logger)
            source.onSleep = { sleeping in record.told.withLock { $0.append(sleeping) } }
            source.start()
            return NIOLoopBound(source, eventLoop: loop)
        }.wait()
    }

    /// What `onSleep` heard, in order.
    var told: [Bool] { record.told.withLock { $0 } }

    /// The messages logged, in order.
    var log: [String] { record.lines.all }

    /// The daemon's side: its work is paused.
    func paused() { loop.execute { [source] in source.value.paused() } }

    /// Stops the source and its loop.
    func stop() {
        try? loop.submit { [source] in source.value.stop() }.wait()
        try? group.syncShutdownGracefully()
    }

    /// Polls until `predicate` holds, for at most `timeout`; whether it did.
    func wait(timeout: Duration = .seconds(5), _ predicate: (SleepHarness) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !predicate(self) {
            guard ContinuousClock.now < deadline else { return false }
            usleep(10_000)
        }
        return true
    }

    fileprivate final class Record: Sendable {
        let told = Mutex<[Bool]>([])
        let lines = RecordingLogHandler.Lines()
    }
}
