import NIOCore
import NIOHTTP1
import NIOPosix
import ReachabilityCore
import ReachConfiguration
import ReachProtocol
import ReachTargets
import SystemPackage

/// Makes the TLS handler of one HTTPS request and says afterwards why a handshake was
/// refused (the handshake's own error does not carry the trust verdict's reason).
package protocol TLSHandshaking: Sendable {
    /// A client handler for `host` (SNI and name checks) whose certificates are judged through
    /// `offload`, and a way to read the refusal.
    func makeHandler(serverHostname: String, offload: @escaping TrustOffload) throws -> (handler: any ChannelHandler, refusal: @Sendable () -> String?)
}

/// One HTTP(S) GET as a connectivity probe or an RFC 8908 API fetch makes it: the socket
/// bound to one interface (`SO_BINDTOIFINDEX`, so policy routing cannot send it elsewhere)
/// and to one family, no redirects followed, the body read up to a cap, and a deadline on
/// the whole exchange. Runs on the event loop that owns the published state; names are
/// resolved off it by `NameResolver`.
///
/// At most `ProbeSlots.defaultCapacity` requests are in flight at once, whoever asks (more
/// wait, within their deadline; more than the queue are refused as "too many probes"),
/// and a request whose `FetchCancellation` fires ends at once: its socket is closed and
/// its name resolution no longer waited for.
package final class HTTPFetcher {
    /// One request.
    package struct Request {
        /// What to fetch.
        var endpoint: HTTPEndpoint
        /// The interface the socket is bound to.
        var interfaceIndex: Int32
        /// The family to connect over; nil: the first address the name has.
        var family: AddressFamily?
        /// The deadline for name, connection and answer together.
        var timeout: TimeAmount
        /// The `Accept` header.
        var accept = "*/*"
        /// For `https`: how the server must prove who it is.
        var tls: (any TLSHandshaking)?
        /// Ends the request early (its round was superseded).
        var cancellation: FetchCancellation?
    }

    /// What came back: the verdict's view of it, and the body as read (up to `bodyLimit`).
    package struct Result {
        package var outcome: ProbeOutcome
        package var body: [UInt8] = []

        /// An exchange's outcome, with what was read of the body.
        package init(outcome: ProbeOutcome, body: [UInt8] = []) {
            self.outcome = outcome
            self.body = body
        }
    }

    /// The most body bytes read (RFC 8908's cap; a probe needs less).
    package static let bodyLimit = 4096
    /// `SO_BINDTOIFINDEX` (Linux 5.0): bind by index, so a rename cannot misdirect.
    private static let bindToInterfaceIndex = NIOBSDSocket.Option(rawValue: 62)

    private let eventLoop: any EventLoop
    private let resolver: NameResolver
    /// Where TLS chains are judged.
    private let work: BlockingWork
    /// Which requests run and which wait.
    private var slots: ProbeSlots
    /// How to start each waiting request, by id.
    private var waiting: [Int: () -> Void] = [:]
    private var nextID = 0

    init(eventLoop: any EventLoop, resolver: NameResolver, work: BlockingWork, slots: ProbeSlots = ProbeSlots()) {
        self.eventLoop = eventLoop
        self.resolver = resolver
        self.work = work
        self.slots = slots
    }

    /// Requests holding a slot now (resolving, connecting or reading).
    var requestsInFlight: Int { slots.running.count }

    /// Fetches `request.endpoint`; never fails: every error is an outcome.
    package func fetch(_ request: Request, hasNameserver: Bool) -> EventLoopFuture<Result> {
        if request.endpoint.isHTTPS && request.tls == nil {
            return eventLoop.makeSucceededFuture(Result(outcome: .untrusted("no trust policy for \(request.endpoint)")))
        }
        let promise = eventLoop.makePromise(of: Result.self)
        let id = nextID
        nextID += 1
        // The deadline counts from the ask: time spent waiting for a slot is part of it.
        let deadline = eventLoop.assumeIsolated().scheduleTask(in: request.timeout) {
            promise.succeed(Result(outcome: .timedOut))
        }
        request.cancellation?.onCancel { promise.succeed(Result(outcome: .failed("superseded"))) }
        promise.futureResult.assumeIsolated().whenComplete { [self] _ in
            deadline.cancel()
            waiting[id] = nil
            for next in slots.finished(id) { waiting.removeValue(forKey: next)?() }
        }
        let begin = { [self] in start(request, hasNameserver: hasNameserver, promise: promise) }
        switch slots.admit(id) {
        case .start: begin()
        case .wait: waiting[id] = begin
        case .refuse: promise.succeed(Result(outcome: .failed("too many probes in flight")))
        }
        return promise.futureResult
    }

    /// Resolves, connects and reads for an admitted request, unless it already has an
    /// outcome (a deadline or a cancellation while it waited or resolved).
    private func start(_ request: Request, hasNameserver: Bool, promise: EventLoopPromise<Result>) {
        let finished = NIOLoopBoundBox(false, eventLoop: eventLoop)
        promise.futureResult.assumeIsolated().whenComplete { _ in finished.value = true }
        // A cancelled round's waiting request may get a slot while the cancellation runs.
        guard !finished.value, request.cancellation?.isCancelled != true else { return }
        address(of: request, hasNameserver: hasNameserver).assumeIsolated().whenComplete { [self] resolved in
            // Given up meanwhile: no socket for an answer nobody waits for.
            guard !finished.value else { return }
            switch resolved {
            case let .success(.unusable(reason)):
                promise.succeed(Result(outcome: .failed(reason)))
            case let .success(.address(address)):
                connect(request, to: address, promise: promise)
            case let .failure(error):
                promise.succeed(Result(outcome: .failed("\(error)")))
            }
        }
    }

    /// The address to connect to: the host itself when it is a literal, else the first of
    /// its addresses in the family, resolved through the interface's DNS where resolved can.
    private func address(of request: Request, hasNameserver: Bool) -> EventLoopFuture<Destination> {
        let endpoint = request.endpoint
        if let literal = IPAddress(endpoint.host) {
            guard request.family == nil || literal.family == request.family else {
                return eventLoop.makeSucceededFuture(.unusable("\(literal) is not an \(request.family?.rawValue ?? "") address"))
            }
            return eventLoop.makeSucceededFuture(Self.socketAddress(literal, port: endpoint.port))
        }
        let family = request.family
        return resolver.resolve(endpoint.host, hasNameserver: hasNameserver, interfaceIndex: request.interfaceIndex).map { outcome in
            switch outcome {
            case let .failed(reason):
                return .unusable("\(endpoint.host): \(reason.rawValue)")
            case let .addresses(addresses):
                guard let address = addresses.first(where: { family == nil || $0.family == family }) else {
                    return .unusable("\(endpoint.host) has no \(family?.rawValue ?? "") address")
                }
                return Self.socketAddress(address, port: endpoint.port)
            }
        }
    }

    /// Where a request goes, or why it cannot go anywhere.
    private enum Destination {
        case address(SocketAddress)
        case unusable(String)
    }

    private static func socketAddress(_ address: IPAddress, port: Int) -> Destination {
        do {
            return .address(try SocketAddress(ipAddress: address.description, port: port))
        } catch {
            return .unusable("\(address): \(error)")
        }
    }

    private func connect(_ request: Request, to address: SocketAddress, promise: EventLoopPromise<Result>) {
        let endpoint = request.endpoint
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: endpoint.target)
        head.headers.add(name: "Host", value: endpoint.hostHeader)
        head.headers.add(name: "User-Agent", value: "reachd/\(ReachdVersion.string)")
        head.headers.add(name: "Accept", value: request.accept)
        head.headers.add(name: "Connection", value: "close")
        let tls: (handler: any ChannelHandler, refusal: @Sendable () -> String?)?
        do {
            tls = try request.tls.map { try $0.makeHandler(serverHostname: endpoint.host, offload: { [work] in work.run($0) }) }
        } catch {
            promise.succeed(Result(outcome: .untrusted("\(error)")))
            return
        }
        let refusal = tls?.refusal
        let tlsHandler = tls.map { NIOLoopBound($0.handler, eventLoop: eventLoop) }
        let requestHead = head
        ClientBootstrap(group: eventLoop)
            .connectTimeout(request.timeout)
            .channelOption(ChannelOptions.socketOption(Self.bindToInterfaceIndex), value: SocketOptionValue(request.interfaceIndex))
            .channelInitializer { channel in
                // An outcome (the deadline, a cancellation, an answer) closes the socket,
                // also while it is still connecting.
                promise.futureResult.whenComplete { _ in channel.close(promise: nil) }
                do {
                    let pipeline = channel.pipeline.syncOperations
                    if let tlsHandler { try pipeline.addHandler(tlsHandler.value) }
                    try ResponseReader.addHandlers(to: pipeline, head: requestHead, promise: promise, refusal: refusal)
                    return channel.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
            .connect(to: address)
            .whenComplete { result in
                if case let .failure(error) = result {
                    promise.succeed(Result(outcome: .failed(Self.describe(error))))
                }
            }
    }

    /// "connection refused", "network is unreachable": errno text, not NIO's type names.
    package static func describe(_ error: any Error) -> String {
        if let error = error as? IOError {
            return Errno(rawValue: error.errnoCode).description.lowercased()
        }
        if error is ChannelError, case .connectTimeout = error as? ChannelError { return "connection timed out" }
        return "\(error)"
    }
}

/// Ends the requests of one probe round at once when the round is superseded: each
/// request's outcome becomes "superseded", which closes its socket and stops waiting for its
/// name. Used on the event loop only.
final class FetchCancellation {
    private var handlers: [() -> Void] = []
    /// Whether `cancel` was called.
    private(set) var isCancelled = false

    /// Runs `handler` on `cancel` (at once if cancelled already).
    func onCancel(_ handler: @escaping () -> Void) {
        if isCancelled { handler() } else { handlers.append(handler) }
    }

    /// Cancels every request that registered; later ones are cancelled as they register.
    package func cancel() {
        guard !isCancelled else { return }
        isCancelled = true
        let pending = handlers
        handlers = []
        for handler in pending { handler() }
    }
}
