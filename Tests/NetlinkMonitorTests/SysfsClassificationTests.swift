import Foundation
@testable import NetlinkMonitor
import ReachabilityCore
import XCTest

/// The sysfs reader on fixture trees shaped like real devices, fed through the
/// classifier together with what netlink reports (ARPHRD type, IFLA_INFO_KIND, flags).
final class SysfsClassificationTests: XCTestCase {
    private struct Device {
        var name: String
        var uevent: String
        var files: [String] = []       // empty marker files/directories under class/net/NAME
        var driver: String? = nil      // device/driver symlink target's last component
        var usbVendor: String? = nil   // idVendor of the USB device: device is then a USB interface
        var hardwareType: UInt16 = ARPHardwareType.ether
        var kind: String? = nil
        var flags: LinkFlags = [.up, .running, .lowerUp]
        var expected: InterfaceType
        var expectedFacts: DeviceFacts
    }

    private let devices: [Device] = [
        Device(name: "wlp2s0", uevent: "DEVTYPE=wlan\nINTERFACE=wlp2s0\nIFINDEX=3\n", files: ["phy80211", "wireless"],
               driver: "iwlwifi", expected: .wifi,
               expectedFacts: DeviceFacts(isWireless: true, deviceType: "wlan", driver: "iwlwifi")),
        Device(name: "wwan0", uevent: "DEVTYPE=wwan\nINTERFACE=wwan0\n", driver: "qmi_wwan",
               hardwareType: ARPHardwareType.rawIP, expected: .cellular,
               expectedFacts: DeviceFacts(deviceType: "wwan", driver: "qmi_wwan")),
        Device(name: "wwan1", uevent: "INTERFACE=wwan1\n", driver: "cdc_mbim", hardwareType: ARPHardwareType.none,
               expected: .cellular, expectedFacts: DeviceFacts(driver: "cdc_mbim")),
        Device(name: "enp3s0", uevent: "INTERFACE=enp3s0\nIFINDEX=2\n", driver: "e1000e", expected: .wiredEthernet,
               expectedFacts: DeviceFacts(driver: "e1000e")),
        Device(name: "br0", uevent: "DEVTYPE=bridge\nINTERFACE=br0\n", files: ["bridge"], kind: "bridge",
               expected: .wiredEthernet, expectedFacts: DeviceFacts(deviceType: "bridge")),
        Device(name: "veth1", uevent: "INTERFACE=veth1\n", kind: "veth", expected: .wiredEthernet,
               expectedFacts: DeviceFacts()),
        Device(name: "tun0", uevent: "INTERFACE=tun0\n", files: ["tun_flags"], hardwareType: ARPHardwareType.none,
               kind: "tun", flags: [.up, .running, .lowerUp, .pointToPoint, .noARP], expected: .other,
               expectedFacts: DeviceFacts()),
        Device(name: "ppp0", uevent: "INTERFACE=ppp0\n", hardwareType: ARPHardwareType.ppp,
               flags: [.up, .running, .lowerUp, .pointToPoint, .noARP], expected: .other, expectedFacts: DeviceFacts()),
        Device(name: "eth1", uevent: "INTERFACE=eth1\n", driver: "ipheth", usbVendor: "05ac\n", expected: .wiredEthernet,
               expectedFacts: DeviceFacts(driver: "ipheth", usbVendor: 0x05AC)),
        Device(name: "enx0", uevent: "INTERFACE=enx0\n", driver: "cdc_ncm", usbVendor: "18d1\n", expected: .wiredEthernet,
               expectedFacts: DeviceFacts(driver: "cdc_ncm", usbVendor: 0x18D1)),
        Device(name: "enx1", uevent: "INTERFACE=enx1\n", driver: "r8152", usbVendor: "bogus\n", expected: .wiredEthernet,
               expectedFacts: DeviceFacts(driver: "r8152")),
        Device(name: "lo", uevent: "INTERFACE=lo\n", hardwareType: ARPHardwareType.loopback,
               flags: [.up, .running, .lowerUp, .loopback], expected: .loopback, expectedFacts: DeviceFacts()),
    ]

    func testFixtureDevicesClassify() throws {
        let root = NSTemporaryDirectory() + "reachd-sysfs-fixture-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let fm = FileManager.default
        for device in devices {
            let base = "\(root)/class/net/\(device.name)"
            try fm.createDirectory(atPath: base, withIntermediateDirectories: true)
            try device.uevent.write(toFile: base + "/uevent", atomically: true, encoding: .utf8)
            for file in device.files { try fm.createDirectory(atPath: base + "/" + file, withIntermediateDirectories: true) }
            if let driver = device.driver {
                // As in real sysfs: device/driver is a symlink into bus/…/drivers/NAME.
                let driverDirectory = "\(root)/bus/pci/drivers/\(driver)"
                try fm.createDirectory(atPath: driverDirectory, withIntermediateDirectories: true)
                if let vendor = device.usbVendor {
                    // A USB interface: class/net/NAME/device links to it, its parent is the USB device.
                    let usbDevice = "\(root)/devices/usb1/1-\(device.name)"
                    try fm.createDirectory(atPath: usbDevice + "/1-1:1.0", withIntermediateDirectories: true)
                    try vendor.write(toFile: usbDevice + "/idVendor", atomically: true, encoding: .utf8)
                    try fm.createSymbolicLink(atPath: base + "/device", withDestinationPath: usbDevice + "/1-1:1.0")
                } else {
                    try fm.createDirectory(atPath: base + "/device", withIntermediateDirectories: true)
                }
                try fm.createSymbolicLink(atPath: base + "/device/driver", withDestinationPath: driverDirectory)
            }
        }

        let reader = SysfsDeviceFacts(root: root)
        for (index, device) in devices.enumerated() {
            let facts = reader.facts(for: device.name)
            XCTAssertEqual(facts, device.expectedFacts, device.name)
            let link = Link(index: Int32(index + 1), name: device.name, flags: device.flags, operState: .up, carrier: true,
                            hardwareType: device.hardwareType, kind: device.kind, device: facts)
            XCTAssertEqual(InterfaceClassifier.classify(link), device.expected, device.name)
            XCTAssertEqual(CostlyNetworks.tetheringDriver(facts), ["eth1", "enx0"].contains(device.name) ? device.driver : nil, device.name)
        }
        XCTAssertEqual(reader.facts(for: "missing0"), DeviceFacts(), "a device without sysfs entries has no facts")
        XCTAssertEqual(reader.facts(for: "../etc"), DeviceFacts(), "names are never paths")
    }
}
