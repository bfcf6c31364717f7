import ReachabilityCore
import ReachProtocol

/// What to do with one call: the pure half of request handling.
package enum CallOutcome {
    /// Send these parameters as the one reply.
    case reply(any Codable & Sendable)
    /// Send this error.
    case error(VarlinkError)
    /// Start a subscription stream with this filter.
    case subscribe(PathFilter)
    /// Start a summary stream (`SubscribeSummary`).
    case subscribeSummary
    /// Reload the configuration, and answer once that is done.
    case reload
    /// Answer for this target once its name is resolved and its addresses looked up.
    case checkTarget(Target)
    /// Start a stream of this target's answers.
    case subscribeTarget(Target)
    /// Probe now (one interface, or all) and answer when done.
    case checkConnectivity(interface: String?)
    /// Answer with the metrics as they are now.
    case metrics
}

/// What a call answered off the loop (a reload, a target check) replies.
enum DeferredAnswer {
    case reply(any Codable & Sendable)
    case error(VarlinkError)
}

/// Maps a call to its outcome given what is published now. No IO.
package struct VarlinkDispatcher {
    var serviceInfo: ServiceInfo
    /// `GetNetworkNamespace`'s answer: reachd's network namespace, read once at start.
    var networkNamespace: NetworkNamespaceReply

    /// A dispatcher answering as `serviceInfo`, in the namespace whose inode is `networkNamespace`.
    package init(serviceInfo: ServiceInfo, networkNamespace: UInt64? = nil) {
        self.serviceInfo = serviceInfo
        self.networkNamespace = NetworkNamespaceReply(inode: networkNamespace)
    }

    /// - Parameter privileged: the caller is root or reachd's own user: it may reload.
    package func outcome(for call: AnyVarlinkCall, publication: Publication, privileged: Bool) -> CallOutcome {
        let parameters = call.parameters ?? [:]
        if call.wantsUpgrade { return .error(.invalidParameter(parameter: "upgrade")) }
        guard let dot = call.method.lastIndex(of: "."), dot != call.method.startIndex else {
            return .error(.interfaceNotFound(interface: call.method))
        }
        let interface = String(call.method[..<dot])

        switch interface {
        case ReachabilityInterface.name:
            switch call.method {
            case ReachabilityInterface.Method.getStatus:
                if let unknown = parameters.keys.sorted().first { return .error(.invalidParameter(parameter: unknown)) }
                return .reply(publication.statusReply)
            case ReachabilityInterface.Method.listInterfaces:
                if let unknown = parameters.keys.sorted().first { return .error(.invalidParameter(parameter: unknown)) }
                return .reply(ListInterfacesReply(interfaces: publication.state.interfaces))
            case ReachabilityInterface.Method.getMetrics:
                if let unknown = parameters.keys.sorted().first { return .error(.invalidParameter(parameter: unknown)) }
                return .metrics
            case ReachabilityInterface.Method.getNetworkNamespace:
                if let unknown = parameters.keys.sorted().first { return .error(.invalidParameter(parameter: unknown)) }
                return .reply(networkNamespace)
            case ReachabilityInterface.Method.checkTarget:
                do {
                    return .checkTarget(try TargetParameters.target(validating: parameters))
                } catch {
                    return .error(error)
                }
            case ReachabilityInterface.Method.subscribeTarget:
                let target: Target
                do {
                    target = try TargetParameters.target(validating: parameters)
                } catch {
                    return .error(error)
                }
                guard call.wantsMore else { return .error(.expectedMore) }
                return .subscribeTarget(target)
            case ReachabilityInterface.Method.checkConnectivity:
                if let unknown = parameters.keys.sorted().first(where: { $0 != "interface" }) {
                    return .error(.invalidParameter(parameter: unknown))
                }
                switch parameters["interface"] {
                case nil, .null?: return .checkConnectivity(interface: nil)
                case let .string(name)?: return .checkConnectivity(interface: name)
                default: return .error(.invalidParameter(parameter: "interface"))
                }
            case ReachabilityInterface.Method.subscribe:
                let validated: SubscribeParameters
                do {
                    validated = try SubscribeParameters(validating: parameters)
                } catch {
                    return .error(error)
                }
                guard call.wantsMore else { return .error(.expectedMore) }
                return .subscribe(validated.filter)
            case ReachabilityInterface.Method.subscribeSummary:
                if let unknown = parameters.keys.sorted().first { return .error(.invalidParameter(parameter: unknown)) }
                guard call.wantsMore else { return .error(.expectedMore) }
                return .subscribeSummary
            default:
                return .error(.methodNotFound(method: call.method))
            }

        case SystemdServiceInterface.name:
            if let unknown = parameters.keys.sorted().first { return .error(.invalidParameter(parameter: unknown)) }
            switch call.method {
            case SystemdServiceInterface.Method.ping:
                return .reply(NoParameters())
            case SystemdServiceInterface.Method.reload:
                return privileged ? .reload : .error(.permissionDenied)
            default:
                return .error(.methodNotFound(method: call.method))
            }

        case VarlinkService.name:
            switch call.method {
            case VarlinkService.Method.getInfo:
                if let unknown = parameters.keys.sorted().first { return .error(.invalidParameter(parameter: unknown)) }
                return .reply(serviceInfo)
            case VarlinkService.Method.getInterfaceDescription:
                if let unknown = parameters.keys.sorted().first(where: { $0 != "interface" }) {
                    return .error(.invalidParameter(parameter: unknown))
                }
                guard let name = parameters["interface"]?.stringValue else {
                    return .error(.invalidParameter(parameter: "interface"))
                }
                switch name {
                case ReachabilityInterface.name: return .reply(InterfaceDescriptionReply(description: IDL.text))
                case VarlinkService.name: return .reply(InterfaceDescriptionReply(description: VarlinkService.idl))
                case SystemdServiceInterface.name: return .reply(InterfaceDescriptionReply(description: SystemdServiceInterface.idl))
                default: return .error(.interfaceNotFound(interface: name))
                }
            default:
                return .error(.methodNotFound(method: call.method))
            }

        default:
            return .error(.interfaceNotFound(interface: interface))
        }
    }
}
