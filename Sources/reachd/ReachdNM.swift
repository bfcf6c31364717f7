import ArgumentParser
import Logging
import ReachNetworkManagerBus
import ReachProtocol
import ReachSystemd

/// `reachd-nm`: NetworkManager's read-only D-Bus answer from reachd, for hosts without
/// NetworkManager (run by `Multicall` when called by that name).
struct ReachdNM: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reachd-nm",
        abstract: "Answer NetworkManager's D-Bus API, read-only, from reachd's path.",
        discussion: """
            Owns org.freedesktop.NetworkManager on the system bus ($DBUS_SYSTEM_BUS_ADDRESS, \
            else the standard socket) and answers State, Connectivity, Metered and the primary \
            connection from reachd (--socket, else $REACHD_SOCKET, else the system socket), so \
            that apps that ask only NetworkManager (snapd, unattended-upgrades, nmcli, nm-online, \
            libnm) hear reachd. Every method that would change something fails at once. It \
            exits 3 when another program (NetworkManager) has the name, 0 when NetworkManager takes it, and 1 when the bus fails. See \
            docs/networkmanager.md.
            """,
        version: ReachdVersion.string
    )

    @Option(name: .long, help: "reachd's Varlink socket (default: $REACHD_SOCKET, else the system socket).")
    var socket: String?

    /// What NetworkManager's `Version` says: reachd-nm's own, marked so that reachd (and
    /// anyone) can tell it is not NetworkManager.
    static var managerVersion: String { ReachdVersion.string + NetworkManagerReading.reachdAnswerVersionSuffix }

    func run() throws {
        var logger = Logger(label: "reachd-nm") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .info
        let socket = socket ?? SocketLocation.clientDefault()
        let bus: NetworkManagerBus
        do {
            bus = try NetworkManagerBus()
        } catch {
            logger.error("cannot reach the system bus: \(error)")
            throw ExitCode(1)
        }
        do {
            try NetworkManagerBridge(bus: bus, socket: socket, version: Self.managerVersion, logger: logger).run()
        } catch .nameTaken {
            logger.notice("\(NetworkManagerBridge.Exit.nameTaken)")
        } catch .nameRefused(let error) {
            logger.error("\(NetworkManagerBridge.Exit.nameRefused(error))")
            // Its unit does not restart on 3 (RestartPreventExitStatus=): the owner stays.
            throw ExitCode(3)
        } catch {
            logger.error("\(error)")
            throw ExitCode(1)
        }
    }
}
