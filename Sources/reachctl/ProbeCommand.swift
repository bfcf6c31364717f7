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
                already running is joined. At most 6 per minute per user. Exit codes: \
                0 checked; 1 reachd refused (probing not configured, no such interface, \
                limit reached); 2 reachd cannot be reached.
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
                throw fail(error)
            }
            if json {
                printLine(ReachProtocolTools.json(ListInterfacesReply(interfaces: interfaces), pretty: true))
                return
            }
            let checked = interfaces.filter { ($0.name == interface || interface == nil) && $0.lastChecked != nil }
            if checked.isEmpty { printLine("no interface was checked (none has a usable route)") }
            for described in checked {
                var line = "\(shown(described.name)): IPv4 \(described.ipv4Connectivity.rawValue), IPv6 \(described.ipv6Connectivity.rawValue)"
                if let portal = described.captivePortal { line += "; portal: \(PortalFormatter.describe(portal))" }
                printLine(line)
            }
        }
    }
}
