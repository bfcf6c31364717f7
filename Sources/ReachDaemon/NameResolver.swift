import CLinux
import Glibc
import LinuxSystem
import NIOCore
import NIOPosix
import ReachabilityCore
import ReachProtocol
import SystemPackage

/// Resolves target names without blocking the event loop or the engine, on a small thread
/// pool started on first use: through systemd-resolved's Varlink API
/// (`io.systemd.Resolve.ResolveHostname`) when its socket exists, which tells a missing
/// name from missing servers precisely; otherwise (or when resolved cannot be asked)
/// `getaddrinfo(3)`, so `/etc/hosts`, nsswitch and the resolver configuration apply as for
/// any program. Owned by the event loop: every
/// method runs there.
///
/// A name gets an answer within `timeout` whatever the resolver does (a server that drops
/// queries makes glibc wait 5 s per try); the late answer is dropped. Answers are cached
/// for a short fixed time (getaddrinfo reports no TTL), and the cache is emptied when the
/// path changes (another interface, other DNS servers). Concurrent asks for one name
/// share one resolution.
public final class NameResolver {
    /// What a name resolved to.
    enum Outcome: Sendable, Equatable {
        /// The name's addresses, as the resolver ordered them (duplicates removed).
        case addresses([IPAddress])
        /// Why it did not resolve: `nameNotFound`, `noDNSServer`, `resolutionFailed` or
        /// `resolutionTimedOut`.
        case failed(UnsatisfiedReason)
    }

    /// How long an answer may take.
    let timeout: TimeAmount
    /// How long a found name's addresses are reused.
    let cacheLifetime: TimeAmount
    /// systemd-resolved's Varlink socket; nil: never ask it.
    let resolvedSocket: String?
    private let eventLoop: any EventLoop
    private var pool: NIOThreadPool?
    private var cache: [String: (expires: NIODeadline, outcome: Outcome)] = [:]
    private var inFlight: [String: EventLoopFuture<Outcome>] = [:]

    /// The path where systemd-resolved serves Varlink.
    public static let systemdResolvedSocket = "/run/systemd/resolve/io.systemd.Resolve"

    init(
        eventLoop: any EventLoop, resolvedSocket: String? = NameResolver.systemdResolvedSocket,
        timeout: TimeAmount = .seconds(5), cacheLifetime: TimeAmount = .seconds(30)
    ) {
        self.eventLoop = eventLoop
        self.resolvedSocket = resolvedSocket
        self.timeout = timeout
        self.cacheLifetime = cacheLifetime
    }

