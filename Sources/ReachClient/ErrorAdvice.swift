import ReachProtocol

/// What a failed call means to the person who made it, and what to do next: one sentence,
/// and the fix where there is one. Pure: everything it says comes from its inputs.
public struct ErrorAdvice: Sendable, Hashable {
    /// What happened, in plain words (one line, no error names).
    public var explanation: String
    /// The next step (a command to run, a key to set), or nil when none would help.
    public var fix: String?

    /// An explanation and, optionally, a fix.
    public init(_ explanation: String, fix: String? = nil) {
        self.explanation = explanation
        self.fix = fix
    }

    /// The configuration file reachd reads when not told otherwise, and the keys the
    /// advice names (a test holds them to what the configuration really accepts).
    package enum Configuration {
        /// reachd's default configuration file.
        package static let path = "/etc/reachd/reachd.toml"
        /// The table of the connectivity checks.
        package static let probeTable = "probe"
        /// The endpoint keys: either one turns probing on.
        package static let probeKeys = ["url", "https-url"]
    }

    /// The systemd units the advice names.
    package enum Units {
        /// The socket that starts reachd.
        package static let socket = "reachd.socket"
        /// The service.
        package static let service = "reachd"
    }

    /// What a Varlink error reachd sent means. `clientVersion` is this client's,
    /// `serverVersion` reachd's when known (for the errors a version mismatch explains).
    package static func forRemote(
        _ error: VarlinkError, clientVersion: String = ReachdVersion.string, serverVersion: String? = nil
    ) -> ErrorAdvice {
        let versions = "reachd is \(serverVersion ?? "of an unknown version"), this client \(clientVersion)"
        let versionFix = "update or restart reachd (systemctl restart \(Units.service)) so that it matches this client: \(versions)"
        switch error {
        case let .methodNotFound(method):
            return ErrorAdvice("reachd does not know the method \(method): it is older than this client", fix: versionFix)
        case let .interfaceNotFound(interface):
            return ErrorAdvice("reachd does not serve the interface \(interface): it is older than this client, or another service", fix: versionFix)
        case let .methodNotImplemented(method):
            return ErrorAdvice("reachd declares \(method) but does not implement it", fix: versionFix)
        case let .invalidParameter(parameter):
            return ErrorAdvice(
                "reachd did not accept the parameter \(parameter) (missing, of the wrong type, or a value it does not know)",
                fix: "check the value given for \(parameter); if it is right, reachd may be older than this client: \(versions)"
            )
        case .expectedMore:
            return ErrorAdvice("the method only streams: it must be called with more = true", fix: "a client must ask for a stream here; this one did not (a bug in the client)")
        case .permissionDenied:
            return ErrorAdvice(
                "only root and reachd's own user may make this call",
                fix: "run it as root, e.g. sudo systemctl reload \(Units.service)"
            )
        case let .other(name, parameters):
            return forReachability(name: name, parameters: parameters) ?? ErrorAdvice("reachd answered with the error \(name)")
        }
    }

    /// The errors of io.reachd.Reachability; nil for a name it does not declare.
    static func forReachability(name: String, parameters: JSONObject) -> ErrorAdvice? {
        func string(_ key: String) -> String? { parameters[key]?.stringValue }
        func number(_ key: String) -> String {
            switch parameters[key] {
            case let .integer(value)?: return "\(value)"
            case let .number(value)?: return "\(value)"
            default: return "?"
            }
        }
        let config = Configuration.path
        switch name {
        case ReachabilityInterface.Error.probingDisabled:
            let keys = Configuration.probeKeys
            return ErrorAdvice(
                "probing is not configured: the [\(Configuration.probeTable)] table of \(config) sets no \(keys.joined(separator: " or "))",
                fix: "set \(keys[0]) = \"http://HOST/generate_204\" (an endpoint you run; \(keys[1]) optional) in [\(Configuration.probeTable)] of \(config), "
                    + "allow its addresses to reachd (IPAddressAllow= in a drop-in: systemctl edit \(Units.service)), "
                    + "then run: systemctl restart \(Units.service) ([\(Configuration.probeTable)] is read at start, a reload leaves it)"
            )
        case ReachabilityInterface.Error.noSuchInterface:
            return ErrorAdvice(
                "there is no interface named \(string("interface") ?? "?")",
                fix: "reachctl interfaces lists the interfaces reachd knows"
            )
        case ReachabilityInterface.Error.nothingToProbe:
            if let interface = string("interface") {
                return ErrorAdvice(
                    "\(interface) carries no usable route to the internet (probes run only over interfaces a route to the internet uses: up, with carrier and a usable address)",
                    fix: "reachctl interfaces shows its state; without --interface, reachctl probe checks the interfaces that carry such a route"
                )
            }
            return ErrorAdvice(
                "no interface has a usable route to the internet (up, with carrier, a usable address and a route)",
                fix: "reachctl status says why the path is not satisfied"
            )
        case ReachabilityInterface.Error.connectionLimitReached:
            return ErrorAdvice(
                "reachd refused the connection: its limit of \(number("maximum")) \(string("limit") ?? "connections") is reached",
                fix: "close some of this user's other connections to reachd (watching clients, reachctl watch) and try again"
            )
        case ReachabilityInterface.Error.limitReached:
            return ErrorAdvice(
                "reachd refused the call: its limit of \(number("maximum")) \(string("limit") ?? "calls") is reached",
                fix: "wait and try again (the limits are reachd's own, per user)"
            )
        case ReachabilityInterface.Error.reloadRefused:
            return ErrorAdvice(
                "reachd refused the new configuration and keeps running on the old one: \(string("reason") ?? "no reason given")",
                fix: "correct \(config) (reachd --check-config \(config) checks it), then run: systemctl reload \(Units.service)"
            )
        default:
            return nil
        }
    }

