/// Builds the `ListInterfaces` view of a snapshot.
package enum InterfaceListing {
    /// Every known link, by index, with its classification and policy applied.
    package static func describe(_ snapshot: NetworkSnapshot, policy: InterfacePolicy = InterfacePolicy(), connectivity: ConnectivityTable = [:]) -> [InterfaceDescription] {
        let hostInternalBridges = InterfaceRoles.hostInternalBridges(in: snapshot)
        return snapshot.links.values.sorted { $0.index < $1.index }.map { link in
            let facts = connectivity[link.index] ?? InterfaceConnectivity()
            let expense = policy.expense(of: link, in: snapshot, networkManager: facts.networkManager, dhcpMetered: facts.dhcpMetered)
            var description = InterfaceDescription(
                index: Int(link.index),
                name: link.name,
                type: policy.type(of: link),
                kind: link.kind,
                operState: link.operState.rawValue,
                up: link.isUp,
                carrier: link.carrier,
                addresses: snapshot.addresses(of: link.index).map { address in
                    InterfaceDescription.Address(
                        address: address.address.description,
                        prefixLength: Int(address.prefixLength),
                        family: address.family,
                        scope: address.scope,
                        tentative: address.flags.contains(.tentative),
                        dadFailed: address.flags.contains(.dadFailed),
                        usable: address.isUsableForInternet
                    )
                },
                isExpensive: expense != nil,
                isConstrained: policy.isConstrained(link),
                ignored: policy.isIgnored(link, hostInternalBridges: hostInternalBridges),
                connectivity: facts,
                expensiveReason: expense
            )
            let gateways = snapshot.gatewayNeighbours.filter { $0.key.interfaceIndex == link.index }
                .sorted { $0.key.address.bytes.lexicographicallyPrecedes($1.key.address.bytes) }
                .map { GatewayNeighbourDescription(address: $0.key.address.description, state: $0.value.state, since: $0.value.since) }
            if !gateways.isEmpty { description.gateways = gateways }
            description.nat64Prefixes = snapshot.nat64Prefixes[link.index]
            if InterfaceRoles.isCLAT(link.index, in: snapshot) { description.role = .clat }
            description.driver = link.device.driver
            return description
        }
    }
}
