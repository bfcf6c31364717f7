import Foundation
import ReachClient
import ReachabilityCore
import TestSupport
import XCTest

/// Networks that cost money though their type does not say so, on a real kernel: a phone
/// tethered over USB (its sysfs facts presented to reachd with `--sysfs-root`, the only way to
/// have an iPhone here) and an iPhone Personal Hotspot's address plan in the namespaces.
final class ExpensiveNetworkTests: DaemonTestCase {
    private func configuration(_ text: String) throws -> String {
        let path = try temporaryDirectory("reachd-expensive") + "/reachd.toml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A sysfs tree in which the host's eth0 is bound to `driver` on a USB device of `vendor`.
    private func sysfs(driver: String, vendor: String) throws -> String {
        let root = try temporaryDirectory("reachd-sysfs")
        let fm = FileManager.default
        let usbInterface = root + "/devices/pci0000:00/usb1/1-1/1-1:1.0"
        try fm.createDirectory(atPath: usbInterface, withIntermediateDirectories: true)
        try "\(vendor)\n".write(toFile: root + "/devices/pci0000:00/usb1/1-1/idVendor", atomically: true, encoding: .utf8)
        try fm.createDirectory(atPath: root + "/bus/usb/drivers/\(driver)", withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: usbInterface + "/driver", withDestinationPath: root + "/bus/usb/drivers/\(driver)")
        try fm.createDirectory(atPath: root + "/class/net/eth0", withIntermediateDirectories: true)
        try "INTERFACE=eth0\n".write(toFile: root + "/class/net/eth0/uevent", atomically: true, encoding: .utf8)
        try fm.createSymbolicLink(atPath: root + "/class/net/eth0/device", withDestinationPath: usbInterface)
        return root
    }

    /// An iPhone on USB (ipheth) is expensive, named so by reachctl; a USB Ethernet adapter on
    /// the generic NCM driver from a dock maker is not; an override wins over the driver.
    func testTetheredPhoneIsExpensive() async throws {
        try topology.configureIPv4()
        let phone = try sysfs(driver: "ipheth", vendor: "05ac")
        var (daemon, client) = try startDaemon(extraArguments: ["--sysfs-root", phone])
        var path = try await client.status().path
        XCTAssertTrue(path.isExpensive)
        XCTAssertEqual(path.expensiveReason, .tethering)
        let status = try reachctl(["status", "--socket", daemon.socketPath]).stdout
        XCTAssertTrue(status.contains("Expensive:    yes (tethering (ipheth))"), status)
        let interfaces = try reachctl(["interfaces", "--socket", daemon.socketPath]).stdout
        XCTAssertTrue(interfaces.contains("eth0: expensive (tethering (ipheth))"), interfaces)
        let eth0 = try await interface("eth0", from: client)
        XCTAssertEqual(eth0?.driver, "ipheth")
        print("expensive: iPhone on USB:\n\(status)")

        self.daemon = nil
        let dock = try sysfs(driver: "cdc_ncm", vendor: "0bda")
        (daemon, client) = try startDaemon(extraArguments: ["--sysfs-root", dock])
        path = try await client.status().path
        XCTAssertFalse(path.isExpensive, "a dock's NCM Ethernet")
        XCTAssertNil(path.expensiveReason)

        self.daemon = nil
        let override = try configuration("[[interfaces.override]]\nmatch = \"eth0\"\nexpensive = false\n")
        (daemon, client) = try startDaemon(extraArguments: ["--sysfs-root", phone, "--config", override])
        path = try await client.status().path
        XCTAssertFalse(path.isExpensive, "the override wins")
    }

    /// An iPhone Personal Hotspot's plan: 172.20.10.2/28, default via 172.20.10.1. On by
    /// default, named by reachctl; followed when the lease goes; off with the switch.
    func testHotspotAddressPlan() async throws {
        try topology.router.ip("addr", "add", "172.20.10.1/28", "dev", "eth0")
        try topology.host.ip("addr", "add", "172.20.10.2/28", "dev", "eth0")
        try topology.host.ip("route", "add", "default", "via", "172.20.10.1", "dev", "eth0")
        let (daemon, client) = try startDaemon()
        var path = try await client.status().path
        XCTAssertEqual(path.status, .satisfied)
        XCTAssertEqual(path.expensiveReason, .hotspotAddressPlan)
        let status = try reachctl(["status", "--socket", daemon.socketPath]).stdout
        XCTAssertTrue(status.contains("Expensive:    yes (hotspot address plan)"), status)
        print("expensive: hotspot plan:\n\(status)")

        // Another network's lease on the same interface.
        try topology.host.ip("route", "del", "default")
        try topology.host.ip("addr", "del", "172.20.10.2/28", "dev", "eth0")
        try topology.host.ip("addr", "add", "10.77.0.2/24", "dev", "eth0")
        try topology.host.ip("route", "add", "default", "via", "10.77.0.1", "dev", "eth0")
        let deadline = Date().addingTimeInterval(5)
        repeat {
            path = try await client.status().path
            if path.status == .satisfied && !path.isExpensive { break }
            try await Task.sleep(for: .milliseconds(50))
        } while Date() < deadline
        XCTAssertEqual(path.status, .satisfied)
        XCTAssertFalse(path.isExpensive, "another network: not expensive")

        self.daemon = nil
        try topology.host.ip("addr", "add", "172.20.10.2/28", "dev", "eth0")
        try topology.host.ip("route", "replace", "default", "via", "172.20.10.1", "dev", "eth0")
        let off = try configuration("[interfaces]\nhotspot-address-plan = false\n")
        let (_, offClient) = try startDaemon(extraArguments: ["--config", off])
        path = try await offClient.status().path
        XCTAssertEqual(path.status, .satisfied)
        XCTAssertFalse(path.isExpensive, "switched off")
    }
}
