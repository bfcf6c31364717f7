extension Path {
    /// A one-line human summary, as used for systemd's `STATUS=` and the daemon log:
    /// `reachable via eth0 (wiredEthernet) gw 10.0.0.1, IPv4+IPv6, DNS` (`…, IPv6, IPv4 via
    /// NAT64 64:ff9b::/96, DNS` on an IPv6-only network with NAT64), then the probes'
    /// verdict once there is one (`, internet full`, `, behind a captive portal (URL)`,
    /// `, internet limited (dataStall)`), or
    /// `not reachable: noCarrier` (`not reachable: gateway 10.0.0.1 unreachable`).
    ///
    /// The interface name and portal URL are the network's text, as they came: the places
    /// that write the summary (the log, `STATUS=`) apply `UntrustedText`'s rule, once.
    public var summary: String {
        switch status {
        case .satisfied:
            var text = "reachable"
            if let name = primaryInterface {
                text += " via \(name)"
                if let type = primaryInterfaceType { text += " (\(type.rawValue))" }
            }
            if !gateways.isEmpty { text += " gw " + gateways.joined(separator: ",") }
            let families = [supportsIPv4 ? "IPv4" : nil, supportsIPv6 ? "IPv6" : nil].compactMap { $0 }
            text += ", " + families.joined(separator: "+")
            if let prefix = ipv4ViaNAT64 { text += ", IPv4 via NAT64 \(prefix)" }
            if ipv4ProvidedBy == .clat { text += ", IPv4 via CLAT" }
            if supportsDNS { text += ", DNS" }
            if isExpensive { text += ", expensive" + (expensiveReason.map { " (\($0.rawValue))" } ?? "") }
            if isConstrained { text += ", constrained" }
            switch connectivity {
            case .unknown: break
            case .portal: text += ", behind a captive portal" + (captivePortal?.userPortalURL.map { " (\($0))" } ?? "")
            default: text += ", internet \(connectivity.rawValue)"
            }
            if let cause = connectivityCause { text += " (\(cause.rawValue))" }
            return text
        case .requiresConnection:
            return "connection required" + (primaryInterface.map { " on \($0)" } ?? "")
        case .unsatisfied where unsatisfiedReason == .gatewayUnreachable && !gateways.isEmpty:
            return "not reachable: gateway \(gateways.joined(separator: ",")) unreachable"
        case .unsatisfied:
            return "not reachable: " + (unsatisfiedReason?.rawValue ?? "unknown")
        }
    }
}
