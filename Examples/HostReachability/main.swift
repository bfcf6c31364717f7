// An AFNetworkReachabilityManager app, ported to reachd: one manager per host, its status
// known as soon as `startMonitoring()` returns, every change with its reason.
//
//   host-reachability [--watch] HOST|ADDRESS...
//
// Prints each host's status (and why it is not reachable); with --watch keeps running
// and prints every change. REACHD_SOCKET picks the socket.
import Dispatch
import Glibc
import ReachClient

var hosts = Array(CommandLine.arguments.dropFirst())
let watching = hosts.first == "--watch"
if watching { hosts.removeFirst() }
guard !hosts.isEmpty else {
    fail("usage: host-reachability [--watch] HOST|ADDRESS...")
}

var managers: [ReachabilityManager] = []
for host in hosts {
    guard let manager = ReachabilityManager(domain: host) else {
        fail("host-reachability: \(host): not a host name or address")
    }
    if watching {
        manager.setReachabilityStatusChangeBlock { change in
            say("\(host): \(ReachabilityManager.localizedString(for: change.status)) — \(change)")
        }
    }
    manager.startMonitoring()
    if !watching {
        let why = manager.lastChange?.unsatisfiedReason.map { " (\($0.rawValue))" } ?? ""
        say("\(host): \(manager.localizedNetworkReachabilityStatusString)\(why)")
    }
    managers.append(manager)
}
if watching { dispatchMain() }

/// Says what is wrong on standard error and exits with EX_USAGE.
@Sendable func fail(_ message: String) -> Never {
    let line = Array((message + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(64)
}

/// One line on standard output, flushed at once (it may be a pipe). Interface names and
/// portal URLs are anyone's text: written under the rule reachctl uses.
@Sendable func say(_ text: String) {
    print(UntrustedText.escaped(text))
    fflush(nil)
}
