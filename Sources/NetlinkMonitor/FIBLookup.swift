import CNetlink
import ReachabilityCore

/// One FIB lookup: the RTM_GETROUTE request `ip route get` sends (no packet leaves
/// the host), and the mapping of the kernel's answer to a `RouteLookup`.
enum FIBLookup {
    /// Asks the kernel how a packet to `destination` would leave, on the blocking
    /// request socket. Socket-level failures come back as `.failure(.error(errno))`.
    static func lookup(_ destination: IPAddress, on socket: NetlinkSocket) -> RouteLookup {
        do {
            return try perform(destination, on: socket)
        } catch {
            return .failure(.lookupFailed(error.description))
        }
    }

    private static func perform(_ destination: IPAddress, on socket: NetlinkSocket) throws(NetlinkError) -> RouteLookup {
        let bytes = destination.bytes
        let sequence = try socket.send(type: Kernel.getRoute, flags: Kernel.flagRequest) { (message) throws(NetlinkError) in
            var header = rtmsg()
            header.rtm_family = destination.family == .ipv4 ? Kernel.afInet : Kernel.afInet6
            header.rtm_dst_len = UInt8(bytes.count * 8)
            // Report the table the match came from (IPv4 says "main" otherwise).
            header.rtm_flags = UInt32(RTM_F_LOOKUP_TABLE)
            var result = nlmsg_append(message, &header, MemoryLayout<rtmsg>.size, Int32(NLMSG_ALIGNTO))
            if result >= 0 {
                result = bytes.withUnsafeBytes { nla_put(message, Int32(Kernel.rtaDestination), Int32($0.count), $0.baseAddress) }
            }
            if result < 0 { throw NetlinkError(operation: "build RTM_GETROUTE", libnlCode: result) }
        }
        var answer: RouteLookup?
        try socket.awaitAnswer(to: sequence) { message in
            if message.type == Kernel.newRoute { answer = interpret(message) }
        }
        if let errno = socket.receiver.kernelErrno {
            return .failure(RouteLookupFailure(errno: errno))
        }
        return answer ?? .failure(.lookupFailed("no answer"))
    }

    /// Maps an RTM_NEWROUTE answer. Reject routes become failures: current kernels
    /// answer them with an errno for both families, but IPv6 on older kernels returns
    /// the route itself (via `lo`) with its error in RTA_CACHEINFO, where ENETUNREACH
    /// is the null entry ("no route at all").
    static func interpret(_ message: RawMessage) -> RouteLookup {
        let payload = message.payload
        guard payload.count >= Kernel.rtmsgLength else { return .failure(.lookupFailed("truncated answer")) }
        let type = payload[7]
        let flags = payload.loadUnaligned(fromByteOffset: 8, as: UInt32.self)
        var table = UInt32(payload[4])
        var outputInterface: Int32 = 0
        var gateway: IPAddress?
        var source: IPAddress?
        var cachedError: Int32 = 0
        for attribute in message.attributes(after: Kernel.rtmsgLength) {
            switch attribute.type {
            case Kernel.rtaOutputInterface: outputInterface = Int32(bitPattern: attribute.uint32 ?? 0)
            case Kernel.rtaGateway: gateway = attribute.address
            case Kernel.rtaVia: gateway = MessageParser.viaAddress(attribute.payload)
            case Kernel.rtaPreferredSource: source = attribute.address
            case Kernel.rtaTable: table = attribute.uint32 ?? table
            case Kernel.rtaCacheInfo:
                // struct rta_cacheinfo { u32 clntref, lastuse; s32 expires; u32 error; ... }
                if attribute.payload.count >= 16 {
                    cachedError = abs(attribute.payload.loadUnaligned(fromByteOffset: 12, as: Int32.self))
                }
            default: break
            }
        }
        switch type {
        case Kernel.rtnUnreachable:
            return .failure(cachedError == Kernel.enetunreach ? .noRoute : .unreachableRoute)
        case Kernel.rtnBlackhole:
            return .failure(.blackholeRoute)
        case Kernel.rtnProhibit:
            return .failure(.prohibitedRoute)
        case Kernel.rtnThrow:
            return .failure(.noRoute)
        default:
            return .route(RouteLookupResult(
                type: RouteType(kernelValue: type), outputInterface: outputInterface, gateway: gateway,
                preferredSource: source, isLinkDown: flags & Kernel.nextHopLinkDown != 0, table: table
            ))
        }
    }
}

extension RouteLookupFailure {
    /// Maps a positive errno from the kernel's reply (Linux numbering).
    public init(errno: Int32) {
        switch errno {
        case 101: self = .noRoute          // ENETUNREACH
        case 113: self = .unreachableRoute // EHOSTUNREACH
        case 22: self = .blackholeRoute    // EINVAL
        case 13, 1: self = .prohibitedRoute // EACCES, EPERM
        default: self = .lookupFailed("errno \(errno)")
        }
    }
}
