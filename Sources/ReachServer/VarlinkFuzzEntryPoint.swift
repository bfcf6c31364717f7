import NIOCore
import ReachabilityCore
import ReachProtocol

/// `fuzz-varlink`: bytes from a Varlink client.
/// What the fuzz targets run on one input (`scripts/fuzz`, `Fuzz/Sources/`), and what the
/// regression tests run on every kept input: the same code, so a fixed crash stays fixed.
/// Package access only; invariants a fuzzer cannot see from outside are `precondition`s.
package enum VarlinkFuzzEntryPoint {
    /// Bytes a client sends to the Varlink socket, along the path they take in the server:
    /// cut into frames (`VarlinkFrameDecoder`, and `VarlinkFrameSplitter`, which must cut
    /// them alike), each frame decoded as a call (`VarlinkCoding`), answered by the
    /// dispatcher (parameter validation, `SubscribeParameters(validating:)`), and the reply
    /// encoded as `VarlinkConnectionHandler` encodes it. A reply that fails to encode is a
    /// crash: the handler assumes it never happens.
    ///
    /// The first byte says how the rest arrives: in reads of 1 to 256 bytes, so the
    /// incremental NUL scan is fuzzed too.
    package static func stream(_ bytes: some Collection<UInt8>) {
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
