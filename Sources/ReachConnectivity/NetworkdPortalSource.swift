import LinuxSystem
import NIOCore
import ReachabilityCore
import ReachTargets

/// When systemd-networkd is asked again what captive portals its links learned, and which
/// answer counts. Pure: `NetworkdPortalSource` carries it out.
struct NetworkdPortalQueries: Equatable {
    /// What the kernel showed when networkd was last asked.
    struct Question: Equatable {
        /// The links, whole: a link that came or went, or changed, is asked about again.
        var links: [Int32: Link]
        /// The addresses: a DHCP lease comes with one.
        var addresses: [InterfaceAddress]
    }

    /// networkd's latest answer, by interface index (empty before the first).
    private(set) var portals: [Int32: String] = [:]
    /// The links and addresses networkd was last asked about; nil before the first question.
    private var askedAbout: Question?

    /// The kernel's view is now `links` and `addresses`: whether to ask networkd, which is
    /// only when they differ from what it was last asked about.
    mutating func shouldAsk(links: [Int32: Link], addresses: [InterfaceAddress]) -> Bool {
        let question = Question(links: links, addresses: addresses)
        if askedAbout == question { return false }
        askedAbout = question
        return true
    }

    /// networkd answered `answer` (nil: it could not be asked): whether the portals changed.
    mutating func answered(_ answer: [Int32: String]?) -> Bool {
        guard let answer, answer != portals else { return false }
        portals = answer
        return true
    }
}

/// systemd-networkd's word on the captive portals its links learned (`NetworkdPortals`),
/// asked on `BlockingWork` when the kernel's links or addresses changed
/// (`NetworkdPortalQueries`). Lives on the event loop.
final class NetworkdPortalSource {
    /// networkd's Varlink socket; nil when `[captive-portal] networkd` is off.
    private let socket: String?
    private let work: BlockingWork
    private var queries = NetworkdPortalQueries()
    /// Called on the loop when networkd's answer changed `portals`.
    var onChange: () -> Void = {}

    /// A source that asks networkd at `socket` (nil: never) on `work`.
    init(socket: String?, work: BlockingWork) {
        self.socket = socket
        self.work = work
    }

    /// The captive-portal API URIs networkd's links learned, by interface index.
    var portals: [Int32: String] { queries.portals }

    /// The kernel's view changed: asks networkd, off the loop, when its socket exists and
    /// links or addresses changed since it was last asked.
    func update(_ snapshot: NetworkSnapshot) {
        // Compared before the socket is looked for: a stat per kernel change is not free.
        guard let socket, queries.shouldAsk(links: snapshot.links, addresses: snapshot.addresses) else { return }
        guard FileSystem.exists(socket) else { return }
        work.run { NetworkdPortals.ask(socket: socket) }.assumeIsolated().whenSuccess { [self] answer in
            if queries.answered(answer) { onChange() }
        }
    }
}
