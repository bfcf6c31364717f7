import ArgumentParser
import ReachabilityCore
import ReachClient
import ReachProtocol

extension Reachctl {
    /// `reachctl check HOST|ADDRESS`: can this host reach that one?
    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Can this host reach a host name or an address? (as you: your routing rules apply)",
            discussion: """
                Prints the verdict, the reason when not reachable, and one line per address \
                (family, verdict, interface, gateway). reachd resolves the name; nothing is \
                sent to the target. Exit codes: 0 reachable; 1 not reachable (or reachd \
                answered with an error); 2 reachd cannot be reached.
                """
        )

        @ParentCommand var root: Reachctl
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var answerTimeout: AnswerTimeoutOptions
        @Flag(help: "Print the answer as JSON (with --watch: one compact line per answer).") var json = false
        @Flag(help: "Keep watching: print the answer again each time it changes (Ctrl-C to stop).") var watch = false
        @Argument(help: ArgumentHelp(
            "A host name or an IPv4 / IPv6 address; a link-local IPv6 one with its interface, as for ping (fe80::1%eth0).",
            valueName: "host-or-address"
        ))
        var target: String

        func validate() throws {
            if case let .failure(problem) = Target.parse(host: target) { throw ValidationError("'\(shown(target))' is \(problem)") }
        }

        func run() async throws {
            if watch { return try await watchTarget() }
            let reply: TargetReply
            do {
                reply = try await connection.client(root, timeout: answerTimeout.duration).checkTarget(Target(host: target)!)
            } catch {
                throw fail(error)
            }
            printLine(json ? ReachProtocolTools.json(reply, pretty: true) : Self.describe(reply))
            if reply.path.status != .satisfied { throw ExitCode.failure }
        }

        private func watchTarget() async throws {
            do {
                for try await reply in connection.client(root, timeout: answerTimeout.duration).subscribe(target: Target(host: target)!) {
                    printLine(json ? ReachProtocolTools.json(reply, pretty: false) : Self.describe(reply))
                }
            } catch {
                throw fail(error)
            }
        }

        /// `api.example.com: reachable via eth0 (wiredEthernet)` then a table of addresses.
        static func describe(_ reply: TargetReply) -> String {
            let path = reply.path
            var verdict: String
            switch path.status {
            case .satisfied:
                // Say so when the path ignores that interface: status would not list it.
                let ignored = path.addresses.contains { $0.reachable && $0.interface == path.primaryInterface && $0.ignoredForPath == true }
                // Through NAT64 when the address that answers was reached at its synthesized address.
                let nat64 = path.addresses.first { $0.reachable }?.nat64Prefix
                verdict = "reachable via \(path.primaryInterface.map(shown) ?? "?") (\(path.primaryInterfaceType?.rawValue ?? "?")"
                    + (ignored ? ", ignored for the path" : "") + (nat64.map { ", through NAT64 \(shown($0))" } ?? "") + ")"
            case .requiresConnection: verdict = "reachable once \(path.primaryInterface.map(shown) ?? "?") connects"
            case .unsatisfied: verdict = "not reachable: \(path.unsatisfiedReason?.rawValue ?? "?")"
            }
            let flags = path.flags.names
            if !flags.isEmpty { verdict += " [\(flags.joined(separator: ", "))]" }
            var lines = ["\(shown(reply.target)): \(verdict)"]
            guard !path.addresses.isEmpty else { return lines[0] }
            var rows = [["ADDRESS", "FAMILY", "VERDICT", "INTERFACE", "GATEWAY", "SOURCE"]]
            for address in path.addresses {
                rows.append([
                    shown(address.address), address.family.rawValue,
                    address.reachable ? "reachable" + (address.viaNAT64.map { " via NAT64 \(shown($0))" } ?? "") : address.unsatisfiedReason?.rawValue ?? "?",
                    address.interface.map(shown) ?? "-", address.gateway.map(shown) ?? (address.interface == nil ? "-" : "on-link"),
                    address.source.map(shown) ?? "-",
                ])
            }
            lines.append(table(rows))
            return lines.joined(separator: "\n")
        }
    }
}
