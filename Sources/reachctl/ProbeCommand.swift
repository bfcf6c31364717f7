import ArgumentParser
import ReachabilityCore
import ReachClient
import ReachProtocol

extension Reachctl {
    /// `reachctl probe [--interface IF]`: run a connectivity check now.
    struct Probe: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run a connectivity check now and print what it found.",
            discussion: """
                reachd probes every interface it checks (or only --interface) with the \
                endpoints of its [probe] configuration, and answers when done. A check \
                already running is joined. At most 6 per minute per user. Probes run over \
                the interfaces a route to the internet uses (up, with carrier and a usable \
                address). Exit codes: 0 checked; 69 (EX_UNAVAILABLE) nothing could be \
                checked, with the reason on stderr (probing not configured, no interface \
                with a usable route, the named one is not such an interface or does not \
                exist); 1 reachd refused otherwise (limit reached); 2 reachd cannot be reached.
                """
        )

        @ParentCommand var root: Reachctl
        @OptionGroup var connection: ConnectionOptions
        @Option(help: ArgumentHelp("Check only this interface.", valueName: "name")) var interface: String?
        @Option(name: .customLong("timeout"), help: ArgumentHelp("Give up after this many seconds.", valueName: "seconds"))
        var seconds: Double = 60
        @Flag(help: "Print the interfaces as JSON.") var json = false

        func validate() throws {
            guard seconds > 0 else { throw ValidationError("--timeout must be more than 0 seconds") }
        }

        func run() async throws {
            let interfaces: [InterfaceDescription]
            do {
                interfaces = try await connection.client(root, timeout: .milliseconds(Int(seconds * 1000)))
                    .checkConnectivity(interface: interface)
            } catch {
                if let reason = NothingChecked(error, interface: interface) {
                    printError("reachctl: \(reason.message)")
                    printHint(for: error)
                    throw NothingChecked.exitCode
                }
                throw fail(error)
            }
            if json {
                printLine(ReachProtocolTools.json(ListInterfacesReply(interfaces: interfaces), pretty: true))
                return
            }
            let checked = interfaces.filter { ($0.name == interface || interface == nil) && $0.lastChecked != nil }
            if checked.isEmpty {  // a reachd that answers without saying why
                printError("reachctl: \(NothingChecked.noRoute(interface: interface).message)")
                throw NothingChecked.exitCode
            }
            for described in checked {
                var line = "\(shown(described.name)): IPv4 \(described.ipv4Connectivity.rawValue), IPv6 \(described.ipv6Connectivity.rawValue)"
                if let portal = described.captivePortal { line += "; portal: \(PortalFormatter.describe(portal))" }
                printLine(line)
            }
        }
    }
}

/// Why `reachctl probe` checked nothing, from reachd's refusal.
enum NothingChecked: Equatable {
    case probingDisabled
    case noSuchInterface(String)
    case noRoute(interface: String?)

    /// EX_UNAVAILABLE (sysexits.h): what was asked for cannot be done here now.
    static let exitCode = ExitCode(69)

    /// Nil for an error that is not about what could be checked.
    init?(_ error: ReachClientError, interface: String?) {
        guard case let .remoteError(_, name, _) = error else { return nil }
        switch name {
        case ReachabilityInterface.Error.probingDisabled: self = .probingDisabled
        case ReachabilityInterface.Error.noSuchInterface: self = .noSuchInterface(interface ?? "")
        case ReachabilityInterface.Error.nothingToProbe: self = .noRoute(interface: interface)
        default: return nil
        }
    }

    /// One line saying why, in plain words.
    var message: String {
        switch self {
        case .probingDisabled:
            let advice = ErrorAdvice.forRemote(.other(name: ReachabilityInterface.Error.probingDisabled, parameters: [:]))
            return "nothing was checked: \(advice.explanation)"
        case let .noSuchInterface(name):
            return "nothing was checked: there is no interface named \(shown(name))"
        case .noRoute(interface: nil):
            return "nothing was checked: no interface has a usable route to the internet (up, with carrier, a usable address and a route)"
        case let .noRoute(interface?):
            return "\(shown(interface)) was not checked: it carries no usable route to the internet (probes run only over interfaces a route to the internet uses, up, with carrier and a usable address)"
        }
    }
}
