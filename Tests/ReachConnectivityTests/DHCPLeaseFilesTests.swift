import Foundation
import NIOCore
import NIOPosix
import ReachabilityCore
import ReachConnectivity
import XCTest

/// The leases reachd's dhcpcd hook writes (`hook/IFNAME`, networkd's format), case by case:
/// only a link that exists names a file, and only its address held counts.
final class DHCPLeaseFilesTests: XCTestCase {
    private static let marker = "VENDOR_SPECIFIC=414e44524f49445f4d455445524544\n"

    func testHookLeases() throws {
        let links: [Int32: Link] = [
            2: Link(index: 2, name: "eth0", flags: [.up, .running], operState: .up, carrier: true),
            3: Link(index: 3, name: "wlan0", flags: [.up, .running], operState: .up, carrier: true),
        ]
        let addresses = [
            InterfaceAddress(interfaceIndex: 2, address: IPAddress("10.55.0.16")!, prefixLength: 24),
            InterfaceAddress(interfaceIndex: 3, address: IPAddress("10.66.0.16")!, prefixLength: 24),
        ]
        let cases: [(String, [String: String], Set<Int32>)] = [
            ("eth0's lease with the marker", ["eth0": "ADDRESS=10.55.0.16\n" + Self.marker], [2]),
            ("without it", ["eth0": "ADDRESS=10.55.0.16\n"], []),
            ("an address no longer held", ["eth0": "ADDRESS=10.55.0.99\n" + Self.marker], []),
            ("another link's address", ["eth0": "ADDRESS=10.66.0.16\n" + Self.marker], []),
            ("both links", ["eth0": "ADDRESS=10.55.0.16\n" + Self.marker, "wlan0": "ADDRESS=10.66.0.16\n" + Self.marker], [2, 3]),
            ("no link of that name", ["eth9": "ADDRESS=10.55.0.16\n" + Self.marker], []),
            ("the hook's temporary file", [".eth0.a1B2c3": "ADDRESS=10.55.0.16\n" + Self.marker], []),
            ("an index, as networkd names it", ["2": "ADDRESS=10.55.0.16\n" + Self.marker], []),
            ("no directory", [:], []),
        ]
        for (name, files, expected) in cases {
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("reachd-hook-leases-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: root) }
            var leaseFiles = DHCPLeaseFiles()
            (leaseFiles.networkd, leaseFiles.dhclient, leaseFiles.hook) = (root + "/networkd", root + "/dhclient", root + "/hook")
            if !files.isEmpty { try FileManager.default.createDirectory(atPath: leaseFiles.hook, withIntermediateDirectories: true) }
            for (file, text) in files { XCTAssertTrue(FileManager.default.createFile(atPath: leaseFiles.hook + "/" + file, contents: Data(text.utf8)), name) }
            XCTAssertEqual(leaseFiles.meteredInterfaces(links, addresses: addresses), expected, name)
        }
    }

    func testLeaseNames() {
        let cases: [(String, Bool)] = [
            ("eth0", true), ("wlp0s20f3", true), ("enx001122334455", true), ("2", true), ("dhclient.eth0.leases", true),
            (".eth0.a1B2c3", false), (".#lease2abc", false), ("", false), ("enx0011223344556", false), ("a/b", false),
        ]
        for (name, expected) in cases { XCTAssertEqual(DHCPLeaseFiles.isLease(name), expected, name) }
        XCTAssertTrue(DHCPLeaseFiles().directories.contains("/run/reachd-leases"))
    }
}

/// The lease watch on the event loop: a lease written is told once a burst settled, other
/// names and a stopped watch tell nothing.
final class DHCPLeaseWatchTests: XCTestCase {
    func testLeasesWrittenAreToldOncePerBurst() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reachd-lease-watch-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var settings = DHCPLeaseFiles()
        (settings.networkd, settings.dhclient, settings.hook) = (directory, directory + "/none", directory + "/none")
        let files = settings
        let (watch, told) = try loop.submit {
            let told = NIOLoopBoundBox(0, eventLoop: loop)
            let watch = try DHCPLeaseWatch(files, eventLoop: loop, changed: { told.value += 1 }, lost: { XCTFail("\($0)") })
            return (NIOLoopBoundBox(Optional(watch), eventLoop: loop), told)
        }.wait()
        func count(after milliseconds: UInt32) throws -> Int {
            usleep(milliseconds * 1000)
            return try loop.submit { told.value }.wait()
        }
        // A loaded machine delays a notification, never drops one: wait for it, then look
        // again after four settles for one too many.
        func count(reaching expected: Int) throws -> Int {
            let deadline = ContinuousClock.now + .seconds(10)
            while try count(after: 20) < expected, ContinuousClock.now < deadline {}
            return try count(after: 200)
        }
        // Written from the loop's own thread, a burst stays one however slow the machine:
        // the watch drains nothing until all of it is written.
        func burst(_ texts: [String]) throws {
            try loop.submit { for text in texts { try text.write(toFile: directory + "/2", atomically: false, encoding: .utf8) } }.wait()
        }

        try "".write(toFile: directory + "/.eth0.tmp", atomically: false, encoding: .utf8)
        XCTAssertEqual(try count(after: 200), 0, "a temporary file is no lease")
        try burst((0..<3).map { "round \($0)\n" })
        XCTAssertEqual(try count(reaching: 1), 1, "networkd's lease of link 2, written three times: told once")
        try burst(["again\n"])
        XCTAssertEqual(try count(reaching: 2), 2, "written again later: told again")
        try loop.submit { watch.value?.stop() }.wait()
        try "stopped\n".write(toFile: directory + "/2", atomically: false, encoding: .utf8)
        XCTAssertEqual(try count(after: 200), 2, "stopped: nothing told")
    }
}
