import Glibc
import LinuxSystem
import ReachabilityCore
import ReachProtocol

/// The one RFC 7050 query: the AAAA records of `ipv4only.arpa`, asked of the link's own
/// resolver. Blocking: run it on `BlockingWork`, never on the engine or the loop.
package enum DNS64Query {
    /// Asks systemd-resolved on `interfaceIndex` when its socket answers (the link's own DNS
    /// servers), else `getaddrinfo(3)` for IPv6 only (the system resolver: it cannot choose
    /// the link). What comes back is read only by `DNS64Discovery.prefixes(in:)`.
    package static func ask(interfaceIndex: Int32, resolvedSocket: String?) -> DNS64Discovery.Answer {
        if let resolvedSocket, FileSystem.exists(resolvedSocket) {
            let parameters: JSONObject = [
                "name": .string(DNS64Discovery.name), "ifindex": .integer(Int(interfaceIndex)), "family": .integer(Int(AF_INET6)),
            ]
            switch VarlinkConnection.call("io.systemd.Resolve.ResolveHostname", parameters: parameters, socket: resolvedSocket, timeout: .seconds(6)) {
            case let .reply(reply): return answer(ofResolvedReply: reply)
            case .timedOut: return .failed
            case .unavailable: break
            }
        }
        return lookUp()
    }

    /// What resolved's reply holds: its addresses, the first `DNS64Discovery.maximumAnswers`.
    package static func answer(ofResolvedReply reply: VarlinkReply<JSONObject>) -> DNS64Discovery.Answer {
        switch NameResolver.outcome(ofResolvedReply: reply, interfaceName: { _ in nil }) {
        case let .addresses(addresses): return .addresses(Array(addresses.prefix(DNS64Discovery.maximumAnswers)))
        case .failed: return .failed
        }
    }

    /// `getaddrinfo` with `AF_INET6`: an AAAA query through the system's resolver.
    private static func lookUp() -> DNS64Discovery.Answer {
        let (status, addresses) = NameResolver.getAddresses(DNS64Discovery.name, family: AF_INET6)
        guard status == 0, !addresses.isEmpty else { return .failed }
        return .addresses(Array(addresses.prefix(DNS64Discovery.maximumAnswers)))
    }
}
