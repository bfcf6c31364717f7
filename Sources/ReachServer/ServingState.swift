import LinuxSystem
import NIOCore

/// Where the server is in its life: before its first listener, serving on one, or shut
/// down. Pure: it says which listener to close and whether a listener's closing is
/// fatal; `ServerCore` does the closing.
enum ServingState {
    /// No listener adopted yet.
    case starting
    /// Accepting on `listener`, which listens on `socketFile` when this server created that
    /// file (device + inode): only that file is ever removed, never one another daemon put
    /// at the path since.
    case serving(listener: any Channel, socketFile: FileIdentity?)
    /// `shutdown()` ran: nothing more is accepted; the socket file is kept to be removed.
    case shutDown(socketFile: FileIdentity?)

    /// What adopting a listener asks of the server.
    struct Adoption {
        /// The first listener: connectivity starts probing now.
        var isFirst: Bool
        /// The listener to close: the one replaced, or the new one when the server is shut down.
        var toClose: (any Channel)?
    }

    /// The socket file this server created, if it did.
    var socketFile: FileIdentity? {
        switch self {
        case .starting: return nil
        case let .serving(_, socketFile), let .shutDown(socketFile): return socketFile
        }
    }

    /// Whether a new connection may be admitted (not once shut down).
    var admitsConnections: Bool {
        if case .shutDown = self { return false }
        return true
    }

    /// Serves on `listener` from now on, instead of any listener before it. Connections the
    /// old one accepted stay open: they are not its children to close.
    mutating func adopt(_ listener: any Channel, socketFile: FileIdentity?) -> Adoption {
        switch self {
        case .starting:
            self = .serving(listener: listener, socketFile: socketFile)
            return Adoption(isFirst: true, toClose: nil)
        case let .serving(replaced, _):
            self = .serving(listener: listener, socketFile: socketFile)
            return Adoption(isFirst: false, toClose: replaced)
        case .shutDown:
            return Adoption(isFirst: false, toClose: listener)
        }
    }

    /// Whether `listener` closing means the daemon lost its socket: only the listener being
    /// served on, and not in shutdown or after a replacement.
    func isFatal(closing listener: any Channel) -> Bool {
        if case let .serving(current, _) = self { return current === listener }
        return false
    }

    /// Stops serving; returns the listener to close, if there is one.
    mutating func shutDown() -> (any Channel)? {
        let listener: (any Channel)?
        if case let .serving(current, _) = self { listener = current } else { listener = nil }
        self = .shutDown(socketFile: socketFile)
        return listener
    }
}
