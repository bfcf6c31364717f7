import Foundation
import LinuxSystem
@testable import NetlinkMonitor
import ReachabilityCore
import ReachConfiguration
@testable import ReachDaemon
import Synchronization
import SystemPackage
import TestSupport
import XCTest

/// The engine's socket reads on a host with a wired and a Wi-Fi interface (this kernel has no
/// Wi-Fi, so the kernel is scripted): the Wi-Fi station is read beside the sockets, only for
/// the Wi-Fi interface that carries them, and its radio lowers that interface's class.
final class EngineWirelessStationTests: XCTestCase {
    /// The engine over `kernel`, reading the sockets every 50 ms for a listener.
    private func listening(_ kernel: WiFiHost) throws -> EngineRun {
        var stall = ReachdConfiguration.Stall()
        stall.pollInterval = .milliseconds(50)
        let run = try EngineRun(kernel: kernel, directory: temporaryDirectory("reachd-engine"), stall: stall)
        run.post(.someoneListens(true))
        return run
    }

    func testTheStationOfAWiFiInterfaceWithTrafficIsReadAndLowersItsClass() throws {
        let kernel = WiFiHost(station: .success(WirelessStation(signal: -91, transmitBitRate: 6_000_000)))
        let run = try listening(kernel)
        defer { run.stop() }

        let estimates = try XCTUnwrap(run.waitForLinkQuality { $0[3]?.linkQuality == .minimal && $0[2]?.linkQuality == .good })
        XCTAssertEqual(estimates[3]?.signal, -91)
        XCTAssertEqual(estimates[3]?.transmitBitRate, 6_000_000)
        XCTAssertNil(estimates[2]?.signal, "eth0 has no radio")
        XCTAssertEqual(Set(kernel.stationReads), [3], "only wlan0, the Wi-Fi interface the sockets use")
        XCTAssertGreaterThanOrEqual(kernel.stationReads.count, 3, "one per read")
    }

    func testAStationThatCannotBeReadLeavesTheClassToTheSockets() throws {
        let kernel = WiFiHost(station: .failure(NetlinkError(operation: "resolve nl80211", errno: .noSuchFileOrDirectory)))
        let run = try listening(kernel)
        defer { run.stop() }

        let estimates = try XCTUnwrap(run.waitForLinkQuality { $0[3]?.linkQuality == .good && $0[2]?.linkQuality == .good })
        XCTAssertNil(estimates[3]?.signal)
        XCTAssertEqual(Set(kernel.stationReads), [3])
    }
}

extension EngineRun {
    /// Waits (up to 5 s) for a link-quality hand-over that `satisfies`; returns it.
    func waitForLinkQuality(_ satisfies: ([Int32: LinkQualityEstimate]) -> Bool) -> [Int32: LinkQualityEstimate]? {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if let found = linkQuality.last(where: satisfies) { return found }
            Thread.sleep(forTimeInterval: 0.01)
        }
        XCTFail("no such link quality in \(linkQuality)")
        return nil
    }
}

/// `makeSnapshot`'s network (eth0 wired, wlan0 Wi-Fi), an upload on each at 5 ms and
/// 50 Mbit/s progressing with every read, and a scripted nl80211 answer for any station read.
private final class WiFiHost: KernelView, Sendable {
    private struct Script {
        var reads: UInt64 = 0
        var stationReads: [Int32] = []
    }

    private let script = Mutex(Script())
    private let station: Result<WirelessStation?, NetlinkError>
    private let doorbell: EventDescriptor

    init(station: Result<WirelessStation?, NetlinkError>) {
        self.station = station
        doorbell = try! EventDescriptor()
    }

    /// The interfaces whose station was read, one entry per read.
    var stationReads: [Int32] { script.withLock { $0.stationReads } }

    var eventDescriptor: FileDescriptor { doorbell.descriptor }
    var resyncCount: Int { 0 }
    func drain() throws(NetlinkError) -> DrainOutcome { DrainOutcome() }
    func resynchronize() throws(NetlinkError) -> Set<DefaultRoute> { [] }
    func readRoutes(of families: Set<AddressFamily>) throws(NetlinkError) {}
    func finishStart() throws(NetlinkError) -> DrainOutcome { DrainOutcome() }
    func snapshot() -> NetworkSnapshot { makeSnapshot() }
    func lookup(_ destination: IPAddress, uid: UInt32?) -> RouteLookup { .failure(.noRoute) }
    func watch(_ addresses: Set<IPAddress>) throws(NetlinkError) {}

    func readSockets(addresses: [InterfaceAddress], limit: Int) throws(NetlinkError) -> TCPSocketDiagnostics.Reading {
        let k = script.withLock { script in
            script.reads += 1
            return script.reads
        }
        let samples = [Int32(2), 3].map { index in
            TCPSocketSample(cookie: UInt64(index), interfaceIndex: index, destination: .v4(192, 0, 2, 1), segmentsSent: UInt32(k) * 700,
                            timing: TCPTiming(rtt: 5_000, minimumRTT: 4_000, deliveryRate: 6_250_000, bytesAcknowledged: k * 1_000_000))
        }
        return TCPSocketDiagnostics.Reading(samples: samples)
    }

    func readStation(interfaceIndex: Int32) throws(NetlinkError) -> WirelessStation? {
        script.withLock { $0.stationReads.append(interfaceIndex) }
        return try station.get()
    }
}
