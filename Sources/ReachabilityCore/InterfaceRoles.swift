/// What a link is for, judged from what the kernel says about it and the links around it
/// rather than from its name. Pure; `PathDerivation`, `TargetDerivation`, `ProbeSchedule`
/// and `InterfaceListing` ask it.
package enum InterfaceRoles {
    /// Kinds that tunnel packets to a far end (overlays, IP tunnels, VPNs): their type is
    /// `other` even when they carry ethernet frames (vxlan, geneve, gretap, tap).
    package static let tunnelKinds: Set<String> = [
        "vxlan", "geneve", "gretap", "ip6gretap", "erspan", "ip6erspan", "gre", "ip6gre", "ipip", "sit",
        "ip6tnl", "vti", "vti6", "xfrm", "wireguard", "tun", "bareudp",
    ]

    /// Bridge ports that lead to a container, a VM or a userspace program on this host:
    /// veth pairs, tap devices (kind `tun`), Xen's `vif` backends.
    static func isHostInternalPort(_ link: Link) -> Bool {
        link.kind == "veth" || link.kind == "tun" || link.device.driver == "vif"
    }

    /// Bridges that only connect this host to its own containers or VMs (docker0, podman0,
    /// lxdbr0, virbr0 …): no default route leaves through them and every port is a veth,
    /// tap or vif (or there is no port yet). Such a bridge gains and loses carrier as guests
    /// come and go; it never carries this host's traffic out, so it is not part of the path.
    /// A bridge with a physical port, or one a default route uses, is a LAN bridge and stays.
    package static func hostInternalBridges(in snapshot: NetworkSnapshot) -> Set<Int32> {
        var bridges = Set(snapshot.links.values.lazy.filter { $0.kind == "bridge" }.map(\.index))
        guard !bridges.isEmpty else { return [] }
        for link in snapshot.links.values {
            if let master = link.masterIndex, bridges.contains(master), !isHostInternalPort(link) {
                bridges.remove(master)
            }
        }
        for route in snapshot.defaultRoutes where route.type == .unicast {
            for hop in route.nextHops { bridges.remove(hop.interfaceIndex) }
        }
        return bridges
    }

    /// The device `link` runs over is down or has no carrier. The kernel passes a lower
    /// device's carrier up to vlan and macvlan links, but an overlay (vxlan, geneve, an IP
    /// tunnel bound to a device) keeps its own carrier on when its underlay loses the cable.
    package static func underlayIsDown(_ link: Link, in snapshot: NetworkSnapshot) -> Bool {
        guard let lowerIndex = link.lowerIndex, let lower = snapshot.links[lowerIndex] else { return false }
        return !lower.isUp || !lower.carrier
            || lower.operState == .down || lower.operState == .lowerLayerDown || lower.operState == .notPresent
    }

    /// Whether the link provides IPv4 by translation (464XLAT, RFC 6877): a CLAT's device
    /// (clatd's or Android's tun) holds only addresses of 192.0.0.0/29, the block RFC 7335
    /// sets aside for it, and an IPv4 default route leaves through it. Its packets leave as
    /// IPv6 through the uplink, so it is never the primary interface while that one is usable.
    package static func isCLAT(_ index: Int32, in snapshot: NetworkSnapshot) -> Bool {
        let carriesIPv4Default = snapshot.defaultRoutes.contains { route in
            route.family == .ipv4 && route.type == .unicast && route.nextHops.contains { $0.interfaceIndex == index }
        }
        guard carriesIPv4Default else { return false }
        let ipv4 = snapshot.addresses.lazy.filter { $0.interfaceIndex == index && $0.family == .ipv4 }
        return !ipv4.isEmpty && ipv4.allSatisfy { isCLATAddress($0.address) }
    }

    /// 192.0.0.0/29: the IPv4 service continuity prefix (RFC 7335), a CLAT's own addresses.
    package static func isCLATAddress(_ address: IPAddress) -> Bool {
        guard case let .v4(a, b, c, d) = address else { return false }
        return a == 192 && b == 0 && c == 0 && d < 8
    }

    /// A point-to-point link (VPN tunnels, wireguard, ppp, IP-in-IP): what is reached over
    /// it without a gateway is at the tunnel's far end, not on a link this host is attached
    /// to, so it is never `isDirect`.
    package static func isPointToPoint(_ link: Link) -> Bool {
        link.flags.contains(.pointToPoint) || link.hardwareType == ARPHardwareType.none
            || link.hardwareType == ARPHardwareType.ppp || link.kind == "ppp"
    }
}
