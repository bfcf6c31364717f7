import LinuxSystem
import ReachabilityCore
import ReachConfiguration
import ReachConnectivity
import SystemPackage

/// What a configuration needs of the machine beyond being well formed: its pinned
/// certificate files readable certificates, its metrics `listen` bindable and not reachd's
/// own socket. `--check-config`, a reload and the start all call
/// `DaemonOptions.checkStartRequirements`, so that none of them accepts what another refuses.
package struct StartRequirementProblems: Error, Sendable, Equatable, CustomStringConvertible {
    /// Each problem in one line, naming the table and key, and the file or address.
    package var problems: [String]

    /// One problem per line.
    package var description: String { problems.joined(separator: "\n") }
    /// The problems on one line, for `STATUS=`.
    package var summary: String { problems.joined(separator: "; ") }
}

/// The TLS contexts the configured HTTPS endpoints need, loaded by the check (the start
/// serves with them).
package struct StartResources: Sendable {
    /// The HTTPS probe's trust, when `[probe] https-url` is set.
    package var probeTLS: TLSTrust?
    /// The captive-portal API's trust, when `[captive-portal] fetch-api` is on.
    package var apiTLS: TLSTrust?
}

/// Who may hold the metrics address already, when the check finds it in use.
package enum MetricsListener: Sendable, Equatable {
    /// Start: nothing of reachd's listens yet, so an address in use is someone else's.
    case none
    /// A reload: this reachd listens on this address (nil: on none); it is its own and not
    /// checked again, and any other address in use is someone else's.
    case thisProcess(MetricsListenAddress?)
    /// `--check-config`: a reachd answering on the Varlink socket may be the one listening
    /// there; its restart frees the address, so in use is not a problem then.
    case runningReachd
}

extension DaemonOptions {
    /// Loads the pinned certificates the configured HTTPS endpoints use (each file opened
    /// without blocking, refused unless regular, bounded in size, parsed as certificates)
    /// and checks `[metrics] listen` (`MetricsListenCheck`). Every problem is reported.
    package func checkStartRequirements(metricsListener: MetricsListener) throws(StartRequirementProblems) -> StartResources {
        var problems: [String] = []
        var resources = StartResources()
        do {
            (resources.probeTLS, resources.apiTLS) = try connectivity.makeTLS()
        } catch {
            problems.append(error.description)
        }
        if let listen = metrics.listen, metricsListener != .thisProcess(listen) {
            var facts = MetricsListenCheck.facts(listen, varlinkSocket: socketPath)
            if metricsListener == .runningReachd, let connection = try? UnixSocket.connect(to: socketPath, timeout: .seconds(1)) {
                facts.reachdMayHoldIt = true
                try? connection.close()
            }
            if let problem = MetricsListenCheck.problem(listen, facts: facts) { problems.append("[metrics] listen: \(problem)") }
        }
        if !problems.isEmpty { throw StartRequirementProblems(problems: problems) }
        return resources
    }
}

/// Whether the metrics endpoint can listen where `[metrics] listen` says. Pure; `facts`
/// gathers what it decides on.
enum MetricsListenCheck {
    /// What the file system and the network stack say about a listen address.
    struct Facts: Equatable {
        /// What was found at the address.
        var place: Place
        /// Whether a running reachd may be what holds the address (`--check-config` while it runs).
        var reachdMayHoldIt = false
    }

    /// What was found at a TCP address or a Unix path.
    enum Place: Equatable {
        /// A TCP address: the error of a test `bind(2)` there, if it failed.
        case tcp(bindError: Errno?)
        /// A Unix socket path.
        case unix(UnixFacts)
    }

    /// What is on the way to a Unix socket path.
    struct UnixFacts: Equatable {
        /// Its directory, with symbolic links resolved.
        enum Directory: Equatable {
            case directory
            case missing
            case notADirectory
            case unreadable(Errno)
        }

        var directory: Directory
        /// What is at the path itself now.
        var existing: FileSystem.Kind
        /// Whether the path, canonical, is the Varlink socket's path, canonical.
        var isVarlinkSocket: Bool
        /// Whether a server accepts connections on an existing socket there.
        var answering: Bool
    }

