/// One method call reachd-nm received, as far as the decision needs it.
package struct NetworkManagerCall: Sendable, Hashable {
    /// The object path called.
    package var path: String
    /// The interface named (nil when the caller named none).
    package var interface: String?
    /// The method.
    package var member: String
    /// The leading string arguments (`Properties.Get`'s interface and name, …).
    package var strings: [String]

    /// A call of `member` on `path`.
    package init(path: String, interface: String?, member: String, strings: [String] = []) {
        self.path = path
        self.interface = interface
        self.member = member
        self.strings = strings
    }
}

/// What to do with a call: answer it, refuse it, or answer once reachd has checked.
package enum NetworkManagerReply: Sendable, Hashable {
    /// Reply with these values.
    case values([BusReplyValue])
    /// Reply with this D-Bus error.
    case error(name: String, message: String)
    /// Ask reachd to check connectivity, then reply with the manager's `Connectivity` (`u`).
    case checkConnectivity
    /// Not reachd-nm's to answer: sd-bus answers (`org.freedesktop.DBus.Peer`).
    case notHandled
}

/// The decision for each call reachd-nm receives: reads answered from the object tree,
/// every method that would change something refused at once with NetworkManager's error.
package enum NetworkManagerCalls {
    static let properties = "org.freedesktop.DBus.Properties"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let introspectable = "org.freedesktop.DBus.Introspectable"
    static let peer = "org.freedesktop.DBus.Peer"

    /// The refusal of everything that would change the network.
    package static let readOnly = NetworkManagerReply.error(
        name: "org.freedesktop.NetworkManager.PermissionDenied",
        message: "reachd-nm answers NetworkManager's API read-only: nothing can be changed through it"
    )

    /// The permissions `GetPermissions` lists, every one "no".
    static let permissions = [
        "enable-disable-network", "sleep-wake", "enable-disable-wifi", "enable-disable-wwan",
        "enable-disable-wimax", "network-control", "wifi.share.protected", "wifi.share.open",
        "settings.modify.system", "settings.modify.own", "settings.modify.hostname",
        "settings.modify.global-dns", "reload", "checkpoint-rollback", "enable-disable-statistics",
        "enable-disable-connectivity-check", "wifi.scan",
    ].map { "org.freedesktop.NetworkManager.\($0)" }

    /// The reply to `call` from the tree `objects`.
    package static func reply(to call: NetworkManagerCall, objects: NetworkManagerObjects) -> NetworkManagerReply {
        let tree = objects.objects
        switch call.interface {
        case peer?:
            return .notHandled
        case introspectable?:
            return .values([.string(Introspection.document(path: call.path, tree: tree))])
        case objectManager? where call.member == "GetManagedObjects":
            guard call.path == NetworkManagerObjects.objectManagerPath else { return unknownObject(call.path) }
            return .values([.objects(tree)])
        case properties?:
            return propertiesReply(call, tree: tree)
        default:
            break
        }
        guard let interfaces = tree[call.path] else {
            return call.path == NetworkManagerObjects.objectManagerPath || call.path == "/" ? readOnly : unknownObject(call.path)
        }
        if let interface = call.interface, interfaces[interface] == nil { return readOnly }
        guard call.path == NetworkManagerObjects.managerPath else { return readOnly }
        let devices = tree[call.path]?[NetworkManagerObjects.managerInterface]?["Devices"] ?? .objectPaths([])
        switch call.member {
        case "state": return .values([tree[call.path]?[NetworkManagerObjects.managerInterface]?["State"] ?? .uint32(0)])
        case "CheckConnectivity": return .checkConnectivity
        case "GetDevices", "GetAllDevices": return .values([devices])
        case "GetPermissions": return .values([.stringMap(Dictionary(uniqueKeysWithValues: permissions.map { ($0, "no") }))])
        case "GetDeviceByIpIface":
            let path = tree.first { $0.value[NetworkManagerObjects.deviceInterface]?["IpInterface"] == .string(call.strings.first ?? "") }?.key
            guard let path else {
                return .error(name: "org.freedesktop.NetworkManager.UnknownDevice", message: "No device found for the requested iface.")
            }
            return .values([.objectPath(path)])
        case "GetLogging":
            return .error(name: "org.freedesktop.NetworkManager.Failed", message: "reachd-nm keeps no NetworkManager log settings")
        default:
            return readOnly
        }
    }

    private static func propertiesReply(
        _ call: NetworkManagerCall, tree: [String: [String: [String: BusReplyValue]]]
    ) -> NetworkManagerReply {
        guard let interfaces = tree[call.path] else { return unknownObject(call.path) }
        let interface = call.strings.first ?? ""
        switch call.member {
        case "GetAll":
            // An interface the object lacks has no properties, as sd-bus and GDBus answer.
            return .values([.properties(interfaces[interface] ?? [:])])
        case "Get":
            guard call.strings.count >= 2 else {
                return .error(name: "org.freedesktop.DBus.Error.InvalidArgs", message: "Get takes an interface and a property name")
            }
            guard let value = interfaces[interface]?[call.strings[1]] else {
                return .error(name: "org.freedesktop.DBus.Error.UnknownProperty", message: "No such property '\(call.strings[1])'")
            }
            return .values([.variant(value)])
        case "Set":
            return readOnly
        default:
            return .error(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "No such method '\(call.member)'")
        }
    }

    private static func unknownObject(_ path: String) -> NetworkManagerReply {
        .error(name: "org.freedesktop.DBus.Error.UnknownObject", message: "No such object path '\(path)'")
    }
}

/// `Introspect`'s XML: the object's interfaces with their properties, and its child nodes.
enum Introspection {
    static let doctype = #"<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">"#

    static func document(path: String, tree: [String: [String: [String: BusReplyValue]]]) -> String {
        var lines = [doctype, "<node>"]
        for (interface, properties) in (tree[path] ?? [:]).sorted(by: { $0.key < $1.key }) {
            lines.append(#" <interface name="\#(interface)">"#)
            for (name, value) in properties.sorted(by: { $0.key < $1.key }) {
                lines.append(#"  <property name="\#(name)" type="\#(value.signature)" access="read"/>"#)
            }
            lines.append(" </interface>")
        }
        let prefix = path == "/" ? "/" : path + "/"
        let children = Set((tree.keys + [NetworkManagerObjects.objectManagerPath]).compactMap { child -> String? in
            guard child.hasPrefix(prefix), child.count > prefix.count else { return nil }
            return child.dropFirst(prefix.count).split(separator: "/").first.map(String.init)
        })
        lines += children.sorted().map { #" <node name="\#($0)"/>"# }
        lines.append("</node>")
        return lines.joined(separator: "\n")
    }
}
