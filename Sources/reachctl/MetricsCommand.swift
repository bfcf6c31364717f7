import ArgumentParser
import ReachClient

extension Reachctl {
    /// `reachctl metrics`: the Prometheus exposition, over Varlink.
    struct Metrics: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print reachd's metrics in Prometheus' text format.",
            discussion: """
                The same text reachd's optional HTTP endpoint and textfile ([metrics] in \
                reachd.toml) serve, asked over the Varlink socket (GetMetrics), for a look \
                without Prometheus. Exit codes: 0 printed; 2 reachd cannot be reached.
                """
        )

        @ParentCommand var root: Reachctl
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            do {
                let text = try await connection.client(root).metrics()
                // Label values are escaped by reachd; this guards a terminal against any other.
                print(shownLines(text), terminator: "")
            } catch {
                throw fail(error)
            }
        }
    }
}