    /// Why `address` cannot be listened on, or nil when it can.
    package static func problem(_ address: MetricsListenAddress, facts: Facts) -> String? {
        switch (address, facts.place) {
        case let (.tcp, .tcp(error?)):
            switch error {
            case .addressNotAvailable: return "cannot bind \(address): no interface has this address"
            case .addressInUse: return facts.reachdMayHoldIt ? nil : "cannot bind \(address): the port is in use"
            case .permissionDenied: return "cannot bind \(address): a port below 1024 needs CAP_NET_BIND_SERVICE"
            default: return "cannot bind \(address): \(error)"
            }
        case (.tcp, .tcp(nil)):
            return nil
        case let (.unix(path), .unix(unix)):
            let directory = FileSystem.directory(containing: path)
            if unix.isVarlinkSocket { return "\(path) is reachd's own Varlink socket" }
            switch unix.directory {
            case .directory: break
            case .missing: return "\(path): the directory \(directory) does not exist"
            case .notADirectory: return "\(path): \(directory) is not a directory"
            case let .unreadable(error): return "\(path): \(directory): \(error)"
            }
            switch unix.existing {
            case .nothing: return nil
            case .socket:
                // A stale socket is replaced; a live one may be the running reachd's.
                return unix.answering && !facts.reachdMayHoldIt ? "\(path): another server listens on this socket" : nil
            case .regularFile, .directory, .other: return "\(path) exists and is not a socket"
            }
        default:
            return "\(address): no facts"  // unreachable: `facts` answers for the address it is given
        }
    }

    /// Gathers the facts: a test bind for TCP; for a Unix path, its directory, what is
    /// there, whether it is (canonically) `varlinkSocket`, and whether a server answers on it.
    package static func facts(_ address: MetricsListenAddress, varlinkSocket: String) -> Facts {
        switch address {
        case let .tcp(ip, port):
            do {
                try checkTCPBind(address: ip.bytes, port: UInt16(port))
                return Facts(place: .tcp(bindError: nil))
            } catch {
                return Facts(place: .tcp(bindError: error))
            }
        case let .unix(path):
            let directory: UnixFacts.Directory
            var canonical = path
            do {
                let resolved = try FileSystem.canonicalPath(FileSystem.directory(containing: path))
                directory = (try? FileSystem.kind(of: resolved)) == .directory ? .directory : .notADirectory
                canonical = resolved + (resolved == "/" ? "" : "/") + FileSystem.name(of: path)
            } catch .noSuchFileOrDirectory {
                directory = .missing
            } catch .notDirectory {
                directory = .notADirectory
            } catch {
                directory = .unreadable(error)
            }
            let existing = (try? FileSystem.kind(of: path)) ?? .nothing
            var answering = false
            if existing == .socket, let connection = try? UnixSocket.connect(to: path, timeout: .seconds(1)) {
                answering = true
                try? connection.close()
            }
            let varlink = (try? FileSystem.canonicalPath(FileSystem.directory(containing: varlinkSocket)))
                .map { $0 + ($0 == "/" ? "" : "/") + FileSystem.name(of: varlinkSocket) } ?? varlinkSocket
            return Facts(place: .unix(UnixFacts(directory: directory, existing: existing, isVarlinkSocket: canonical == varlink, answering: answering)))
        }
    }
}

extension ConnectivitySettings {
    /// The TLS contexts the configured HTTPS endpoints need (the probe's, the portal API's),
    /// with their pinned certificates loaded; a file that cannot be used is an error naming
    /// the table and the file.
    func makeTLS() throws(DaemonFailure) -> (probe: TLSTrust?, api: TLSTrust?) {
        func make(_ policy: TrustPolicy, _ table: String) throws(DaemonFailure) -> TLSTrust {
            do {
                return try TLSTrust(evaluator: TrustEvaluator(policy: policy))
            } catch {
                throw DaemonFailure(description: "[\(table)] pinned-certificates: \(error)")
            }
        }
        return (
            probe: probe.httpsURL == nil ? nil : try make(probe.trust, "probe.trust"),
            api: captivePortal.fetchAPI ? try make(captivePortal.trust, "captive-portal.trust") : nil
        )
    }
}
