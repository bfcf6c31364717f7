import NetlinkMonitor
import NIOCore
import NIOEmbedded
import NIOHTTP1
import ReachabilityCore
import ReachProtocol

/// What the fuzz targets run on one input (`scripts/fuzz`, `Fuzz/Sources/`), and what the
/// regression tests run on every kept input: the same code, so a fixed crash stays fixed.
///
/// Package access only: these are not reachd's API. Each checks the invariants a fuzzer
/// cannot see from outside with `precondition`, so a violation is a crash it reports.
package enum FuzzEntryPoints {
    /// Configuration text, as `reachd --check-config` and a SIGHUP reload read it: bytes
    /// that are not UTF-8 are refused by `ConfigurationLoader.read` before any parsing.
    /// A configuration or a `ConfigurationError` are both fine; a syntax error must say
    /// where it is.
    package static func configuration(_ bytes: some Collection<UInt8>) {
        guard let text = String(validating: bytes, as: UTF8.self) else { return }
        do {
            _ = try ReachdConfiguration(parsing: text, file: "fuzz.toml")
        } catch {
            guard case let .invalid(diagnostics) = error else {
                preconditionFailure("parsing text can only find it invalid: \(error)")
            }
            precondition(!diagnostics.isEmpty, "an invalid configuration names at least one problem")
        }
    }

    /// Bytes a client sends to the Varlink socket, along the path they take in the server:
    /// cut into frames (`VarlinkFrameDecoder`, and `VarlinkFrameSplitter`, which must cut
    /// them alike), each frame decoded as a call (`VarlinkCoding`), answered by the
    /// dispatcher (parameter validation, `SubscribeParameters(validating:)`), and the reply
    /// encoded as `VarlinkConnectionHandler` encodes it. A reply that fails to encode is a
    /// crash: the handler assumes it never happens.
    ///
    /// The first byte says how the rest arrives: in reads of 1 to 256 bytes, so the
    /// incremental NUL scan is fuzzed too.
    package static func varlink(_ bytes: some Collection<UInt8>) {
        guard let first = bytes.first else { return }
        let stream = Array(bytes.dropFirst()), chunk = Int(first) + 1
        var splitter = VarlinkFrameSplitter()
        var decoder = VarlinkFrameDecoder()
        var buffer = ByteBuffer()
        var publication = varlinkPublication
        var offset = 0
        while offset < stream.count {
            let piece = stream[offset..<min(offset + chunk, stream.count)]
            offset += piece.count
            splitter.append(piece)
            buffer.writeBytes(piece)
            while true {
                let split: Result<[UInt8]?, VarlinkFramingError> = Result { () throws(VarlinkFramingError) in try splitter.next() }
                let decoded: ByteBuffer?
                do {
                    decoded = try decoder.decode(buffer: &buffer)
                } catch let error as VarlinkFramingError {
                    // The server closes the connection here; the splitter must agree.
                    precondition(split == .failure(error), "decoder failed with \(error), splitter gave \(split)")
                    return
                } catch {
                    preconditionFailure("VarlinkFrameDecoder threw \(error)")
                }
                precondition(split == .success(decoded.map { Array($0.readableBytesView) }), "the two framers cut differently")
                guard let frame = decoded else { break }
                guard answer(Array(frame.readableBytesView), publication: &publication) else { return }
            }
        }
    }

    /// Answers one frame as the connection handler does; false where the server closes
    /// the connection (a malformed call).
    private static func answer(_ frame: [UInt8], publication: inout Publication) -> Bool {
        let call: AnyVarlinkCall
        do {
            call = try VarlinkCoding.decode(AnyVarlinkCall.self, from: frame)
        } catch {
            return false
        }
        let encoded: [UInt8]?
        switch VarlinkDispatcher(serviceInfo: .reachd).outcome(for: call, publication: publication, privileged: frame.count % 2 == 0) {
        case let .reply(parameters):
            encoded = (try? ServerCore.replyFrame(parameters)).map { Array($0.readableBytesView) }
        case let .error(error):
            encoded = try? VarlinkCoding.encodeFrame(AnyVarlinkReply(error: error))
        case let .subscribe(filter):
            encoded = Array(ServerCore.frame(publication.subscribe(filter: filter).reply).readableBytesView)
        case .reload:
            encoded = try? VarlinkCoding.encodeFrame(VarlinkReply(parameters: NoParameters()))
        case .metrics:
            encoded = try? VarlinkCoding.encodeFrame(VarlinkReply(parameters: MetricsReply(text: "")))
        case .checkConnectivity:
            // No prober here: the answer is the interfaces as they are.
            encoded = try? VarlinkCoding.encodeFrame(VarlinkReply(parameters: ListInterfacesReply(interfaces: publication.state.interfaces)))
        case let .checkTarget(target), let .subscribeTarget(target):
            // No resolver or kernel here: a name is not found, an address has no route.
            let path: TargetPath
            switch target {
            case .host: path = TargetDerivation.unresolved(.nameNotFound)
            case let .address(address):
                path = TargetDerivation.derive([TargetLookup(address: address, route: .failure(.noRoute))],
                                               snapshot: publication.state.snapshot, policy: publication.state.policy)
            }
            encoded = try? VarlinkCoding.encodeFrame(VarlinkReply(parameters: TargetReply(target: target.description, path: path)))
        }
        precondition(encoded != nil, "a reply to \(call.method) did not encode")
        return true
    }

    /// What a network hands reachd, each along the path it takes in the daemon; the first
    /// byte (modulo 4) picks the decoder, the rest is its input:
    ///
    /// - 0: an RFC 8908 answer (`CaptivePortalAPI.parse`, as `application/captive+json`);
    /// - 1: an `RTM_NEWNDUSEROPT` payload (`NDUserOption.captivePortal(inPayload:)`);
    /// - 2: a probe server's bytes, through the probe's own handlers (NIO's request encoder
    ///   and response decoder, `ResponseReader`) on an `EmbeddedChannel`, in reads of 1 to
    ///   256 bytes (the second byte), then judged by `ProbeVerdict`;
    /// - 3: text for `WebURI.validate`, as `http(s)` and as `https` only.
    ///
    /// Whatever the bytes, what comes out must satisfy the rules the daemon relies on: every
    /// URI kept passes `WebURI`, every number is within its documented maximum, every
    /// exchange ends in exactly one outcome.
    package static func network(_ bytes: some Collection<UInt8>) {
        guard let first = bytes.first else { return }
        let input = Array(bytes.dropFirst())
        switch first % 4 {
        case 0: captivePortalAnswer(input)
        case 1: routerAdvertisementOption(input)
        case 2: probeResponse(input)
        default: uri(input)
        }
    }

    private static func isWebURI(_ text: String?, schemes: Set<WebURI.Scheme>) -> Bool {
        guard let text else { return true }
        guard case let .success(uri) = WebURI.validate(text, schemes: schemes) else { return false }
        return uri.text == text
    }

    private static func captivePortalAnswer(_ body: [UInt8]) {
        guard case let .success(portal) = CaptivePortalAPI.parse(body: body, contentType: CaptivePortalAPI.mediaType) else { return }
        precondition(isWebURI(portal.userPortalURL, schemes: [.https]) && isWebURI(portal.venueInfoURL, schemes: [.https]),
                     "an answer's URLs pass WebURI as https")
        precondition(portal.secondsRemaining.map { (0...CaptivePortalAPI.maximumSecondsRemaining).contains($0) } ?? true, "seconds within 0…max")
        precondition(portal.bytesRemaining.map { (0...CaptivePortalAPI.maximumBytesRemaining).contains($0) } ?? true, "bytes within 0…max")
        precondition(portal.captive != true || portal.userPortalURL != nil, "a captive answer names its portal")
    }

    private static func routerAdvertisementOption(_ payload: [UInt8]) {
        guard let portal = NDUserOption.captivePortal(inPayload: payload) else { return }
        precondition(isWebURI(portal.apiURI, schemes: [.https]), "an announced API URI passes WebURI as https")
    }

    private static func probeResponse(_ input: [UInt8]) {
        guard let first = input.first else { return }
        let stream = input.dropFirst(), chunk = Int(first) + 1
        let exchanged: (request: String?, result: HTTPFetcher.Result?)
        do {
            exchanged = try ResponseReader.embeddedExchange(Array(stream), chunk: chunk)
        } catch {
            preconditionFailure("setting up the probe's handlers failed: \(error)")
        }
        guard let result = exchanged.result else { preconditionFailure("an exchange that ended has an outcome") }
        precondition(result.body.count <= HTTPFetcher.bodyLimit, "the body is read up to its limit")
        guard case let .response(response) = result.outcome else { return }
        precondition(response.headers.count <= ResponseReader.maximumHeaders, "at most the maximum headers kept")
        precondition(response.headers.values.allSatisfy { $0.utf8.count <= ResponseReader.maximumHeaderValueLength }, "header values bounded")
        precondition((response.location?.utf8.count ?? 0) <= WebURI.maximumLength, "the Location kept is bounded")
        let judgement = ProbeVerdict.judge(http: result.outcome, https: nil, expect: ProbeExpectation())
        precondition(isWebURI(judgement.portalURL, schemes: [.http, .https]), "a portal's login page passes WebURI")
    }

    private static func uri(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        for schemes: Set<WebURI.Scheme> in [[.http, .https], [.https]] {
            guard case let .success(uri) = WebURI.validate(text, schemes: schemes) else { continue }
            precondition(schemes.contains(uri.scheme) && !uri.host.isEmpty && (1...65535).contains(uri.port), "scheme, host and port checked")
            precondition(text.utf8.count <= WebURI.maximumLength, "length bounded")
            precondition(text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "visible ASCII only")
            precondition(uri.target.hasPrefix("/") && !uri.target.contains("#"), "a request target")
            precondition(WebURI.validate(uri.text, schemes: schemes) == .success(uri), "a checked URI checks the same again")
        }
    }

    /// What the fuzzed server publishes: a wired and a Wi-Fi link, each with a default
    /// route, so filters in `Subscribe` calls change the answer.
    private static let varlinkPublication: Publication = {
        let eth = Link(index: 2, name: "eth0", flags: [.up, .running], operState: .up, carrier: true)
        let wlan = Link(
            index: 3, name: "wlan0", flags: [.up, .running], operState: .up, carrier: true, device: DeviceFacts(isWireless: true)
        )
        let snapshot = NetworkSnapshot(
            links: [2: eth, 3: wlan],
            addresses: [
                InterfaceAddress(interfaceIndex: 2, address: .v4(10, 0, 0, 2), prefixLength: 24),
                InterfaceAddress(interfaceIndex: 3, address: .v4(192, 168, 1, 5), prefixLength: 24),
            ],
            defaultRoutes: [
                DefaultRoute(family: .ipv4, metric: 100, nextHops: [NextHop(interfaceIndex: 2, gateway: .v4(10, 0, 0, 1))]),
                DefaultRoute(family: .ipv4, metric: 600, nextHops: [NextHop(interfaceIndex: 3, gateway: .v4(192, 168, 1, 1))]),
            ],
            lookups: [.ipv4: .route(RouteLookupResult(outputInterface: 2, gateway: .v4(10, 0, 0, 1)))],
            hasNameserver: true
        )
        return Publication(instance: "fuzz", snapshot: snapshot, policy: InterfacePolicy())
    }()
}

