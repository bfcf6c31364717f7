/// A Varlink error reply: the standard `org.varlink.service` errors, and any other by name.
public enum VarlinkError: Error, Sendable, Hashable {
    /// The interface exists but has no such method.
    case methodNotFound(method: String)
    /// The service does not implement this interface.
    case interfaceNotFound(interface: String)
    /// A parameter is missing, unknown, or has the wrong type or value.
    case invalidParameter(parameter: String)
    /// The method only streams: call it with `more: true`.
    case expectedMore
    /// The method is declared but not implemented.
    case methodNotImplemented(method: String)
    /// The service denied the call.
    case permissionDenied
    /// Any other error, as received.
    case other(name: String, parameters: JSONObject)

    /// The `org.varlink.service` error names.
    public enum Name {
        /// `org.varlink.service.MethodNotFound`.
        public static let methodNotFound = "org.varlink.service.MethodNotFound"
        /// `org.varlink.service.InterfaceNotFound`.
        public static let interfaceNotFound = "org.varlink.service.InterfaceNotFound"
        /// `org.varlink.service.InvalidParameter`.
        public static let invalidParameter = "org.varlink.service.InvalidParameter"
        /// `org.varlink.service.ExpectedMore`.
        public static let expectedMore = "org.varlink.service.ExpectedMore"
        /// `org.varlink.service.MethodNotImplemented`.
        public static let methodNotImplemented = "org.varlink.service.MethodNotImplemented"
        /// `org.varlink.service.PermissionDenied`.
        public static let permissionDenied = "org.varlink.service.PermissionDenied"
    }

    /// Recognises the standard errors by name and parameters; anything else is `.other`.
    public init(name: String, parameters: JSONObject) {
        func string(_ key: String) -> String? { parameters[key]?.stringValue }
        switch name {
        case Name.methodNotFound where string("method") != nil: self = .methodNotFound(method: string("method")!)
        case Name.interfaceNotFound where string("interface") != nil: self = .interfaceNotFound(interface: string("interface")!)
        case Name.invalidParameter where string("parameter") != nil: self = .invalidParameter(parameter: string("parameter")!)
        case Name.expectedMore: self = .expectedMore
        case Name.methodNotImplemented where string("method") != nil: self = .methodNotImplemented(method: string("method")!)
        case Name.permissionDenied: self = .permissionDenied
        default: self = .other(name: name, parameters: parameters)
        }
    }

    /// The fully qualified error name sent on the wire.
    public var name: String {
        switch self {
        case .methodNotFound: return Name.methodNotFound
        case .interfaceNotFound: return Name.interfaceNotFound
        case .invalidParameter: return Name.invalidParameter
        case .expectedMore: return Name.expectedMore
        case .methodNotImplemented: return Name.methodNotImplemented
        case .permissionDenied: return Name.permissionDenied
        case let .other(name, _): return name
        }
    }

    /// The error's parameters as sent on the wire.
    public var parameters: JSONObject {
        switch self {
        case let .methodNotFound(method), let .methodNotImplemented(method): return ["method": .string(method)]
        case let .interfaceNotFound(interface): return ["interface": .string(interface)]
        case let .invalidParameter(parameter): return ["parameter": .string(parameter)]
        case .expectedMore, .permissionDenied: return [:]
        case let .other(_, parameters): return parameters
        }
    }
}

extension VarlinkError: CustomStringConvertible {
    /// The name followed by the parameters, e.g. `org.varlink.service.InvalidParameter {"parameter":"x"}`.
    public var description: String {
        parameters.isEmpty ? name : "\(name) \(JSONValue.object(parameters))"
    }
}
