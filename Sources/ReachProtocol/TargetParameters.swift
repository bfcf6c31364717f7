import ReachabilityCore

/// Parameters of `CheckTarget` and `SubscribeTarget`: exactly one of `host` and `address`.
package struct TargetParameters: Codable, Sendable, Hashable {
    /// A host name (or an address literal, taken as the address).
    package var host: String?
    /// An IPv4 or IPv6 address.
    package var address: String?

    /// Parameters naming `target`.
    package init(_ target: Target) {
        switch target {
        case let .host(name): host = name
        case let .address(address): self.address = address.description
        case .scopedAddress: address = target.description
        }
    }

    /// Validates loosely typed parameters as the server received them.
    ///
    /// - Throws: `InvalidParameter` naming an unknown parameter, one of the wrong type, a
    ///   malformed name or address, an unspecified address (`0.0.0.0`, `::`), or `host`
    ///   when neither or both are given.
    package static func target(validating parameters: JSONObject) throws(VarlinkError) -> Target {
        for key in parameters.keys.sorted() where key != "host" && key != "address" {
            throw .invalidParameter(parameter: key)
        }
        func string(_ key: String) throws(VarlinkError) -> String? {
            switch parameters[key] {
            case nil, .null?: return nil
            case let value?:
                guard let text = value.stringValue else { throw .invalidParameter(parameter: key) }
                return text
            }
        }
        switch (try string("host"), try string("address")) {
        case let (host?, nil):
            guard case let .success(target) = Target.parse(host: host) else { throw .invalidParameter(parameter: "host") }
            return target
        case let (nil, address?):
            guard case let .success(target) = Target.parse(address: address) else { throw .invalidParameter(parameter: "address") }
            return target
        default:
            throw .invalidParameter(parameter: "host")
        }
    }
}

/// Reply of `CheckTarget`, and of every `SubscribeTarget` reply.
public struct TargetReply: Codable, Sendable, Hashable {
    /// The target as asked (a name lowercased, an address in canonical form, a scoped one
    /// with its interface).
    public var target: String
    /// The answer.
    public var path: TargetPath

    /// Creates a reply.
    public init(target: String, path: TargetPath) {
        self.target = target
        self.path = path
    }
}
