import FoundationEssentials
import Glibc
import LinuxSystem

/// Where the reachd socket lives, for the daemon and for clients.
///
/// The functions are pure in (environment, uid, fileExists) so the rules can be tested
/// as a table; the defaulted arguments read the real process state.
public enum SocketLocation {
    /// The socket's file name: the interface name, as Varlink services name theirs.
    public static let socketName = ReachabilityInterface.name
    /// Environment variable that overrides the path for daemon and clients alike.
    public static let environmentVariable = "REACHD_SOCKET"
    /// The system service's socket.
    public static let systemPath = "/run/reachd/" + socketName

    /// The path reachd listens on when not told otherwise.
    ///
    /// `REACHD_SOCKET`; else `$RUNTIME_DIRECTORY/io.reachd.Reachability` (systemd's
    /// `RuntimeDirectory=`); else the system path for root; else the per-user path.
    package static func daemonDefault(
        environment: [String: String] = currentEnvironment(),
        uid: UInt32 = currentUID()
    ) -> String {
        if let path = nonEmpty(environment[environmentVariable]) { return path }
        if let directory = nonEmpty(environment["RUNTIME_DIRECTORY"]) {
            // systemd may list several directories separated by colons; the first is ours.
            let first = directory.split(separator: ":", omittingEmptySubsequences: true).first.map(String.init) ?? directory
            return join(first, socketName)
        }
        if uid == 0 { return systemPath }
        return userPath(environment: environment, uid: uid)
    }

    /// Whether something may be at `path` (it exists, or this user may not look): the
    /// default test of `clientDefault`.
    public static func mayExist(_ path: String) -> Bool {
        FileSystem.mayExist(path)
    }

    /// The path clients connect to when not told otherwise.
    ///
    /// `REACHD_SOCKET`; else the system path if that socket may exist (or for root, whose
    /// daemon uses it); else the per-user path. "May exist" includes a system socket this
    /// user may not reach: connecting then says "permission denied" and where, instead of
    /// trying the per-user path and reporting that one missing.
    public static func clientDefault(
        environment: [String: String] = currentEnvironment(),
        uid: UInt32 = currentUID(),
        systemSocketMayExist: (String) -> Bool = mayExist(_:)
    ) -> String {
        if let path = nonEmpty(environment[environmentVariable]) { return path }
        if uid == 0 || systemSocketMayExist(systemPath) { return systemPath }
        return userPath(environment: environment, uid: uid)
    }

    /// `$XDG_RUNTIME_DIR/reachd/io.reachd.Reachability`, else `/tmp/reachd-<uid>/io.reachd.Reachability`.
    public static func userPath(environment: [String: String], uid: UInt32) -> String {
        if let directory = nonEmpty(environment["XDG_RUNTIME_DIR"]) {
            return join(join(directory, "reachd"), socketName)
        }
        return "/tmp/reachd-\(uid)/" + socketName
    }

    /// This process's environment.
    public static func currentEnvironment() -> [String: String] {
        ProcessInfo.processInfo.environment
    }

    /// This process's real user id.
    public static func currentUID() -> UInt32 { UInt32(getuid()) }

    private static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }

    private static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
