import Glibc
import LinuxSystem
import NIOCore
import NIOPosix
import ReachProtocol
import SystemPackage

/// Why a call to reachd failed. Every description is one line naming the socket.
public enum ReachClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing listens at the socket path: no such file, or a stale socket that refuses.
    case daemonNotRunning(socketPath: String, connectionRefused: Bool)
    /// This process may not connect: `deniedPath` is the directory it may not search, or
    /// the socket it may not write to (nil when that could not be found out).
    case permissionDenied(socketPath: String, deniedPath: String?)
    /// Connecting failed for another reason (path too long, too many open files, …).
    case connectionFailed(socketPath: String, reason: String)
    /// The daemon closed the connection before answering in full.
    case connectionClosed(socketPath: String)
    /// The daemon sent something that is not a valid reply.
    case protocolError(socketPath: String, message: String)
    /// The daemon answered with a Varlink error.
    case remoteError(socketPath: String, name: String, parameters: JSONObject)
    /// The daemon did not answer in time (stopped, or stuck): it accepted the connection
    /// and sent nothing, or its listen backlog stayed full for the whole timeout.
    case timedOut(socketPath: String, after: Duration)

    /// The socket the failed call went to.
    public var socketPath: String {
        switch self {
        case let .daemonNotRunning(path, _), let .permissionDenied(path, _), let .connectionFailed(path, _), let .connectionClosed(path),
            let .protocolError(path, _), let .remoteError(path, _, _), let .timedOut(path, _):
            return path
        }
    }

    /// The Varlink error, for `.remoteError`.
    public var varlinkError: VarlinkError? {
        if case let .remoteError(_, name, parameters) = self { return VarlinkError(name: name, parameters: parameters) }
        return nil
    }

    /// One line, e.g. `cannot reach reachd at /run/reachd/io.reachd.Reachability: no such socket (is reachd running?)`.
    public var description: String {
        switch self {
        case let .daemonNotRunning(path, refused):
            let what = refused ? "connection refused" : "no such socket"
            return "cannot reach reachd at \(path): \(what) (is reachd running?)"
        case let .permissionDenied(path, denied):
            switch denied {
            case nil: return "cannot reach reachd at \(path): permission denied"
            case path: return "cannot reach reachd at \(path): permission denied (no write permission on the socket)"
            case let directory?: return "cannot reach reachd at \(path): permission denied (may not search \(directory))"
            }
        case let .connectionFailed(path, reason):
            return "cannot reach reachd at \(path): \(reason)"
        case let .connectionClosed(path):
            return "reachd at \(path) closed the connection"
        case let .protocolError(path, message):
            return "unexpected reply from reachd at \(path): \(message)"
        case let .remoteError(path, name, parameters):
            let advice = ErrorAdvice.forRemote(VarlinkError(name: name, parameters: parameters))
            return "reachd at \(path) answered with an error: \(advice.explanation) (\(name))"
        case let .timedOut(path, after):
            let (seconds, attoseconds) = after.components
            let span = attoseconds == 0 ? "\(seconds) s" : "\(seconds * 1000 + attoseconds / 1_000_000_000_000_000) ms"
            return "reachd at \(path) did not answer within \(span) (is it stopped or stuck?)"
        }
    }

    /// What the error means and what to do next. `serverVersion` (reachd's, from
    /// `org.varlink.service.GetInfo`) completes the advice on errors a version mismatch
    /// explains; for a permission error the refusing path is looked at now (its mode and owners).
    public func advice(serverVersion: String? = nil) -> ErrorAdvice {
        switch self {
        case let .daemonNotRunning(path, refused):
            let userDefault = SocketLocation.userPath(environment: SocketLocation.currentEnvironment(), uid: SocketLocation.currentUID())
            return .daemonNotRunning(socketPath: path, connectionRefused: refused, userDefaultPath: userDefault)
        case let .permissionDenied(path, denied):
            return .permissionDenied(
                socketPath: path, deniedPath: denied, access: denied.flatMap(PathAccess.init(lookingAt:)), user: PathAccess.currentUserName()
            )
        case let .connectionFailed(_, reason):
            return ErrorAdvice(reason)
        case .connectionClosed:
            return .connectionClosed
        case let .protocolError(path, _):
            return .protocolError(socketPath: path)
        case let .remoteError(_, name, parameters):
            return .forRemote(VarlinkError(name: name, parameters: parameters), serverVersion: serverVersion)
        case .timedOut:
            return .timedOut
        }
    }

    /// The next step, if there is one (`advice().fix`).
    public var recoverySuggestion: String? { advice().fix }

    /// Whether reachd's version would complete the advice: an error a client newer or older
    /// than the daemon gets.
    public var isVersionSensitive: Bool {
        switch varlinkError {
        case .methodNotFound?, .interfaceNotFound?, .methodNotImplemented?, .invalidParameter?: return true
        default: return false
        }
    }

    /// Maps whatever NIO or decoding threw to a client error.
    init(_ error: any Error, socketPath: String) {
        switch error {
        case let error as ReachClientError:
            self = error
        case let error as IOError:
            self = Self(errno: Errno(rawValue: error.errnoCode), socketPath: socketPath)
        case let error as NIOConnectionError:
            // Connect errors for a single target: report the underlying one.
            if let underlying = error.connectionErrors.first?.error {
                self = Self(underlying, socketPath: socketPath)
            } else {
                self = .connectionFailed(socketPath: socketPath, reason: "\(error)")
            }
        case let error as SocketAddressError:
            self = .connectionFailed(socketPath: socketPath, reason: "invalid socket path (\(error))")
        case let error as ChannelError where error == .eof || error == .ioOnClosedChannel || error == .alreadyClosed:
            self = .connectionClosed(socketPath: socketPath)
        case let error as VarlinkFramingError:
            self = .protocolError(socketPath: socketPath, message: "\(error)")
        case let error as DecodingError:
            self = .protocolError(socketPath: socketPath, message: "undecodable reply (\(error))")
        default:
            self = .connectionFailed(socketPath: socketPath, reason: "\(error)")
        }
    }

    /// What a failed connect or send means to a caller of reachd; for EACCES, `deniedPath`
    /// finds which path refused.
    init(errno: Errno, socketPath: String, deniedPath: (String) -> String? = FileSystem.firstDenied(onTheWayTo:)) {
        switch errno {
        case .permissionDenied: self = .permissionDenied(socketPath: socketPath, deniedPath: deniedPath(socketPath))
        case .noSuchFileOrDirectory, .notDirectory: self = .daemonNotRunning(socketPath: socketPath, connectionRefused: false)
        case .connectionRefused: self = .daemonNotRunning(socketPath: socketPath, connectionRefused: true)
        case .brokenPipe, .connectionReset: self = .connectionClosed(socketPath: socketPath)
        default: self = .connectionFailed(socketPath: socketPath, reason: errno.description)
        }
    }
}

extension PathAccess {
    /// The access of `path` (not following a last symbolic link), nil when it cannot be read.
    init?(lookingAt path: String) {
        guard let info = try? Stat(FilePath(path), followTargetSymlink: false) else { return nil }
        self.init(mode: UInt32(info.mode.permissions.rawValue), owner: Self.userName(info.userID.rawValue), group: Self.groupName(info.groupID.rawValue))
    }

    /// The name of this process's user (its number when it has none).
    static func currentUserName() -> String { userName(getuid()) }

    static func userName(_ uid: uid_t) -> String {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.pw_name else { return "\(uid)" }
        return String(cString: name)
    }

    static func groupName(_ gid: gid_t) -> String {
        var entry = Glibc.group()
        var result: UnsafeMutablePointer<Glibc.group>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getgrgid_r(gid, &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.gr_name else { return "\(gid)" }
        return String(cString: name)
    }
}
