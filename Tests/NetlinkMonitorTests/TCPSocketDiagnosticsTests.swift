import CNetlink
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

    // MARK: The destroy broadcast

    /// Destroy records as Linux 6.18 broadcast them (SKNLGRP_INET_TCP_DESTROY and
    /// SKNLGRP_INET6_TCP_DESTROY, recorded in a namespace by an unprivileged process): the
    /// client end of a GET over 10.99.0.1 (segs_in 5), of one over fd99::1 (segs_in 3) and a
    /// connection to 10.99.0.7 that gave up in SYN_SENT (segs_in 0). The same bytes seed the
    /// netlink fuzz target (`Fuzz/make-netlink-seeds`).
    static let recorded: [String: String] = [
        "v4Answered":
            "7c01000014000000000000000000000002070000cc4c1b580a6300010000000000000000000000000a63000100000000" +
            "0000000000000000000000000310000000000000000000000000000000000000000000000000000005000a0006000000" +
            "1c010200070000000007aa00e01c0300409c000000800000180200000000000000000000000000000000000000000000" +
            "04000000000000000400000004000000ffff0000d7ff00003600000015000000ffffff7f0c000000cbff000003000000" +
            "00000000d7ff0000000000002a2772d203000000ffffffffffffffff1400000000000000160000000000000005000000" +
            "05000000000000002c0000000100000001000000711c672b000000000000000000000000000000000000000000000000" +
            "000000000300000000000000120000000000000000000000000000000000000000000000000000000000010000000100" +
            "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "v6Answered":
            "7c0100001400000000000000000000000a070000978a1b59fd990000000000000000000000000001fd99000000000000" +
            "0000000000000001000000000510000000000000000000000000000000000000000000000000000005000a0006000000" +
            "1c010200070000000007aa01e01c03000000000000800000180200000000000000000000000000000000000000000000" +
            "0400000000000000040000000400000000000100c4ff00003d0000001e000000ffffff7f0b000000b8ff000003000000" +
            "00000000c4ff000000000000a85c306703000000ffffffffffffffff0200000000000000010000000000000003000000" +
            "03000000000000002800000000000000000000000000d430000000000000000000000000000000000000000000000000" +
            "000000000200000000000000000000000000000000000000000000000000000000000000000000000000010000000100" +
            "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "synSentGivenUp":
            "7c01000014000000000000000000000002070000cd1e00500a6300010000000000000000000000000a63000700000000" +
            "0000000000000000000000000610000000000000000000000000000001000000000000000000000005000a0006000000" +
            "1c010200070402000000000140420f00000000000c020000580000000000000000000000010000000000000000000000" +
            "801a030000000000801a0300801a0300dc050000f0fa00000000000090d00300ffffff7f01000000b405000003000000" +
            "000000000000000000000000ffffffffffffffffffffffffffffffff0000000000000000000000000000000001000000" +
            "0000000000000000ffffffff000000000000000000000000000000000000000000000000000000000000000000000000" +
            "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000f0fa0000" +
            "0200000002000100000800000000000000000000000000000000000000000000000000000000000000000000",
    ]

    /// The recorded destroy messages through the dump's decoder: each becomes the sample of
    /// its socket (state CLOSE, read as `.other`; the uid is not filled in by the kernel),
    /// attributed by its source address; the same bytes cut short or on no known interface
    /// are no sample, and a record without `tcp_info` has zero counters.
    func testRecordedDestroyMessagesAreDecodedAsTheDumpsAre() throws {
        let owners: [IPAddress: Int32] = [IPAddress("10.99.0.1")!: 4, IPAddress("fd99::1")!: 4]
        func bytes(_ name: String) -> [UInt8] {
            let hex = Array(Self.recorded[name]!.utf8)
            return stride(from: 0, to: hex.count, by: 2).map { UInt8(String(decoding: hex[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
        }
        func decode(_ bytes: [UInt8], owners: [IPAddress: Int32] = owners) -> TCPSocketSample? {
            let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 16), alignment: MemoryLayout<nlmsghdr>.alignment)
            defer { memory.deallocate() }
            memory.initializeMemory(as: UInt8.self, repeating: 0)
            memory.copyBytes(from: bytes)
            return TCPSocketDiagnostics.sample(NetlinkMessage(header: memory.baseAddress!.bindMemory(to: nlmsghdr.self, capacity: 1)), owners: owners)
        }
        /// The message with its length field set to `length` (a cut the kernel never sends).
        func cut(_ bytes: [UInt8], to length: Int) -> [UInt8] {
            withUnsafeBytes(of: UInt32(length).littleEndian) { Array($0) } + bytes[4..<length]
        }
        /// The v4 record without its INET_DIAG_INFO attribute (the header and INET_DIAG_PROTOCOL only).
        func withoutInfo(_ bytes: [UInt8]) -> [UInt8] { cut(bytes, to: 16 + 72 + 8) }
        let answered = bytes("v4Answered"), answered6 = bytes("v6Answered"), givenUp = bytes("synSentGivenUp")
        let rows: [(String, [UInt8], [IPAddress: Int32], TCPSocketSample?)] = [
            ("a GET's client end over IPv4", answered, owners,
             TCPSocketSample(cookie: 4099, interfaceIndex: 4, destination: IPAddress("10.99.0.1")!, segmentsSent: 5, segmentsReceived: 5,
                             timing: TCPTiming(rtt: 54, minimumRTT: 44, deliveryRate: 728_177_777, bytesAcknowledged: 20, bytesReceived: 22))),
            ("a client end over IPv6 (its delivery rate app-limited)", answered6, owners,
             TCPSocketSample(cookie: 4101, interfaceIndex: 4, destination: IPAddress("fd99::1")!, segmentsSent: 3, segmentsReceived: 3,
                             timing: TCPTiming(rtt: 61, minimumRTT: 40, deliveryRate: 819_200_000, appLimited: true, bytesAcknowledged: 2, bytesReceived: 1))),
            ("a SYN_SENT given up: nothing received, no RTT (tcpi_min_rtt ~0 read as none)", givenUp, owners,
             TCPSocketSample(cookie: 4102, interfaceIndex: 4, destination: IPAddress("10.99.0.7")!, segmentsSent: 1, lost: 1,
                             timing: TCPTiming(appLimited: true))),
            ("on no known interface", answered, [:], nil),
            ("cut inside inet_diag_msg", cut(answered, to: 16 + 40), owners, nil),
            ("no tcp_info: zero counters", withoutInfo(answered), owners,
             TCPSocketSample(cookie: 4099, interfaceIndex: 4, destination: IPAddress("10.99.0.1")!)),
            ("tcp_info cut before tcpi_segs_in (an older kernel's): the fields it has", cut(answered, to: 16 + 72 + 8 + 4 + 104), owners,
             TCPSocketSample(cookie: 4099, interfaceIndex: 4, destination: IPAddress("10.99.0.1")!)),
        ]
        for (name, message, owners, expected) in rows {
            XCTAssertEqual(decode(message, owners: owners), expected, name)
        }
    }

    /// The destroy watch on a real kernel, as an unprivileged reader would have it: a GET over
    /// a veth address in a fresh namespace that connects, is answered and closes, and a
    /// connection that gives up in SYN_SENT; the drains return both ends of the GET with what
    /// they received, and the attempt with nothing; a drain stops at its limit.
    func testTheDestroyWatchSeesAnAnsweredConnectionThatClosed() throws {
        try requireRoot()
        let namespace = try NetworkNamespace(prefix: "reachd-destroy")
        try namespace.ip("link", "set", "lo", "up")
        try namespace.ip("link", "add", "dummy0", "type", "veth", "peer", "name", "peer0")
        try namespace.ip("link", "set", "dummy0", "up")
        try namespace.ip("link", "set", "peer0", "up")
        try namespace.ip("addr", "add", "10.99.0.1/24", "dev", "dummy0")
        let index = Int32(try namespace.exec(["cat", "/sys/class/net/dummy0/ifindex"]).trimmingCharacters(in: .whitespacesAndNewlines))!
        let addresses = [InterfaceAddress(interfaceIndex: index, address: IPAddress("10.99.0.1")!, prefixLength: 24)]
        let script = """
            import socket, sys, threading
            server = socket.create_server(("10.99.0.1", 7000))
            def serve():
                connection = server.accept()[0]
                connection.recv(100)
                connection.sendall(b"HTTP/1.0 204 No Content\\r\\n\\r\\n")
                connection.close()
            threading.Thread(target=serve).start()
            client = socket.create_connection(("10.99.0.1", 7000))
            client.sendall(b"GET / HTTP/1.0\\r\\n\\r\\n")
            print("answer", client.recv(100), file=sys.stderr)
            client.close()
            pending = socket.socket()
            pending.setsockopt(socket.IPPROTO_TCP, socket.TCP_SYNCNT, 1)
            pending.bind(("10.99.0.1", 0))
            try:
                pending.connect(("10.99.0.7", 80))  # on dummy0's subnet: nobody answers
            except OSError as error:
                print("gave up:", error, file=sys.stderr)
            pending.close()
            """
        let watch = try namespace.inside { try TCPSocketDiagnostics.DestroyWatch() }
        XCTAssertEqual(try watch.drain(addresses: addresses, limit: 100), TCPSocketDiagnostics.Destroyed(), "nothing destroyed yet")
        let run = try Command.run(["ip", "netns", "exec", namespace.name, "python3", "-c", script])
        XCTAssertTrue(run.stderr.contains("answer b'HTTP/1.0 204"), run.stderr)
        XCTAssertTrue(run.stderr.contains("gave up"), run.stderr)
        // The kernel broadcasts from a work queue: give it a moment.
        var destroyed = TCPSocketDiagnostics.Destroyed()
        let deadline = ContinuousClock.now + .seconds(2)
        while ContinuousClock.now < deadline && destroyed.samples.count < 4 {
            destroyed.samples += try watch.drain(addresses: addresses, limit: 100).samples
            Thread.sleep(forTimeInterval: 0.05)
        }
        // Both ends of the GET (each received its handshake and answer), the attempt, and the
        // listener (no remote address), which never counts a segment in.
        let get = destroyed.samples.filter { $0.destination == IPAddress("10.99.0.1")! }
        let attempt = destroyed.samples.filter { $0.destination == IPAddress("10.99.0.7")! }
        let listener = destroyed.samples.filter { $0.destination == IPAddress("0.0.0.0")! }
        print("destroyed: " + destroyed.samples.map { "\($0.destination) segs_in=\($0.segmentsReceived) segs_out=\($0.segmentsSent)" }.joined(separator: ", "))
        XCTAssertEqual(get.count, 2, "\(destroyed)")
        XCTAssertTrue(get.allSatisfy { $0.segmentsReceived > 0 && $0.interfaceIndex == index }, "\(destroyed)")
        XCTAssertEqual(attempt.map(\.segmentsReceived), [0], "the SYN_SENT given up received nothing")
        XCTAssertEqual(listener.map(\.segmentsReceived), [0], "\(destroyed)")
        XCTAssertEqual(destroyed.samples.count, 4, "\(destroyed)")
        XCTAssertFalse(destroyed.overflowed)
        XCTAssertEqual(try watch.drain(addresses: addresses, limit: 100), TCPSocketDiagnostics.Destroyed(), "drained")

        // A drain reads at most its limit; the rest waits for the next one.
        _ = try Command.run(["ip", "netns", "exec", namespace.name, "python3", "-c", script])
        Thread.sleep(forTimeInterval: 0.5)
        let first = try watch.drain(addresses: addresses, limit: 2)
        XCTAssertEqual(first.samples.count, 2)
        XCTAssertTrue(first.atLimit)
        let rest = try watch.drain(addresses: addresses, limit: 100)
        XCTAssertEqual(rest.samples.count, 2)
        XCTAssertFalse(rest.atLimit)
    }
}
