import ReachabilityCore

/// The `io.reachd.Reachability` Varlink interface: names and wire types.
public enum ReachabilityInterface {
    /// The interface name.
    public static let name = "io.reachd.Reachability"

    /// Fully qualified method names.
    package enum Method {
        /// `GetStatus() -> (sequence, instance, path)`.
        package static let getStatus = "io.reachd.Reachability.GetStatus"
        /// `Subscribe(requiredInterfaceType?, prohibitedInterfaceTypes?) -> (sequence, instance, path)`, with more.
        package static let subscribe = "io.reachd.Reachability.Subscribe"
        /// `SubscribeSummary() -> (status, connectivity, isExpensive, isConstrained)`, with more.
        package static let subscribeSummary = "io.reachd.Reachability.SubscribeSummary"
        /// `ListInterfaces() -> (interfaces)`.
        package static let listInterfaces = "io.reachd.Reachability.ListInterfaces"
        /// `CheckTarget(host?, address?) -> (target, path)`.
        package static let checkTarget = "io.reachd.Reachability.CheckTarget"
        /// `SubscribeTarget(host?, address?) -> (target, path)`, with more.
        package static let subscribeTarget = "io.reachd.Reachability.SubscribeTarget"
        /// `CheckConnectivity(interface?) -> (interfaces)`: probe now, answer when done.
        package static let checkConnectivity = "io.reachd.Reachability.CheckConnectivity"
        /// `GetMetrics() -> (text)`: the Prometheus exposition.
        package static let getMetrics = "io.reachd.Reachability.GetMetrics"
        /// `GetNetworkNamespace() -> (inode?)`: the network namespace reachd answers for.
        package static let getNetworkNamespace = "io.reachd.Reachability.GetNetworkNamespace"
    }

    /// Fully qualified error names.
    public enum Error {
        /// `ConnectionLimitReached(limit, maximum)`: the connection was refused.
        public static let connectionLimitReached = "io.reachd.Reachability.ConnectionLimitReached"
        /// `LimitReached(limit, maximum)`: a target check or stream over a per-user or total cap.
        public static let limitReached = "io.reachd.Reachability.LimitReached"
        /// `ReloadRefused(reason)`: a reload found the configuration unusable and kept the running one.
        public static let reloadRefused = "io.reachd.Reachability.ReloadRefused"
        /// `ProbingDisabled()`: `CheckConnectivity` with nothing configured to check.
        public static let probingDisabled = "io.reachd.Reachability.ProbingDisabled"
        /// `NoSuchInterface(interface)`: a call named an interface the kernel does not know.
        public static let noSuchInterface = "io.reachd.Reachability.NoSuchInterface"
        /// `NothingToProbe(interface?)`: `CheckConnectivity` found no interface it may probe
        /// (none carries a usable route to the internet), or the one named is not one.
        public static let nothingToProbe = "io.reachd.Reachability.NothingToProbe"
    }
}

/// The IDL of `io.reachd.Reachability`, embedded in the binary.
package enum IDL {
    /// The `.varlink` file's text, verbatim.
    package static let text = String(decoding: PackageResources.io_reachd_Reachability_varlink, as: UTF8.self)
}

/// Reply of `GetStatus`, and of every `Subscribe` reply.
public struct StatusReply: Codable, Sendable, Hashable {
    /// Grows by one per published change of the system-wide path.
    public var sequence: Int
    /// Identifies one run of the daemon; a new value means it restarted.
    public var instance: String
    /// The path (filtered, for a subscription with a filter).
    public var path: Path
    /// `Subscribe` replies only: what changed since this subscriber's previous reply
    /// (empty in the first reply). Absent from `GetStatus` replies.
    public var changes: [PathChange]?

    /// Creates a status reply.
    public init(sequence: Int, instance: String, path: Path, changes: [PathChange]? = nil) {
        self.sequence = sequence
        self.instance = instance
        self.path = path
        self.changes = changes
    }

    /// Decodes a reply; a change this library does not know (a newer reachd's) is left out,
    /// so a new kind of change never breaks a client built before it.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        sequence = try container.decode(Int.self, forKey: .sequence)
        instance = try container.decode(String.self, forKey: .instance)
        path = try container.decode(Path.self, forKey: .path)
        changes = try container.decodeIfPresent([String].self, forKey: .changes)?.compactMap(PathChange.init(rawValue:))
    }
}

