import ReachabilityCore
import XCTest

@testable import ReachSystemd

/// What reachd makes of NetworkManager's D-Bus properties, and which changes it reads again for.
final class NetworkManagerReadingTests: XCTestCase {
    func testDevices() {
        let cases: [(String, [String: BusValue], String?, NetworkManagerDevice?)] = [
            ("metered ethernet behind a portal",
             ["Interface": .string("eth0"), "IpInterface": .string("eth0"), "Metered": .uint32(1), "Ip4Connectivity": .uint32(2)],
             "eth0", NetworkManagerDevice(ipv4: .portal, metered: true)),
            ("a modem: IpInterface carries IP", ["Interface": .string("ttyUSB0"), "IpInterface": .string("ppp0"), "Metered": .uint32(3)],
             "ppp0", NetworkManagerDevice(metered: true)),
            ("no IpInterface (not activated): Interface", ["Interface": .string("wlan0"), "IpInterface": .string(""), "Ip6Connectivity": .uint32(4)],
             "wlan0", NetworkManagerDevice(ipv6: .full)),
            ("the user said unmetered", ["Interface": .string("eth1"), "Metered": .uint32(2), "Ip4Connectivity": .uint32(0)],
             "eth1", NetworkManagerDevice(metered: false)),
            ("nothing said: left out", ["Interface": .string("eth1"), "Metered": .uint32(4), "Ip4Connectivity": .uint32(0)], nil, nil),
            ("no name", ["Metered": .uint32(1)], nil, nil),
            ("a name longer than the kernel allows", ["Interface": .string(String(repeating: "x", count: 16)), "Metered": .uint32(1)], nil, nil),
            ("values of another kind read as unknown", ["Interface": .string("eth0"), "Metered": .string("yes"), "Ip4Connectivity": .bool(true)],
             nil, nil),
            ("unknown enum values", ["Interface": .string("eth0"), "Metered": .uint32(99), "Ip4Connectivity": .uint32(99)], nil, nil),
        ]
        for (name, properties, interface, facts) in cases {
            let device = NetworkManagerReading.device(properties)
            XCTAssertEqual(device?.name, interface, name)
            XCTAssertEqual(device?.facts, facts, name)
        }
    }

    func testDevicePathsAreBounded() {
        let many = (0..<500).map { "/org/freedesktop/NetworkManager/Devices/\($0)" }
        XCTAssertEqual(NetworkManagerReading.devicePaths(["Devices": .objectPaths(many)]).count, NetworkManagerReading.deviceLimit)
        XCTAssertEqual(NetworkManagerReading.devicePaths(["Devices": .objectPaths(["/a"])]), ["/a"])
        XCTAssertEqual(NetworkManagerReading.devicePaths(["Devices": .string("/a")]), [])
        XCTAssertEqual(NetworkManagerReading.devicePaths([:]), [])
    }

    func testWhichChangesAreReadAgain() {
        let device = NetworkManagerReading.deviceInterface, root = NetworkManagerReading.rootInterface
        let cases: [(String, String, [String], Bool)] = [
            ("a device's metering", device, ["Metered"], true),
            ("a device's IPv4 connectivity", device, ["Ip4Connectivity"], true),
            ("a device's state among others", device, ["Mtu", "State"], true),
            ("a rename", device, ["Interface"], true),
            ("devices added or removed", root, ["Devices"], true),
            ("statistics only", device, ["Mtu", "HwAddress"], false),
            ("nothing changed", device, [], false),
            ("another interface's properties", "org.freedesktop.NetworkManager.AccessPoint", ["Strength"], false),
            ("a relevant name on another interface", "org.freedesktop.NetworkManager.Device.Wireless", ["State"], false),
        ]
        for (name, interface, changed, expected) in cases {
            XCTAssertEqual(NetworkManagerReading.calls(forReading: interface, changed: changed), expected, name)
        }
    }

    /// The match rules name NetworkManager as sender, so no other service's signals wake reachd.
    func testMatchRulesNameTheSender() {
        XCTAssertEqual(NetworkManagerReading.matchRules.count, 3)
        for rule in NetworkManagerReading.matchRules {
            XCTAssertTrue(rule.contains("type='signal'"), rule)
            XCTAssertTrue(rule.contains("sender='org.freedesktop.DBus'") || rule.contains("sender='org.freedesktop.NetworkManager'"), rule)
        }
    }

    /// Where reachd looks for the bus socket when the bus refuses it (to say so only then).
    func testSystemBusSocket() {
        XCTAssertEqual(NetworkManagerWatch.systemBusSocket(address: nil), "/run/dbus/system_bus_socket")
        XCTAssertEqual(NetworkManagerWatch.systemBusSocket(address: "unix:path=/tmp/b/system_bus_socket"), "/tmp/b/system_bus_socket")
        XCTAssertEqual(NetworkManagerWatch.systemBusSocket(address: "unix:path=/tmp/s,guid=0f"), "/tmp/s")
        XCTAssertEqual(NetworkManagerWatch.systemBusSocket(address: "tcp:host=h"), "/run/dbus/system_bus_socket")
    }
}