    /// No socket at `socketPath`, or nothing listening on it (`connectionRefused`).
    /// `userDefaultPath` is this user's own default socket: a client falls back to it when
    /// the system's socket is absent, so the system's reachd is the likelier fix there.
    package static func daemonNotRunning(socketPath: String, connectionRefused: Bool, userDefaultPath: String? = nil) -> ErrorAdvice {
        let systemSocket = socketPath == SocketLocation.systemPath
        if !systemSocket, !connectionRefused, socketPath == userDefaultPath {
            return ErrorAdvice(
                "no reachd listens there: neither the system's socket (\(SocketLocation.systemPath)) nor this user's exists",
                fix: "start the system's: systemctl start \(Units.socket) (enable --now: at every boot too); or run one of your own: reachd --socket \(socketPath)"
            )
        }
        switch (connectionRefused, systemSocket) {
        case (false, true):
            return ErrorAdvice("no reachd listens there: the socket does not exist", fix: "start it: systemctl start \(Units.socket) (enable --now: at every boot too)")
        case (true, true):
            return ErrorAdvice("nothing listens on the socket (left behind by a reachd that is gone)", fix: "systemctl restart \(Units.socket)")
        case (false, false):
            return ErrorAdvice("no reachd listens there: the socket does not exist", fix: "start reachd with --socket \(socketPath), or point reachctl at the socket reachd uses (--socket, $\(SocketLocation.environmentVariable))")
        case (true, false):
            return ErrorAdvice("nothing listens on the socket (left behind by a reachd that is gone)", fix: "start reachd with --socket \(socketPath)")
        }
    }

    /// This process may not connect to `socketPath`: `deniedPath` refused (a directory it
    /// may not search, or the socket it may not write to), described by `access` when it
    /// could be read. `user` is who is asking.
    package static func permissionDenied(socketPath: String, deniedPath: String?, access: PathAccess?, user: String) -> ErrorAdvice {
        guard let deniedPath else {
            return ErrorAdvice("this user may not connect to the socket", fix: "see who may: ls -ld \(socketPath) and its directories")
        }
        let isSocket = deniedPath == socketPath
        let what = isSocket ? "the socket \(deniedPath)" : "the directory \(deniedPath)"
        guard let access else {
            return ErrorAdvice("\(what) does not let this user in", fix: "see who may: ls -ld \(deniedPath)")
        }
        let described = "\(what) is \(access.modeString) \(access.owner):\(access.group)"
        // Write (socket) or search (directory) permission, for the group and for others.
        let needed: UInt32 = isSocket ? 0o2 : 0o1
        let setting = isSocket ? "SocketMode=0666" : "DirectoryMode=0755"
        let shipped = "\(setting) in \(Units.socket) (the shipped setting: systemctl edit \(Units.socket), then systemctl restart \(Units.socket)) lets every user ask"
        if access.mode & (needed << 3) != 0 {
            return ErrorAdvice(
                "only \(access.owner) and the group \(access.group) may connect",
                fix: "\(described): join its group (as root: usermod -aG \(access.group) \(user), then log in again), or \(shipped)"
            )
        }
        return ErrorAdvice("only \(access.owner) may connect", fix: "\(described): \(shipped)")
    }

    /// reachd did not answer within `after`.
    package static let timedOut = ErrorAdvice(
        "reachd accepted the call but did not answer in time (stopped, or stuck)",
        fix: "see its state: systemctl status \(Units.service) (journalctl -u \(Units.service) for its log)"
    )

    /// reachd closed the connection before answering.
    package static let connectionClosed = ErrorAdvice(
        "reachd closed the connection before answering (it stopped, or the request broke one of its limits)",
        fix: "see why in its log: journalctl -u \(Units.service) -n 20"
    )

    /// The server's reply was not one reachd sends.
    package static func protocolError(socketPath: String, clientVersion: String = ReachdVersion.string) -> ErrorAdvice {
        ErrorAdvice(
            "what answers at \(socketPath) is not a reachd this client understands",
            fix: "check that the socket is reachd's and that reachd --version matches this client (\(clientVersion))"
        )
    }
}

/// Who may use a path: its permission bits and owners, by name.
package struct PathAccess: Sendable, Hashable {
    /// The permission bits (`0o666` for a socket anyone may write to).
    package var mode: UInt32
    /// The owner's user name (or number).
    package var owner: String
    /// The group's name (or number).
    package var group: String

    /// A path's access.
    package init(mode: UInt32, owner: String, group: String) {
        self.mode = mode & 0o7777
        self.owner = owner
        self.group = group
    }

    /// The mode as `ls` shows it without the type, with the octal value: `rw-rw---- (0660)`.
    package var modeString: String {
        let letters = ["r", "w", "x"]
        var text = ""
        for shift in stride(from: 6, through: 0, by: -3) {
            for (bit, letter) in letters.enumerated() {
                text += mode & (UInt32(0o4 >> bit) << UInt32(shift)) != 0 ? letter : "-"
            }
        }
        let octal = String(mode & 0o777, radix: 8)
        return "\(text) (0\(octal))"
    }
}
