// An NWPathMonitor app, ported to reachd: the same shape, `PathMonitor` for `NWPathMonitor`.
//
//   path-watch [--wifi | --no-cellular] [--count N]
//
// Prints every path reachd publishes (the first one at once), and says so when reachd
// cannot be reached; exits after N paths when asked. REACHD_SOCKET picks the socket.
import Dispatch
import Glibc
import ReachClient
import Synchronization

var arguments = CommandLine.arguments.dropFirst()
var count = Int.max
let monitor: PathMonitor
switch arguments.first {
case "--wifi": monitor = PathMonitor(requiredInterfaceType: .wifi); arguments.removeFirst()
case "--no-cellular": monitor = PathMonitor(prohibitedInterfaceTypes: [.cellular]); arguments.removeFirst()
default: monitor = PathMonitor()
}
if arguments.first == "--count", arguments.count == 2, let number = Int(arguments.last!), number > 0 {
    count = number
} else if !arguments.isEmpty {
    fail("usage: path-watch [--wifi | --no-cellular] [--count N]")
}
let remaining = Atomic<Int>(count)

monitor.pathUpdateHandler = { path in
    if path.status == .satisfied {
        let facts = [
            "satisfied via \(path.primaryInterface ?? "?") (\(path.primaryInterfaceType?.rawValue ?? "?"))",
            "gateways [\(path.gateways.joined(separator: " "))]",
            path.supportsIPv4 ? "ipv4" : nil, path.supportsIPv6 ? "ipv6" : nil, path.supportsDNS ? "dns" : nil,
            path.isExpensive ? "expensive" : nil, "connectivity \(path.connectivity.rawValue)",
        ]
        say(facts.compactMap { $0 }.joined(separator: ", "))
    } else {
        say("\(path.status.rawValue): \(path.unsatisfiedReason?.rawValue ?? "?")")
    }
    if remaining.subtract(1, ordering: .relaxed).newValue == 0 { exit(0) }
}
monitor.unavailableHandler = { error in
    say("reachd unavailable: \(error)")
}
monitor.start(queue: .main)
dispatchMain()


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
