/// NWPathMonitor's interface-type constraints: the path is computed over the allowed
/// interfaces only, so changes on the others do not concern the subscriber.
public struct PathFilter: Sendable, Hashable {
    /// Only interfaces of this type may carry the path (`NWPathMonitor(requiredInterfaceType:)`).
    public var requiredInterfaceType: InterfaceType?
    /// Interfaces of these types may not carry the path (`NWPathMonitor(prohibitedInterfaceTypes:)`).
    public var prohibitedInterfaceTypes: Set<InterfaceType>

    /// No constraint: the system-wide path.
    public static let none = PathFilter()

    /// Creates a filter.
    public init(requiredInterfaceType: InterfaceType? = nil, prohibitedInterfaceTypes: Set<InterfaceType> = []) {
        self.requiredInterfaceType = requiredInterfaceType
        self.prohibitedInterfaceTypes = prohibitedInterfaceTypes
    }

    /// Whether an interface of this type may carry the path.
    public func allows(_ type: InterfaceType) -> Bool {
        if let required = requiredInterfaceType, required != type { return false }
        return !prohibitedInterfaceTypes.contains(type)
    }

    /// True when the filter lets every type through.
    public var isUnconstrained: Bool { requiredInterfaceType == nil && prohibitedInterfaceTypes.isEmpty }
}