    /// The addresses of `name`. `hasNameserver` tells a resolver failure with no DNS server
    /// configured (`noDNSServer`) from one with servers that failed. With `interfaceIndex`,
    /// systemd-resolved asks that interface's DNS servers (a probe's name is resolved as
    /// the network it checks would resolve it); `getaddrinfo` cannot, and ignores it.
    func resolve(_ name: String, hasNameserver: Bool, interfaceIndex: Int32? = nil) -> EventLoopFuture<Outcome> {
        let key = interfaceIndex.map { "\(name)%\($0)" } ?? name
        if let cached = cache[key], cached.expires > .now() { return eventLoop.makeSucceededFuture(cached.outcome) }
        if let running = inFlight[key] { return running }
        let promise = eventLoop.makePromise(of: Outcome.self)
        inFlight[key] = promise.futureResult
        let deadline = eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            promise.succeed(.failed(.resolutionTimedOut))
        }
        let resolvedSocket = self.resolvedSocket
        threadPool().runIfActive(eventLoop: eventLoop) {
            if let resolvedSocket, FileSystem.exists(resolvedSocket),
               let answer = Self.askResolved(name, interfaceIndex: interfaceIndex, socket: resolvedSocket) {
                return answer
            }
            return Self.lookUp(name, hasNameserver: hasNameserver)
        }
            .assumeIsolated().whenComplete { result in
                deadline.cancel()
                let outcome = (try? result.get()) ?? .failed(.resolutionFailed)
                promise.succeed(outcome)  // a no-op if the deadline came first
            }
        promise.futureResult.assumeIsolated().whenSuccess { [self] outcome in
            inFlight[key] = nil
            switch outcome {
            case .addresses: cache[key] = (.now() + cacheLifetime, outcome)
            case .failed(.nameNotFound): cache[key] = (.now() + .seconds(5), outcome)
            case .failed: break
            }
        }
        return promise.futureResult
    }

    /// Forgets every cached answer (the path changed: another network may answer differently).
    func forgetAnswers() {
        cache = [:]
    }

    /// Stops the pool without waiting for a resolution stuck in the resolver.
    func shutdown() {
        pool?.shutdownGracefully { _ in }
        pool = nil
    }

    private func threadPool() -> NIOThreadPool {
        if let pool { return pool }
        let started = NIOThreadPool(numberOfThreads: 2)
        started.start()
        pool = started
        return started
    }

    /// One blocking `getaddrinfo`, both families, addresses in the resolver's order.
    private static func lookUp(_ name: String, hasNameserver: Bool) -> Outcome {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)  // one entry per address, not per socket type
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(name, nil, &hints, &list)
        defer { if let list { freeaddrinfo(list) } }
        guard status == 0 else { return .failed(reason(forError: status, hasNameserver: hasNameserver)) }
        var addresses: [IPAddress] = []
        var entry = list
        while let current = entry?.pointee {
            if let address = current.ai_addr.flatMap(IPAddress.init(socketAddress:)), !addresses.contains(address) {
                addresses.append(address)
            }
            entry = current.ai_next
        }
        return addresses.isEmpty ? .failed(.nameNotFound) : .addresses(addresses)
    }

    /// One `io.systemd.Resolve.ResolveHostname` call; nil when resolved cannot be asked
    /// (not running, refusing, not speaking Varlink), so the caller falls back.
    private static func askResolved(_ name: String, interfaceIndex: Int32?, socket: String) -> Outcome? {
        var parameters: JSONObject = ["name": .string(name)]
        if let interfaceIndex { parameters["ifindex"] = .integer(Int(interfaceIndex)) }
        switch BlockingVarlinkCall.call("io.systemd.Resolve.ResolveHostname", parameters: parameters, socket: socket, timeout: .seconds(6)) {
        case let .reply(reply): return outcome(ofResolvedReply: reply)
        case .timedOut: return .failed(.resolutionTimedOut)
        case .unavailable: return nil
        }
    }

    /// Runs `body` on the pool (blocking work: another service's Varlink socket).
    func runOffLoop<Value: Sendable>(_ body: @escaping @Sendable () -> Value) -> EventLoopFuture<Value> {
        threadPool().runIfActive(eventLoop: eventLoop, body)
    }

    /// What systemd-resolved's answer means for a target. Pure.
    static func outcome(ofResolvedReply reply: VarlinkReply<JSONObject>) -> Outcome {
        if let error = reply.error {
            if case let .integer(rcode)? = reply.parameters?["rcode"], error == "io.systemd.Resolve.DNSError" {
                return .failed(rcode == 3 ? .nameNotFound : .resolutionFailed)  // 3: NXDOMAIN
            }
            switch error {
            case "io.systemd.Resolve.NoNameServers": return .failed(.noDNSServer)
            case "io.systemd.Resolve.QueryTimedOut", "io.systemd.Resolve.MaxAttemptsReached": return .failed(.resolutionTimedOut)
            case "io.systemd.Resolve.NoSuchResourceRecord": return .failed(.nameNotFound)
            default: return .failed(.resolutionFailed)
            }
        }
        var addresses: [IPAddress] = []
        for entry in reply.parameters?["addresses"]?.arrayValue ?? [] {
            let bytes = entry.objectValue?["address"]?.arrayValue?.compactMap { value -> UInt8? in
                if case let .integer(byte) = value { return UInt8(exactly: byte) }
                return nil
            }
            if let bytes, let address = IPAddress(bytes: bytes), !addresses.contains(address) { addresses.append(address) }
        }
        return addresses.isEmpty ? .failed(.nameNotFound) : .addresses(addresses)
    }

    /// What a `getaddrinfo` error means for a target. The one place an EAI code becomes a reason.
    static func reason(forError status: Int32, hasNameserver: Bool) -> UnsatisfiedReason {
        switch status {
        case EAI_NONAME, reachd_EAI_NODATA: return .nameNotFound
        // Temporary failure: the servers did not answer, or there are none to ask.
        case EAI_AGAIN: return hasNameserver ? .resolutionTimedOut : .noDNSServer
        default: return hasNameserver ? .resolutionFailed : .noDNSServer
        }
    }
}

extension IPAddress {
    /// The address in a `sockaddr_in` or `sockaddr_in6`; nil for other families.
    init?(socketAddress: UnsafeMutablePointer<sockaddr>) {
        guard let bytes = internetAddressBytes(of: socketAddress) else { return nil }
        self.init(bytes: bytes)
    }
}