/// Reply of `SubscribeSummary`: the few facts of the system-wide path that a desktop's
/// network monitor shows (GLib's GNetworkMonitor: available, connectivity, metered), each
/// as `Path` has it.
package struct SummaryReply: Codable, Sendable, Hashable {
    /// The path's `status`.
    package var status: PathStatus
    /// The path's `connectivity`.
    package var connectivity: Connectivity
    /// The path's `isExpensive`.
    package var isExpensive: Bool
    /// The path's `isConstrained`.
    package var isConstrained: Bool

    /// Creates a summary reply.
    package init(status: PathStatus, connectivity: Connectivity, isExpensive: Bool, isConstrained: Bool) {
        self.status = status
        self.connectivity = connectivity
        self.isExpensive = isExpensive
        self.isConstrained = isConstrained
    }

    /// The summary of `path`.
    package init(_ path: Path) {
        self.init(status: path.status, connectivity: path.connectivity, isExpensive: path.isExpensive, isConstrained: path.isConstrained)
    }
}

/// Reply of `GetNetworkNamespace`.
package struct NetworkNamespaceReply: Codable, Sendable, Hashable {
    /// The inode number of reachd's `/proc/self/ns/net` (what stat(2) of that file says);
    /// absent when reachd could not read it.
    package var inode: UInt64?

    /// Creates the reply.
    package init(inode: UInt64?) {
        self.inode = inode
    }
}

/// Reply of `GetMetrics`.
package struct MetricsReply: Codable, Sendable, Hashable {
    /// The metrics in Prometheus' text exposition format (0.0.4), as `/metrics` serves them.
    package var text: String

    /// Creates the reply.
    package init(text: String) {
        self.text = text
    }
}

/// Reply of `ListInterfaces`.
package struct ListInterfacesReply: Codable, Sendable, Hashable {
    /// Every interface the kernel knows, ignored ones included.
    package var interfaces: [InterfaceDescription]

    /// Creates the reply.
    package init(interfaces: [InterfaceDescription]) {
        self.interfaces = interfaces
    }
}

/// Parameters of `CheckConnectivity`.
package struct ConnectivityCheckParameters: Codable, Sendable, Hashable {
    /// Only this interface; nil: every interface probes run over.
    package var interface: String?

    /// Creates the parameters.
    package init(interface: String?) {
        self.interface = interface
    }
}

/// Parameters of `Subscribe`.
package struct SubscribeParameters: Codable, Sendable, Hashable {
    /// Only this type may carry the path.
    package var requiredInterfaceType: InterfaceType?
    /// These types may not carry the path.
    package var prohibitedInterfaceTypes: [InterfaceType]?

    /// Creates parameters from a filter (unset parts are not sent).
    package init(filter: PathFilter) {
        requiredInterfaceType = filter.requiredInterfaceType
        let prohibited = InterfaceType.allCases.filter(filter.prohibitedInterfaceTypes.contains)
        prohibitedInterfaceTypes = prohibited.isEmpty ? nil : prohibited
    }

    /// Validates loosely typed parameters as the server received them.
    ///
    /// - Throws: `InvalidParameter` naming the first parameter that is unknown, of the
    ///   wrong JSON type, or not an `InterfaceType` name.
    package init(validating parameters: JSONObject) throws(VarlinkError) {
        for key in parameters.keys.sorted() where key != "requiredInterfaceType" && key != "prohibitedInterfaceTypes" {
            throw .invalidParameter(parameter: key)
        }
        switch parameters["requiredInterfaceType"] {
        case nil, .null?:
            requiredInterfaceType = nil
        case let value?:
            guard let type = value.stringValue.flatMap(InterfaceType.init(rawValue:)) else {
                throw .invalidParameter(parameter: "requiredInterfaceType")
            }
            requiredInterfaceType = type
        }
        switch parameters["prohibitedInterfaceTypes"] {
        case nil, .null?:
            prohibitedInterfaceTypes = nil
        case let value?:
            guard let elements = value.arrayValue else { throw .invalidParameter(parameter: "prohibitedInterfaceTypes") }
            var types: [InterfaceType] = []
            for element in elements {
                guard let type = element.stringValue.flatMap(InterfaceType.init(rawValue:)) else {
                    throw .invalidParameter(parameter: "prohibitedInterfaceTypes")
                }
                types.append(type)
            }
            prohibitedInterfaceTypes = types
        }
    }

    /// The filter these parameters describe.
    package var filter: PathFilter {
        PathFilter(requiredInterfaceType: requiredInterfaceType, prohibitedInterfaceTypes: Set(prohibitedInterfaceTypes ?? []))
    }
}

/// A call without parameters.
package struct NoParameters: Codable, Sendable, Hashable {
    /// Creates the empty parameter set.
    package init() {}
}
