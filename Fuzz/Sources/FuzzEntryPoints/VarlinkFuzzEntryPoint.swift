import ReachServer
import NIOCore
import ReachabilityCore
import ReachProtocol

/// What `fuzz-varlink` (`scripts/fuzz varlink`) runs on one input, bytes from a Varlink
/// client, and what the regression tests run on every kept input: the same code, so a fixed
/// crash stays fixed. Package access only; invariants a fuzzer cannot see from outside are
/// `precondition`s.
package enum VarlinkFuzzEntryPoint {
    /// Bytes a client sends to the Varlink socket, along the path they take in the server:
    /// cut into frames by `VarlinkFrameDecoder` (which must cut them as it cuts the whole
    /// stream at once), each frame decoded as a call (`VarlinkCoding`), answered by the
    /// dispatcher (parameter validation, `SubscribeParameters(validating:)`), and the reply
    /// encoded as `VarlinkConnectionHandler` encodes it. A reply that fails to encode is a
    /// crash: the handler assumes it never happens.
    ///
    /// The first byte says how the rest arrives: in reads of 1 to 256 bytes, so the
    /// incremental NUL scan is fuzzed too.
    package static func stream(_ bytes: some Collection<UInt8>) {
        guard let first = bytes.first else { return }
        let stream = Array(bytes.dropFirst()), chunk = Int(first) + 1
        let (whole, wholeError) = cutWhole(stream)
        var decoder = VarlinkFrameDecoder()
        var buffer = ByteBuffer()
        var publication = varlinkPublication
        var cut = 0
        var offset = 0
        while offset < stream.count {
            let piece = stream[offset..<min(offset + chunk, stream.count)]
            offset += piece.count
            buffer.writeBytes(piece)
            while true {
                let frame: ByteBuffer?
                do {
                    frame = try decoder.decode(buffer: &buffer)
                } catch {
                    // The server closes the connection here; the whole stream must fail alike.
                    precondition(error == wholeError && cut == whole.count, "failed with \(error) after \(cut) frames; at once: \(String(describing: wholeError)) after \(whole.count)")
                    return
                }
                guard let frame else { break }
                precondition(cut < whole.count && frame == whole[cut], "frame \(cut) is cut differently in pieces of \(chunk) bytes")
                cut += 1
                guard answer(Array(frame.readableBytesView), publication: &publication) else { return }
            }
        }
        precondition(wholeError == nil && cut == whole.count, "\(cut) frames in pieces of \(chunk) bytes, \(whole.count) at once")
    }

    /// The frames of `stream` delivered in one read, and the error that ends it, if any.
    private static func cutWhole(_ stream: [UInt8]) -> ([ByteBuffer], VarlinkFramingError?) {
        var decoder = VarlinkFrameDecoder()
        var buffer = ByteBuffer(bytes: stream)
        var frames: [ByteBuffer] = []
        do {
            while let frame = try decoder.decode(buffer: &buffer) { frames.append(frame) }
        } catch {
            return (frames, error)
        }
        return (frames, nil)
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
            encoded = Array(ServerCore.frame(publication.subscribe(filter: filter, id: 0).reply).readableBytesView)
        case .subscribeSummary:
            encoded = Array(ServerCore.frame(publication.subscribeSummary(id: 0)).readableBytesView)
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
            case let .address(address), let .scopedAddress(address, _):
                path = TargetDerivation.derive([TargetLookup(address: address, route: .failure(.noRoute))],
                                               snapshot: publication.state.snapshot, policy: publication.state.policy)
            }
            encoded = try? VarlinkCoding.encodeFrame(VarlinkReply(parameters: TargetReply(target: target.description, path: path)))
        }
        precondition(encoded != nil, "a reply to \(call.method) did not encode")
        return true
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
