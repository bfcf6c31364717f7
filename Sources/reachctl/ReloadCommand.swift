import ArgumentParser
import ReachClient
import ReachProtocol

extension Reachctl {
    /// `reachctl reload`: reachd re-reads its configuration; returns when that is done.
    struct Reload: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make reachd re-read its configuration; return once it is applied or refused.",
            discussion: """
                Calls io.systemd.service.Reload, which root and reachd's own user may call. \
                reachd.service runs it as ExecReload=, so `systemctl reload reachd` returns \
                after the reload and fails when the configuration was refused. \
                Exit codes: 0 applied; 1 refused (the reason is printed; reachd keeps the \
                running configuration) or not permitted; 2 reachd cannot be reached.
                """
        )

        @ParentCommand var root: Reachctl
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var answerTimeout: AnswerTimeoutOptions

        func run() async throws {
            do {
                try await connection.client(root, timeout: answerTimeout.duration).reload()
            } catch {
                if case let .remoteError(_, name, parameters) = error {
                    if name == ReachabilityInterface.Error.reloadRefused {
                        printError("reachctl: reload refused, reachd keeps its running configuration: \(parameters["reason"]?.stringValue.map(shownLines) ?? "no reason given")")
                        throw ExitCode.failure
                    }
                    if name == VarlinkError.Name.permissionDenied {
                        printError("reachctl: reload: permission denied (only root and reachd's own user may reload)")
                        throw ExitCode.failure
                    }
                }
                throw fail(error)
            }
        }
    }
}
