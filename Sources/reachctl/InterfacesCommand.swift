import ArgumentParser
import ReachabilityCore
import ReachClient
import ReachProtocol

extension Reachctl {
    /// `reachctl interfaces`: every interface reachd knows.
    struct Interfaces: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List every interface, ignored ones included.")

        @ParentCommand var root: Reachctl
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var answerTimeout: AnswerTimeoutOptions
        @Flag(help: "Print the list as JSON.") var json = false

        func run() async throws {
            let interfaces: [InterfaceDescription]
            do {
                interfaces = try await connection.client(root, timeout: answerTimeout.duration).interfaces()
            } catch {
                throw fail(error)
            }
            if json {
                printLine(ReachProtocolTools.json(ListInterfacesReply(interfaces: interfaces), pretty: true))
                return
            }
            var rows = [["INDEX", "NAME", "TYPE", "KIND", "STATE", "CARRIER", "IGNORED", "CONNECTIVITY", "ADDRESSES"]]
            for interface in interfaces {
                let addresses = interface.addresses.map { address in
                    "\(shown(address.address))/\(address.prefixLength)" + (address.usable ? "" : "*")
                }
                rows.append([
                    "\(interface.index)", shown(interface.name), interface.type.rawValue, interface.kind.map(shown) ?? "-",
                    shown(interface.operState) + (interface.up ? "" : ",admin-down"),
                    interface.carrier ? "yes" : "no", interface.ignored ? "yes" : "no", Self.connectivity(of: interface),
                    addresses.isEmpty ? "-" : addresses.joined(separator: " "),
                ])
            }
            printLine(table(rows))
            if interfaces.contains(where: { $0.addresses.contains { !$0.usable } }) {
                printLine("(* not usable for internet traffic: link-local, tentative or DAD-failed)")
            }
            if interfaces.contains(where: { $0.ipv4Connectivity != .unknown || $0.ipv6Connectivity != .unknown }) {
                printLine("(CONNECTIVITY: IPv4/IPv6 probe verdicts, or NetworkManager's; - not probed)")
            }
            for interface in interfaces {
                if let portal = interface.captivePortal { printLine("\(shown(interface.name)): portal: \(PortalFormatter.describe(portal))") }
                if interface.isExpensive { printLine("\(shown(interface.name)): expensive\(ExpenseFormatter.reason(interface.expensiveReason, driver: interface.driver))") }
                if let quality = interface.quality {
                    printLine("\(shown(interface.name)): link quality \(quality.linkQuality.rawValue) (\(LinkQualityFormatter.details(quality)))")
                }
                if interface.role == .clat { printLine("\(shown(interface.name)): CLAT (464XLAT): provides IPv4, translated onto the IPv6 uplink") }
                for prefix in interface.nat64Prefixes ?? [] {
                    printLine("\(shown(interface.name)): NAT64 prefix \(prefix) (\(prefix.source.rawValue))")
                }
                for gateway in interface.gateways ?? [] {
                    printLine("\(shown(interface.name)): gateway \(shown(gateway.address)) \(gateway.state.rawValue.uppercased()) since \(StatusFormatter.timestamp(gateway.since))")
                }
            }
        }

        /// "full/-": the IPv4 and IPv6 verdicts, "-" where none was reached; "limited (dataStall
        /// since …)" when a stall made it limited; "portal/- (NetworkManager)" when its check spoke.
        static func connectivity(of interface: InterfaceDescription) -> String {
            let cause = interface.connectivityCause.map {
                ConnectivityFormatter.cause($0, since: interface.connectivityCauseSince, destinations: interface.connectivityCauseDestinations)
            }
            if interface.connectivityCause == .dataStall, let cause { return "limited (\(cause))" }
            let verdicts = [interface.ipv4Connectivity, interface.ipv6Connectivity].map { $0 == .unknown ? "-" : $0.rawValue }.joined(separator: "/")
            return verdicts + (cause.map { " (\($0))" } ?? "")
        }
    }
}
