import ArgumentParser
import FoundationEssentials
import ReachClient
import ReachProtocol

extension Reachctl {
    /// `reachctl watch`: a line per change until interrupted.
    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the path, then a line per change (Ctrl-C to stop).")

        @ParentCommand var root: Reachctl
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var answerTimeout: AnswerTimeoutOptions
        @OptionGroup var filter: FilterOptions
        @Flag(help: "Print one JSON object per line.") var json = false

        func run() async throws {
            do {
                for try await reply in connection.client(root, timeout: answerTimeout.duration).subscribe(filter: filter.filter) {
                    if json {
                        printLine(ReachProtocolTools.json(reply, pretty: false))
                    } else {
                        printLine(StatusFormatter.line(reply, timestamp: Date().formatted(.iso8601)))
                    }
                }
            } catch {
                throw fail(error)
            }
        }
    }
}
