import ReachNetworkManager
import ReachabilityCore
import XCTest

/// The object tree and the answer to each call: reads from the tree, changes refused at once.
final class NetworkManagerCallsTests: XCTestCase {
    private let manager = NetworkManagerObjects.managerPath
    private let connected = NetworkManagerAnswer(
        state: .connectedGlobal, connectivity: .full, metered: .guessYes, connectivityCheckAvailable: true,
        primary: .init(interface: "wlan0", deviceType: .wifi, connectionType: "802-11-wireless", activated: true)
    )

    private func objects(_ answer: NetworkManagerAnswer, serial: Int = 3) -> NetworkManagerObjects {
        NetworkManagerObjects(answer: answer, serial: serial, version: "1.0.0")
    }

    func testTheTreeHasTheManagerAndThePrimarysObjects() {
        let tree = objects(connected).objects
        XCTAssertEqual(Set(tree.keys), [
            manager, NetworkManagerObjects.settingsPath, "\(manager)/Devices/3", "\(manager)/ActiveConnection/3",
        ])
        let properties = tree[manager]?[NetworkManagerObjects.managerInterface]
        XCTAssertEqual(properties?["State"], .uint32(70))
        XCTAssertEqual(properties?["Metered"], .uint32(3))
        XCTAssertEqual(properties?["PrimaryConnection"], .objectPath("\(manager)/ActiveConnection/3"))
        XCTAssertEqual(properties?["PrimaryConnectionType"], .string("802-11-wireless"))
        XCTAssertEqual(properties?["Devices"], .objectPaths(["\(manager)/Devices/3"]))
        XCTAssertEqual(tree["\(manager)/Devices/3"]?["org.freedesktop.NetworkManager.Device"]?["Interface"], .string("wlan0"))
        XCTAssertEqual(tree["\(manager)/Devices/3"]?["org.freedesktop.NetworkManager.Device"]?["DeviceType"], .uint32(2))

        let offline = objects(.unknown).objects
        XCTAssertEqual(Set(offline.keys), [manager, NetworkManagerObjects.settingsPath])
        XCTAssertEqual(offline[manager]?[NetworkManagerObjects.managerInterface]?["PrimaryConnection"], .objectPath("/"))
        XCTAssertEqual(offline[manager]?[NetworkManagerObjects.managerInterface]?["State"], .uint32(0))
    }

    func testChangesNameOnlyWhatChanged() {
        var portal = connected
        portal.state = .connectedSite
        portal.connectivity = .portal
        let changes = objects(portal).changes(since: objects(connected))
        XCTAssertEqual(changes[manager]?[NetworkManagerObjects.managerInterface], ["State": .uint32(60), "Connectivity": .uint32(2)])
        XCTAssertEqual(changes["\(manager)/Devices/3"]?["org.freedesktop.NetworkManager.Device"],
                       ["Ip4Connectivity": .uint32(2), "Ip6Connectivity": .uint32(2)])
        XCTAssertEqual(changes.count, 2)
        XCTAssertTrue(objects(connected).changes(since: objects(connected)).isEmpty)
    }

    func testANewPrimaryGetsNewPaths() {
        let first = objects(connected, serial: 3)
        XCTAssertEqual(first.replaced(by: connected).serial, 3, "the same answer keeps its paths")
        var portal = connected
        portal.connectivity = .portal
        XCTAssertEqual(first.replaced(by: portal).serial, 3, "the same primary keeps its paths")
        var wired = connected
        wired.primary?.interface = "eth0"
        XCTAssertEqual(first.replaced(by: wired).serial, 4)
        XCTAssertEqual(first.replaced(by: .unknown).serial, 3, "no primary: nothing numbered")
        XCTAssertEqual(first.replaced(by: .unknown).replaced(by: connected).serial, 4, "back after none: new paths")
    }

