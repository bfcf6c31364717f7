import LinuxSystem
import ReachProtocol
import SystemPackage

/// One Varlink call to a local service (systemd-resolved, systemd-networkd), blocking, for
/// a thread of `NameResolver`'s pool: never on the event loop or the engine.
package enum BlockingVarlinkCall {
    /// What came back.
    package enum Outcome {
        /// The service's reply (parameters or an error).
        case reply(VarlinkReply<JSONObject>)
        /// No answer within the timeout.
        case timedOut
        /// The service cannot be asked: not running, refusing, not speaking Varlink.
        case unavailable
    }

    /// Calls `method` on the service at `socket` and waits at most `timeout` for its answer.
    package static func call(_ method: String, parameters: JSONObject, socket: String, timeout: Duration) -> Outcome {
        guard let descriptor = try? UnixSocket.connect(to: socket, timeout: timeout) else { return .unavailable }
        defer { try? descriptor.close() }
        let call = VarlinkCall(method: method, parameters: parameters)
        guard let frame = try? VarlinkCoding.encodeFrame(call), (try? descriptor.writeAll(frame)) != nil else { return .unavailable }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while !received.contains(0) {
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) }
            } catch let error as Errno where error == .resourceTemporarilyUnavailable {
                return .timedOut  // SO_RCVTIMEO
            } catch {
                return .unavailable
            }
            guard count > 0, received.count + count <= VarlinkFraming.maximumReplySize else { return .unavailable }
            received += chunk[..<count]
        }
        guard let reply = try? VarlinkCoding.decode(VarlinkReply<JSONObject>.self, from: received.prefix { $0 != 0 }) else {
            return .unavailable
        }
        return .reply(reply)
    }
}