extension ResponseReader {
    /// One probe exchange on an `EmbeddedChannel`: the request the handlers wrote, and the
    /// outcome once the server sent `answer` in `chunk`-byte reads and closed (nil: it never
    /// ended). The fuzz target and the reader's tests drive the handlers through it.
    static func embeddedExchange(_ answer: [UInt8], chunk: Int) throws -> (request: String?, result: HTTPFetcher.Result?) {
        let channel = EmbeddedChannel()
        let promise = channel.eventLoop.makePromise(of: HTTPFetcher.Result.self)
        var result: HTTPFetcher.Result?
        promise.futureResult.assumeIsolated().whenSuccess { result = $0 }
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/generate_204")
        head.headers.add(name: "Host", value: "probe.test")
        try addHandlers(to: channel.pipeline.syncOperations, head: head, promise: promise, refusal: nil)
        try channel.connect(to: SocketAddress(ipAddress: "192.0.2.1", port: 80)).wait()
        let request = try channel.readOutbound(as: ByteBuffer.self).map { String(buffer: $0) }
        var offset = 0
        while offset < answer.count, channel.isActive {
            let piece = answer[offset..<min(offset + chunk, answer.count)]
            offset += piece.count
            _ = try? channel.writeInbound(ByteBuffer(bytes: piece))
        }
        _ = try? channel.finish(acceptAlreadyClosed: true)
        let ended = result
        if ended == nil { promise.succeed(HTTPFetcher.Result(outcome: .timedOut)) }  // no leaked promise
        return (request, ended)
    }
}