    func testReplies() {
        let tree = objects(connected)
        let device = "\(manager)/Devices/3"
        let cases: [(NetworkManagerCall, NetworkManagerReply)] = [
            (.init(path: manager, interface: "org.freedesktop.DBus.Properties", member: "Get",
                   strings: ["org.freedesktop.NetworkManager", "Metered"]), .values([.variant(.uint32(3))])),
            (.init(path: manager, interface: "org.freedesktop.DBus.Properties", member: "Get",
                   strings: ["org.freedesktop.NetworkManager", "Nope"]),
             .error(name: "org.freedesktop.DBus.Error.UnknownProperty", message: "No such property 'Nope'")),
            (.init(path: manager, interface: "org.freedesktop.DBus.Properties", member: "Get", strings: ["x"]),
             .error(name: "org.freedesktop.DBus.Error.InvalidArgs", message: "Get takes an interface and a property name")),
            (.init(path: manager, interface: "org.freedesktop.DBus.Properties", member: "GetAll", strings: ["org.example.None"]),
             .values([.properties([:])])),
            (.init(path: manager, interface: "org.freedesktop.DBus.Properties", member: "Set",
                   strings: ["org.freedesktop.NetworkManager", "WirelessEnabled"]), NetworkManagerCalls.readOnly),
            (.init(path: manager, interface: "org.freedesktop.NetworkManager", member: "state"), .values([.uint32(70)])),
            (.init(path: manager, interface: nil, member: "state"), .values([.uint32(70)])),
            (.init(path: manager, interface: "org.freedesktop.NetworkManager", member: "CheckConnectivity"), .checkConnectivity),
            (.init(path: manager, interface: "org.freedesktop.NetworkManager", member: "GetDevices"), .values([.objectPaths([device])])),
            (.init(path: manager, interface: "org.freedesktop.NetworkManager", member: "GetDeviceByIpIface", strings: ["wlan0"]),
             .values([.objectPath(device)])),
            (.init(path: manager, interface: "org.freedesktop.NetworkManager", member: "GetDeviceByIpIface", strings: ["eth9"]),
             .error(name: "org.freedesktop.NetworkManager.UnknownDevice", message: "No device found for the requested iface.")),
            // Everything that would change the network fails at once.
            (.init(path: manager, interface: "org.freedesktop.NetworkManager", member: "Enable"), NetworkManagerCalls.readOnly),
            (.init(path: manager, interface: "org.freedesktop.NetworkManager", member: "ActivateConnection"), NetworkManagerCalls.readOnly),
            (.init(path: manager, interface: "org.freedesktop.NetworkManager", member: "Sleep"), NetworkManagerCalls.readOnly),
            (.init(path: NetworkManagerObjects.settingsPath, interface: "org.freedesktop.NetworkManager.Settings", member: "AddConnection"),
             NetworkManagerCalls.readOnly),
            (.init(path: device, interface: "org.freedesktop.NetworkManager.Device", member: "Disconnect"), NetworkManagerCalls.readOnly),
            (.init(path: "/org/freedesktop/NetworkManager/Devices/99", interface: "org.freedesktop.NetworkManager.Device", member: "Disconnect"),
             .error(name: "org.freedesktop.DBus.Error.UnknownObject", message: "No such object path '/org/freedesktop/NetworkManager/Devices/99'")),
            (.init(path: manager, interface: "org.freedesktop.DBus.Peer", member: "Ping"), .notHandled),
            (.init(path: manager, interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects"),
             .error(name: "org.freedesktop.DBus.Error.UnknownObject", message: "No such object path '\(manager)'")),
            (.init(path: "/org/freedesktop", interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects"),
             .values([.objects(tree.objects)])),
        ]
        for (call, expected) in cases {
            XCTAssertEqual(NetworkManagerCalls.reply(to: call, objects: tree), expected, "\(call.path) \(call.interface ?? "-").\(call.member)")
        }
    }

    func testPermissionsAreAllNo() throws {
        let reply = NetworkManagerCalls.reply(
            to: .init(path: manager, interface: "org.freedesktop.NetworkManager", member: "GetPermissions"), objects: objects(connected))
        guard case .values(let values) = reply, case .stringMap(let permissions)? = values.first else { return XCTFail("\(reply)") }
        XCTAssertEqual(permissions.count, 17)
        XCTAssertEqual(Set(permissions.values), ["no"])
        XCTAssertEqual(permissions["org.freedesktop.NetworkManager.network-control"], "no")
    }

    func testIntrospectionListsPropertiesAndChildren() throws {
        let reply = NetworkManagerCalls.reply(
            to: .init(path: manager, interface: "org.freedesktop.DBus.Introspectable", member: "Introspect"), objects: objects(connected))
        guard case .values(let values) = reply, case .string(let xml)? = values.first else { return XCTFail("\(reply)") }
        XCTAssertTrue(xml.contains(#"<interface name="org.freedesktop.NetworkManager">"#))
        XCTAssertTrue(xml.contains(#"<property name="Metered" type="u" access="read"/>"#))
        XCTAssertTrue(xml.contains(#"<property name="Devices" type="ao" access="read"/>"#))
        XCTAssertTrue(xml.contains(#"<node name="Devices"/>"#))
        XCTAssertTrue(xml.contains(#"<node name="Settings"/>"#))
        let root = NetworkManagerCalls.reply(
            to: .init(path: "/org", interface: "org.freedesktop.DBus.Introspectable", member: "Introspect"), objects: objects(connected))
        guard case .values(let rootValues) = root, case .string(let rootXML)? = rootValues.first else { return XCTFail("\(root)") }
        XCTAssertTrue(rootXML.contains(#"<node name="freedesktop"/>"#), rootXML)
    }

    func testTheUUIDStaysWithTheInterface() throws {
        let uuid = { (name: String) -> BusReplyValue? in
            var answer = self.connected
            answer.primary?.interface = name
            return self.objects(answer).objects["\(self.manager)/ActiveConnection/3"]?["org.freedesktop.NetworkManager.Connection.Active"]?["Uuid"]
        }
        XCTAssertEqual(uuid("wlan0"), uuid("wlan0"))
        XCTAssertNotEqual(uuid("wlan0"), uuid("eth0"))
        guard case .string(let text)? = uuid("wlan0") else { return XCTFail() }
        XCTAssertEqual(text.split(separator: "-").map(\.count), [8, 4, 4, 4, 12])
    }
}
