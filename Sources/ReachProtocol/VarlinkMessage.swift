/// A Varlink call: `{"method": ..., "parameters": {...}, "more": true, ...}`.
///
/// Generic over its parameters so a client can send typed ones; the server decodes
/// `VarlinkCall<JSONObject>` first and interprets the parameters once it knows the method.
public struct VarlinkCall<Parameters: Sendable>: Sendable {
    /// Fully qualified method name, e.g. `io.reachd.Reachability.GetStatus`.
    public var method: String
    /// Input parameters; absent means none.
    public var parameters: Parameters?
    /// Asks for a stream of replies (each with `continues: true` but the last).
    public var more: Bool?
    /// Asks for no reply at all.
    public var oneway: Bool?
    /// Asks to take over the connection after the reply (not supported by reachd).
    public var upgrade: Bool?

    /// Creates a call; flags left `false` are not sent.
    public init(method: String, parameters: Parameters? = nil, more: Bool = false, oneway: Bool = false, upgrade: Bool = false) {
        self.method = method
        self.parameters = parameters
        self.more = more ? true : nil
        self.oneway = oneway ? true : nil
        self.upgrade = upgrade ? true : nil
    }

    /// Whether the caller asked for a stream.
    public var wantsMore: Bool { more ?? false }
    /// Whether the caller asked for no reply.
    public var isOneway: Bool { oneway ?? false }
    /// Whether the caller asked to upgrade the connection.
    public var wantsUpgrade: Bool { upgrade ?? false }
}

/// A call whose parameters have not been interpreted yet.
public typealias AnyVarlinkCall = VarlinkCall<JSONObject>

/// A Varlink reply: `{"parameters": {...}, "continues": true, "error": "name"}`.
public struct VarlinkReply<Parameters: Sendable>: Sendable {
    /// Output parameters, or the error's parameters.
    public var parameters: Parameters?
    /// More replies follow (only in answer to `more: true`).
    public var continues: Bool?
    /// Fully qualified error name; absent on success.
    public var error: String?

    /// Creates a reply; `continues: false` is not sent.
    public init(parameters: Parameters?, continues: Bool = false, error: String? = nil) {
        self.parameters = parameters
        self.continues = continues ? true : nil
        self.error = error
    }

    /// Whether more replies follow.
    public var isContinuing: Bool { continues ?? false }
}

/// A reply whose parameters have not been interpreted yet.
public typealias AnyVarlinkReply = VarlinkReply<JSONObject>

extension VarlinkReply where Parameters == JSONObject {
    /// The error reply for `error`.
    public init(error: VarlinkError) {
        self.init(parameters: error.parameters, error: error.name)
    }

    /// The error this reply carries, if it is an error reply.
    public var varlinkError: VarlinkError? {
        error.map { VarlinkError(name: $0, parameters: parameters ?? [:]) }
    }
}

extension VarlinkCall: Encodable where Parameters: Encodable {}
extension VarlinkCall: Decodable where Parameters: Decodable {}
extension VarlinkReply: Encodable where Parameters: Encodable {}
extension VarlinkReply: Decodable where Parameters: Decodable {}
