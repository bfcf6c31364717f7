import ReachProtocol
import ReachTargets

/// The captive-portal URIs systemd-networkd (254 and later) learned per link, from DHCPv4
/// option 114, DHCPv6 option 103 or RA option 37 (RFC 8910): the `CaptivePortal` field of
/// each link in `io.systemd.Network.Describe`. reachd sees RAs itself but never DHCP, so
/// asking networkd, when it runs, completes the picture.
enum NetworkdPortals {
    /// Where systemd-networkd serves Varlink.
    static let defaultSocket = "/run/systemd/netif/io.systemd.Network"

    /// The URIs by interface index, from a `Describe` reply's parameters. Pure; a link
    /// without an index or a string URI is skipped, and so is one whose URI
    /// `CaptivePortalAPI.validate` refuses (networkd passes on what the network sent).
    static func captivePortals(inDescribe parameters: JSONObject) -> [Int32: String] {
        var portals: [Int32: String] = [:]
        for link in parameters["Interfaces"]?.arrayValue ?? [] {
            guard let object = link.objectValue, case let .integer(index)? = object["Index"],
                  let uri = object["CaptivePortal"]?.stringValue, !uri.isEmpty, let key = Int32(exactly: index),
                  // From DHCP or an RA, like option 37: only an API URI that may be fetched.
                  case .success = CaptivePortalAPI.validate(apiURI: uri)
            else { continue }
            portals[key] = uri
        }
        return portals
    }

    /// Asks networkd (blocking: call on `NameResolver`'s pool); nil when it cannot be asked.
    static func ask(socket: String) -> [Int32: String]? {
        guard case let .reply(reply) = VarlinkConnection.call("io.systemd.Network.Describe", parameters: [:], socket: socket, timeout: .seconds(2)),
              reply.error == nil
        else { return nil }
        return captivePortals(inDescribe: reply.parameters ?? [:])
    }
}
