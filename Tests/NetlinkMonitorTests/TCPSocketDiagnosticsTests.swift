import Foundation
@testable import NetlinkMonitor
import ReachabilityCore
import TestSupport
import XCTest

/// The sock_diag reader on a real kernel: connections a Python process holds open in a
/// fresh namespace, read back with their cookies, states and interfaces.
final class TCPSocketDiagnosticsTests: XCTestCase {
    /// Two connections to 10.99.0.1 (one over an IPv6 socket, so its source is IPv4-mapped), one
    /// to fd99::1, two attempts left in SYN_SENT towards addresses that never answer (one by
    /// nobody), and one over loopback: all but loopback are read, with their remote address and
    /// owner, and attributed to dummy0 (one end of a veth pair).
    func testConnectionsAreReadAndAttributedByTheirSourceAddress() throws {
        try requireRoot()
        let namespace = try NetworkNamespace(prefix: "reachd-diag")
        try namespace.ip("link", "set", "lo", "up")
        try namespace.ip("link", "add", "dummy0", "type", "veth", "peer", "name", "peer0")
        try namespace.ip("link", "set", "dummy0", "up")
        try namespace.ip("link", "set", "peer0", "up")
        try namespace.ip("addr", "add", "10.99.0.1/24", "dev", "dummy0")
        try namespace.ip("addr", "add", "fd99::1/64", "dev", "dummy0", "nodad")
        let index = Int32(try namespace.exec(["cat", "/sys/class/net/dummy0/ifindex"]).trimmingCharacters(in: .whitespacesAndNewlines))!
        let script = """
            import socket, sys, time
            server = socket.create_server(("0.0.0.0", 7000))
            v4 = socket.create_connection(("10.99.0.1", 7000))
            v6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
            v6.connect(("::ffff:10.99.0.1", 7000))
            local = socket.create_connection(("127.0.0.1", 7000))
            accepted = [server.accept()[0] for _ in range(3)]
            server6 = socket.create_server(("fd99::1", 7001), family=socket.AF_INET6)
            native6 = socket.create_connection(("fd99::1", 7001))
            accepted6 = server6.accept()[0]
            pending = socket.socket()
            pending.setblocking(False)
            pending.bind(("10.99.0.1", 0))
            try:
                pending.connect(("10.99.0.7", 80))  # on dummy0's subnet: nobody answers
            except BlockingIOError:
                pass
            print("ready", flush=True)
            time.sleep(30)
            """
        let ready = Pipe()
        let python = try Command.launch(["ip", "netns", "exec", namespace.name, "python3", "-c", script], stdout: ready)
        defer {
            kill(python.processIdentifier, SIGKILL)
            python.waitUntilExit()
        }
        XCTAssertTrue(String(decoding: ready.fileHandleForReading.availableData, as: UTF8.self).hasPrefix("ready"))
        // One more attempt, by nobody: its owner is read too. (The system's python: nobody cannot
        // enter root's.)
        let nobodyScript = """
            import socket, time
            pending = socket.socket()
            pending.setblocking(False)
            try:
                pending.connect(("10.99.0.8", 80))
            except BlockingIOError:
                pass
            print("ready", flush=True)
            time.sleep(30)
            """
        let nobodyReady = Pipe()
        let nobody = try Command.launch(["ip", "netns", "exec", namespace.name, "setpriv", "--reuid", "65534", "--regid", "65534",
                                         "--clear-groups", "/usr/bin/python3", "-c", nobodyScript], stdout: nobodyReady)
        defer {
            kill(nobody.processIdentifier, SIGKILL)
            nobody.waitUntilExit()
        }
        XCTAssertTrue(String(decoding: nobodyReady.fileHandleForReading.availableData, as: UTF8.self).hasPrefix("ready"))
        let addresses = [
            InterfaceAddress(interfaceIndex: index, address: IPAddress("10.99.0.1")!, prefixLength: 24),
            InterfaceAddress(interfaceIndex: index, address: IPAddress("fd99::1")!, prefixLength: 64),
        ]

        let reading = try namespace.inside { try TCPSocketDiagnostics.read(addresses: addresses, limit: 100) }
        // Both ends of the two connections over 10.99.0.1 and of the one over fd99::1, and the
        // two SYN_SENT attempts.
        XCTAssertEqual(reading.samples.count, 8, "\(reading.samples)")
        XCTAssertEqual(Set(reading.samples.map(\.interfaceIndex)), [index])
        XCTAssertEqual(Set(reading.samples.map(\.cookie)).count, 8, "cookies are unique")
        let attempts = reading.samples.filter { $0.state == .synSent }
        XCTAssertEqual(Set(attempts.map(\.destination)), [IPAddress("10.99.0.7")!, IPAddress("10.99.0.8")!])
        XCTAssertEqual(Set(attempts.map { "\($0.destination) \($0.uid)" }), ["10.99.0.7 0", "10.99.0.8 65534"], "each with its owner")
        // The remote ends: an IPv4-mapped one as the IPv4 address it is.
        XCTAssertEqual(Set(reading.samples.map(\.destination)),
                       [IPAddress("10.99.0.1")!, IPAddress("fd99::1")!, IPAddress("10.99.0.7")!, IPAddress("10.99.0.8")!])
        // tcp_info read: every end received the handshake; the connecting ends sent it (an
        // accepted end's SYN-ACK went out before it was a socket of its own).
        let established = reading.samples.filter { $0.state == .other }
        XCTAssertTrue(established.allSatisfy { $0.segmentsReceived > 0 }, "\(reading.samples)")
        XCTAssertEqual(established.filter { $0.segmentsSent >= 2 }.count, 3, "\(reading.samples)")
        XCTAssertEqual(reading.skipped, 0)

        let capped = try namespace.inside { try TCPSocketDiagnostics.read(addresses: addresses, limit: 2) }
        XCTAssertEqual(capped.samples.count, 2)
        XCTAssertEqual(capped.skipped, 6, "the rest of the dump is read and skipped")
    }
}
