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
            var rows = [["INDEX", "NAME", "TYPE", "KIND", "STATE", "CARRIER", "IGNORED", "ADDRESSES"]]
            for interface in interfaces {
                let addresses = interface.addresses.map { address in
                    "\(address.address)/\(address.prefixLength)" + (address.usable ? "" : "*")
                }
                rows.append([
                    "\(interface.index)", interface.name, interface.type.rawValue, interface.kind ?? "-",
                    interface.operState + (interface.up ? "" : ",admin-down"),
                    interface.carrier ? "yes" : "no", interface.ignored ? "yes" : "no",
                    addresses.isEmpty ? "-" : addresses.joined(separator: " "),
                ])
            }
            printLine(table(rows))
            if interfaces.contains(where: { $0.addresses.contains { !$0.usable } }) {
                printLine("(* not usable for internet traffic: link-local, tentative or DAD-failed)")
            }
        }
    }
}
