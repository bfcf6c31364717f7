import Foundation
import ReachabilityCore
import ReachProtocol
@testable import ReachServer
import TestSupport
import XCTest


final class SocketLifecycleTests: XCTestCase {
    func testCreatesDirectoryChmodsAndRemovesSocket() async throws {
        let fixture = ServerFixture(subdirectory: true)
        try fixture.server.start()
        let attributes = try FileManager.default.attributesOfItem(atPath: fixture.socketPath)
        XCTAssertEqual(attributes[.type] as? FileAttributeType, .typeSocket)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o666)
        let directory = try FileManager.default.attributesOfItem(atPath: fixture.directory + "/run/sub")
        XCTAssertEqual((directory[.posixPermissions] as? NSNumber)?.intValue, 0o755)
        fixture.server.shutdown()
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.socketPath))
        await fixture.stop()
    }

    func testRefusesWhenAnotherServerAnswers() async throws {
        let first = ServerFixture()
        try first.server.start()
        let second = VarlinkServer.forTests(
            socketPath: first.socketPath, instance: "two", snapshot: makeSnapshot(), eventLoop: first.group.next(),
            logger: .init(label: "t"), engine: ScriptedEngine()
        )
        do {
            try second.start()
            XCTFail("second server started on a live socket")
        } catch {
            guard case .alreadyRunning = error else { return XCTFail("\(error)") }
        }
        // The first one still serves.
        let connection = try VarlinkConnection(path: first.socketPath)
        try connection.call(ReachabilityInterface.Method.getStatus)
        XCTAssertEqual(try connection.status().0.instance, ServerFixture.instance)
        await first.stop()
    }

    func testReplacesStaleSocketButNotOtherFiles() async throws {
        let fixture = ServerFixture()
        // A stale socket: bound, then its owner went away without removing it.
        close(try unixSocket(SOCK_STREAM, path: fixture.socketPath, .bind))
        try fixture.server.start()
        let connection = try VarlinkConnection(path: fixture.socketPath)
        try connection.call(ReachabilityInterface.Method.getStatus)
        XCTAssertEqual(try connection.status().0.sequence, 1)
        await fixture.stop()

        let other = ServerFixture()
        _ = FileManager.default.createFile(atPath: other.socketPath, contents: Data("keep me".utf8))
        do {
            try other.server.start()
            XCTFail("replaced a regular file")
        } catch {
            guard case .notASocket = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(FileManager.default.contents(atPath: other.socketPath), Data("keep me".utf8))
        await other.stop()
    }

    /// A bind error reads as one clean line: the call, the errno's text and number.
    func testBindErrorIsOneCleanLine() async throws {
        try requireRoot()  // mounting a read-only tmpfs
        let directory = try temporaryDirectory("reachd-ro")
        try runCommand(["mount", "-t", "tmpfs", "-o", "ro", "tmpfs", directory])
        defer { _ = try? runCommand(["umount", directory]) }
        let fixture = ServerFixture()
        let server = VarlinkServer.forTests(
            socketPath: directory + "/sock", instance: "ro", snapshot: makeSnapshot(), eventLoop: fixture.group.next(),
            logger: .init(label: "t"), engine: ScriptedEngine()
        )
        do {
            try server.start()
            XCTFail("bound on a read-only file system")
        } catch {
            XCTAssertEqual("\(error)", "cannot listen on \(directory)/sock: bind: Read-only file system (errno 30)")
        }
        await fixture.stop()
    }
}
