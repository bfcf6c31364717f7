import Crypto
import Foundation
import Glibc
import LinuxSystem
@testable import ReachConfiguration
@testable import ReachDaemon
import SystemPackage
import TestSupport
import XCTest


/// `--check-config` and a reload accepted what the start refuses. One
/// function (`DaemonOptions.checkStartRequirements`) now checks for all three: pinned
/// certificate files (regular, bounded, certificates) and the metrics `listen` address.
final class StartRequirementsTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = try temporaryDirectory("reachd-start-checks")
    }

    private func options(pinned: String? = nil, listen: String? = nil, socket: String? = nil) -> DaemonOptions {
        var options = DaemonOptions(socketPath: socket ?? directory + "/io.reachd.Reachability")
        if let pinned {
            options.connectivity.probe.httpsURL = HTTPEndpoint("https://probe.example/")
            options.connectivity.probe.trust = try! TrustPolicy(pinning: .certificate, pinnedCertificates: [pinned])
        }
        options.metrics.listen = listen.flatMap(MetricsListenAddress.init)
        return options
    }

    private func problems(_ options: DaemonOptions, _ listener: MetricsListener = .none) -> [String] {
        do {
            _ = try options.checkStartRequirements(metricsListener: listener)
            return []
        } catch {
            return error.problems
        }
    }

    func testPinnedCertificateFiles() throws {
        let fixtures = try TrustFixtures()
        let d = directory
        try fixtures.selfSigned.certificate.serializeAsPEM().pemString.write(toFile: d + "/good.pem", atomically: true, encoding: .utf8)
        XCTAssertEqual(mkfifo(d + "/fifo", 0o600), 0)
        try FileManager.default.createDirectory(atPath: d + "/directory", withIntermediateDirectories: false)
        XCTAssertTrue(FileManager.default.createFile(atPath: d + "/huge", contents: nil))
        XCTAssertEqual(truncate(d + "/huge", 1 << 30), 0, "a sparse 1 GiB file")  // it is never read whole
        try FileManager.default.createSymbolicLink(atPath: d + "/loop-a", withDestinationPath: d + "/loop-b")
        try FileManager.default.createSymbolicLink(atPath: d + "/loop-b", withDestinationPath: d + "/loop-a")
        try P256.Signing.PrivateKey().pemRepresentation.write(toFile: d + "/key.pem", atomically: true, encoding: .utf8)
        try "not a certificate\n".write(toFile: d + "/garbage", atomically: true, encoding: .utf8)
        let cases: [(file: String, problem: String?)] = [
            (d + "/good.pem", nil),
            (d + "/fifo", "not a regular file (a FIFO, device or socket)"),  // and no hang: opened without blocking
            ("/dev/zero", "not a regular file (a FIFO, device or socket)"),
            (d + "/directory", "a directory, not a certificate file"),
            (d + "/huge", "larger than 4 MiB"),
            (d + "/loop-a", "a loop of symbolic links"),
            (d + "/missing", "cannot read: No such file or directory"),
            (d + "/key.pem", "no certificate in the PEM"),
            (d + "/garbage", "not a certificate (neither PEM nor DER)"),
        ]
        for (file, problem) in cases {
            let found = problems(options(pinned: file))
            if let problem {
                XCTAssertEqual(found.count, 1, file)
                XCTAssertTrue(found.first?.hasPrefix("[probe.trust] pinned-certificates: \(file): \(problem)") == true, "\(file): \(found)")
            } else {
                XCTAssertEqual(found, [], file)
            }
        }
    }

    func testMetricsListenAddresses() throws {
        let d = directory
        try "".write(toFile: d + "/regular", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: d + "/link", withDestinationPath: d)
        let live = try UnixSocket.listen(at: d + "/live.sock", backlog: 4)
        defer { try? live.close() }
        let stale = try UnixSocket.listen(at: d + "/stale.sock", backlog: 4)
        try stale.close()  // the file stays, nothing answers
        let varlink = d + "/io.reachd.Reachability"
        let cases: [(listen: String, listener: MetricsListener, problem: String?)] = [
            (d + "/metrics.sock", .none, nil),
            (d + "/stale.sock", .none, nil),
            (d + "/missing/metrics.sock", .none, "\(d)/missing/metrics.sock: the directory \(d)/missing does not exist"),
            (d + "/regular/metrics.sock", .none, "\(d)/regular/metrics.sock: \(d)/regular is not a directory"),
            (d + "/regular", .none, "\(d)/regular exists and is not a socket"),
            (d, .none, nil),  // refused by the parser already (a path ending in "/" is), shown for the record below
            (varlink, .none, "\(varlink) is reachd's own Varlink socket"),
            (d + "/link/io.reachd.Reachability", .none, "\(d)/link/io.reachd.Reachability is reachd's own Varlink socket"),
            (d + "/live.sock", .none, "\(d)/live.sock: another server listens on this socket"),
            (d + "/live.sock", .thisProcess(MetricsListenAddress(d + "/live.sock")), nil),  // a reload: reachd's own endpoint
            ("192.0.2.1:9799", .none, "cannot bind 192.0.2.1:9799: no interface has this address"),
            ("[2001:db8::1]:9799", .none, "cannot bind [2001:db8::1]:9799: no interface has this address"),
        ].filter { $0.listen != d }
        for (listen, listener, problem) in cases {
            XCTAssertNotNil(MetricsListenAddress(listen), listen)
            XCTAssertEqual(problems(options(listen: listen, socket: varlink), listener), problem.map { ["[metrics] listen: " + $0] } ?? [], listen)
        }
        // A port in use: refused at start and on reload, not by --check-config while a reachd runs (it may be that reachd's).
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: UInt32(0x7F00_0001).bigEndian), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            XCTAssertEqual(bind(holder, pointer, length), 0)
            XCTAssertEqual(listen(holder, 1), 0)
            XCTAssertEqual(getsockname(holder, pointer, &length), 0)
        } }
        let inUse = "127.0.0.1:\(UInt16(bigEndian: address.sin_port))"
        XCTAssertEqual(problems(options(listen: inUse), .none), ["[metrics] listen: cannot bind \(inUse): the port is in use"])
        XCTAssertEqual(problems(options(listen: inUse), .thisProcess(nil)), ["[metrics] listen: cannot bind \(inUse): the port is in use"])
        XCTAssertEqual(problems(options(listen: inUse, socket: d + "/live.sock"), .runningReachd), [], "a reachd answers on its socket")
        XCTAssertEqual(problems(options(listen: inUse, socket: d + "/stale.sock"), .runningReachd).count, 1, "no reachd answers")
        close(holder)
        XCTAssertEqual(problems(options(listen: inUse), .none), [], "free again")
    }

    /// The decision alone, over facts as `MetricsListenCheck.facts` gathers them.
    func testListenDecision() {
        typealias Facts = MetricsListenCheck.Facts
        func unix(_ directory: MetricsListenCheck.UnixFacts.Directory = .directory, _ existing: FileSystem.Kind = .nothing,
                  varlink: Bool = false, answering: Bool = false, reachd: Bool = false) -> Facts {
            Facts(place: .unix(.init(directory: directory, existing: existing, isVarlinkSocket: varlink, answering: answering)), reachdMayHoldIt: reachd)
        }
        let socket = MetricsListenAddress("/run/m/metrics.sock")!, tcp = MetricsListenAddress("127.0.0.1:9100")!
        let cases: [(address: MetricsListenAddress, facts: Facts, problem: String?)] = [
            (socket, unix(), nil),
            (socket, unix(.missing), "/run/m/metrics.sock: the directory /run/m does not exist"),
            (socket, unix(.notADirectory), "/run/m/metrics.sock: /run/m is not a directory"),
            (socket, unix(.unreadable(.permissionDenied)), "/run/m/metrics.sock: /run/m: Permission denied"),
            (socket, unix(.directory, .regularFile), "/run/m/metrics.sock exists and is not a socket"),
            (socket, unix(.directory, .directory), "/run/m/metrics.sock exists and is not a socket"),
            (socket, unix(.directory, .other), "/run/m/metrics.sock exists and is not a socket"),
            (socket, unix(.directory, .socket), nil),
            (socket, unix(.directory, .socket, answering: true), "/run/m/metrics.sock: another server listens on this socket"),
            (socket, unix(.directory, .socket, answering: true, reachd: true), nil),
            (socket, unix(.directory, .socket, varlink: true, answering: true, reachd: true), "/run/m/metrics.sock is reachd's own Varlink socket"),
            (socket, unix(.missing, varlink: true), "/run/m/metrics.sock is reachd's own Varlink socket"),
            (tcp, Facts(place: .tcp(bindError: nil)), nil),
            (tcp, Facts(place: .tcp(bindError: .addressNotAvailable)), "cannot bind 127.0.0.1:9100: no interface has this address"),
            (tcp, Facts(place: .tcp(bindError: .addressInUse)), "cannot bind 127.0.0.1:9100: the port is in use"),
            (tcp, Facts(place: .tcp(bindError: .addressInUse), reachdMayHoldIt: true), nil),
            (tcp, Facts(place: .tcp(bindError: .permissionDenied)), "cannot bind 127.0.0.1:9100: a port below 1024 needs CAP_NET_BIND_SERVICE"),
        ]
        for (index, testCase) in cases.enumerated() {
            XCTAssertEqual(MetricsListenCheck.problem(testCase.address, facts: testCase.facts), testCase.problem, "case \(index)")
        }
    }
}
