import ReachClient
import ReachProtocol

/// The line after a failure's: what to do next, when there is something (`ErrorAdvice`).
func printHint(for error: ReachClientError) {
    let serverVersion = error.isVersionSensitive ? daemonVersion(at: error.socketPath) : nil
    guard let fix = error.advice(serverVersion: serverVersion).fix else { return }
    printError("reachctl: hint: \(shown(fix))")
}

/// reachd's version from `org.varlink.service.GetInfo`, asked on a connection of its own
/// (nil when it does not answer within a second).
func daemonVersion(at socket: String) -> String? {
    guard case let .reply(reply) = VarlinkConnection.call(VarlinkService.Method.getInfo, parameters: [:], socket: socket, timeout: .seconds(1)),
          reply.error == nil
    else { return nil }
    return reply.parameters?["version"]?.stringValue
}
