/// A Varlink call: `{"method": ..., "parameters": {...}, "more": true, ...}`.
///
/// Generic over its parameters so a client can send typed ones; the server decodes
/// `VarlinkCall<JSONObject>` first and interprets the parameters once it knows the method.
package struct VarlinkCall<Parameters: Sendable>: Sendable {
    /// Fully qualified method name, e.g. `io.reachd.Reachability.GetStatus`.
    package var method: String
    /// Input parameters; absent means none.
    package var parameters: Parameters?
    /// Asks for a stream of replies (each with `continues: true` but the last).
    package var more: Bool?
    /// Asks for no reply at all.
    package var oneway: Bool?
    /// Asks to take over the connection after the reply (not supported by reachd).
    package var upgrade: Bool?

    /// Creates a call; flags left `false` are not sent.
    package init(method: String, parameters: Parameters? = nil, more: Bool = false, oneway: Bool = false, upgrade: Bool = false) {
        self.method = method
        self.parameters = parameters
        self.more = more ? true : nil
        self.oneway = oneway ? true : nil
        self.upgrade = upgrade ? true : nil
    }

    /// Whether the caller asked for a stream.
    package var wantsMore: Bool { more ?? false }
    /// Whether the caller asked for no reply.
    package var isOneway: Bool { oneway ?? false }
    /// Whether the caller asked to upgrade the connection.
    package var wantsUpgrade: Bool { upgrade ?? false }
}

/// A call whose parameters have not been interpreted yet.
package typealias AnyVarlinkCall = VarlinkCall<JSONObject>

/// A Varlink reply: `{"parameters": {...}, "continues": true, "error": "name"}`.
package struct VarlinkReply<Parameters: Sendable>: Sendable {
    /// Output parameters, or the error's parameters.
    package var parameters: Parameters?
    /// More replies follow (only in answer to `more: true`).
    package var continues: Bool?
    /// Fully qualified error name; absent on success.
    package var error: String?

    /// Creates a reply; `continues: false` is not sent.
    package init(parameters: Parameters?, continues: Bool = false, error: String? = nil) {
        self.parameters = parameters
        self.continues = continues ? true : nil
        self.error = error
    }

    /// Whether more replies follow.
    package var isContinuing: Bool { continues ?? false }
}

/// A reply whose parameters have not been interpreted yet.
package typealias AnyVarlinkReply = VarlinkReply<JSONObject>

extension VarlinkReply where Parameters == JSONObject {
    /// The error reply for `error`.
    package init(error: VarlinkError) {
        self.init(parameters: error.parameters, error: error.name)
    }

    /// The error this reply carries, if it is an error reply.
    package var varlinkError: VarlinkError? {
        error.map { VarlinkError(name: $0, parameters: parameters ?? [:]) }
    }
}

extension VarlinkCall: Encodable where Parameters: Encodable {}
extension VarlinkCall: Decodable where Parameters: Decodable {}
extension VarlinkReply: Encodable where Parameters: Encodable {}
extension VarlinkReply: Decodable where Parameters: Decodable {}
