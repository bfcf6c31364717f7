import ReachProtocol
import ReachabilityCore

/// One change the hooks are told of: reachd's answer and what it is to them.
package struct DispatchEvent: Sendable, Hashable, Coalescible {
    /// What the answer is to the dispatcher (`REACHD_EVENT`).
    package enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The first answer after the dispatcher started: the state as it is.
        case initial
        /// The network changed.
        case change
        /// The connection to reachd broke and came back, and the path differs from the last one seen.
        case reconnected
        /// reachd restarted, and the path differs from the last one seen.
        case restarted
    }

    /// What the answer is.
    package var kind: Kind
    /// reachd's sequence number of the answer.
    package var sequence: Int
    /// The run of reachd that answered.
    package var instance: String
    /// The path.
    package var path: Path
    /// What changed since the event the hooks were last told of (empty for `initial`).
    package var changes: [PathChange]

    /// Creates an event.
    package init(kind: Kind, sequence: Int, instance: String, path: Path, changes: [PathChange]) {
        self.kind = kind
        self.sequence = sequence
        self.instance = instance
        self.path = path
        self.changes = changes
    }

    /// The event for an answer, or nil when the hooks need not hear of it: after a
    /// reconnect or a restart, a path equal to the last one seen is no change.
    ///
    /// - Parameters:
    ///   - reply: reachd's answer.
    ///   - kind: what the subscription says the answer is.
    ///   - lastPath: the path of the previous answer, whether or not it was an event.
    package static func of(_ reply: StatusReply, kind: Kind, lastPath: Path?) -> DispatchEvent? {
        let changes: [PathChange]
        switch kind {
        case .initial:
            changes = []
        case .change:
            changes = reply.changes ?? []
        case .reconnected, .restarted:
            guard let lastPath else { return DispatchEvent(kind: kind, sequence: reply.sequence, instance: reply.instance, path: reply.path, changes: []) }
            guard lastPath != reply.path else { return nil }
            changes = PathChange.between(lastPath, addresses: [], and: reply.path, addresses: [])
        }
        return DispatchEvent(kind: kind, sequence: reply.sequence, instance: reply.instance, path: reply.path, changes: changes)
    }

    /// The newer event, carrying the changes of both; the first event of a run of reachd
    /// (`initial`, `restarted`) stays what it is until the hooks have been told of it.
    package func coalesced(with newer: DispatchEvent) -> DispatchEvent {
        var merged = newer
        let all = Set(changes + newer.changes)
        merged.changes = PathChange.allCases.filter(all.contains)
        if kind == .initial || kind == .restarted { merged.kind = kind }
        return merged
    }
}

/// The environment a hook runs with: the event, and nothing inherited from the dispatcher
/// but a fixed search path.
package enum HookEnvironment {
    /// `PATH` for hooks: the system's directories only.
    package static let searchPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

    /// Longest value passed, in scalars: a portal URL is the longest anyone could send.
    package static let valueLimit = 2048

    /// Every variable, in a fixed order. Every variable is set, empty when it has no value
    /// (a hook under `set -u` can read any of them). Values taken from the network or
    /// interface names go through `UntrustedText` (no control character reaches a hook);
    /// lists are comma-separated, booleans `yes`/`no`, the way reachd's journal fields are.
    package static func variables(for event: DispatchEvent) -> [(name: String, value: String)] {
        let path = event.path
        func yesNo(_ value: Bool) -> String { value ? "yes" : "no" }
        let raw: [(String, String)] = [
            ("REACHD_EVENT", event.kind.rawValue),
            ("REACHD_SEQUENCE", "\(event.sequence)"),
            ("REACHD_INSTANCE", event.instance),
            ("REACHD_STATUS", path.status.rawValue),
            ("REACHD_REASON", path.unsatisfiedReason?.rawValue ?? ""),
            ("REACHD_REACHABILITY", path.reachability.rawValue),
            ("REACHD_PRIMARY", path.primaryInterface ?? ""),
            ("REACHD_PRIMARY_TYPE", path.primaryInterfaceType?.rawValue ?? ""),
            ("REACHD_INTERFACES", path.availableInterfaces.joined(separator: ",")),
            ("REACHD_GATEWAYS", path.gateways.joined(separator: ",")),
            ("REACHD_IPV4", yesNo(path.supportsIPv4)),
            ("REACHD_IPV6", yesNo(path.supportsIPv6)),
            ("REACHD_DNS", yesNo(path.supportsDNS)),
            ("REACHD_EXPENSIVE", yesNo(path.isExpensive)),
            ("REACHD_CONSTRAINED", yesNo(path.isConstrained)),
            ("REACHD_FLAGS", path.flags.names.joined(separator: ",")),
            ("REACHD_CONNECTIVITY", path.connectivity.rawValue),
            ("REACHD_CONNECTIVITY_CAUSE", path.connectivityCause?.rawValue ?? ""),
            ("REACHD_CAPTIVE_PORTAL", path.captivePortal?.userPortalURL ?? ""),
            ("REACHD_LINK_QUALITY", path.linkQuality?.rawValue ?? ""),
            ("REACHD_CHANGES", event.changes.map(\.rawValue).joined(separator: ",")),
        ]
        return raw.map { ($0.0, UntrustedText.escaped($0.1, limit: valueLimit)) } + [("PATH", searchPath)]
    }

    /// `NAME=value` strings, as `execve(2)` takes them.
    package static func entries(for event: DispatchEvent) -> [String] {
        variables(for: event).map { "\($0.name)=\($0.value)" }
    }
}
