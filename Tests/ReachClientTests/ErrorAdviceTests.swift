import Foundation
import ReachClient
import ReachConfiguration
import ReachProtocol
import TestSupport
import XCTest

/// Every error reachd can send has a sentence of its own and, where one exists, a fix.
final class ErrorAdviceTests: XCTestCase {
    /// One `error Name (fields)` declaration of an IDL.
    struct Declared {
        var name: String
        var fields: [(name: String, type: String)]
    }

    /// The errors an IDL declares, read from its text (`interface NAME` names them).
    static func declaredErrors(in idl: String) -> [Declared] {
        let lines = idl.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let interface = lines.first(where: { $0.hasPrefix("interface ") })?.dropFirst("interface ".count) else { return [] }
        return lines.filter { $0.hasPrefix("error ") }.map { line in
            let declaration = line.dropFirst("error ".count)
            let name = declaration.prefix { $0 != " " && $0 != "(" }
            let inside = declaration.drop { $0 != "(" }.dropFirst().prefix { $0 != ")" }
            let fields = inside.split(separator: ",").map { field in
                let parts = field.split(separator: ":").map { $0.trimmingCharacters(in: .whitespaces) }
                return (name: parts[0], type: parts[1])
            }
            return Declared(name: "\(interface).\(name)", fields: fields)
        }
    }

    /// The IDL files reachd serves: io.reachd.Reachability as the repository has it, and
    /// org.varlink.service's errors as reachd declares them.
    static func servedIDLs() throws -> [String] {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/ReachProtocol/io.reachd.Reachability.varlink").standardized
        return [try String(contentsOf: file, encoding: .utf8), VarlinkService.idl, SystemdServiceInterface.idl]
    }

    /// A sample value per declared type, distinctive enough to be found in the sentence.
    static func sample(_ field: (name: String, type: String)) -> JSONValue? {
        switch field.type.replacingOccurrences(of: "?", with: "") {
        case "string": return .string("sample-\(field.name)")
        case "int": return .integer(4242)
        case "bool": return .bool(true)
        default: return nil
        }
    }

    /// Every declared error, with every field given (and, for optional fields, also without
    /// them): a sentence that names none of the error's names, that shows every value it
    /// was given, and a fix. A new error without its sentence fails here.
    func testEveryDeclaredErrorHasASentenceAndAFix() throws {
        let declared = try Self.servedIDLs().flatMap(Self.declaredErrors(in:))
        XCTAssertGreaterThanOrEqual(Set(declared.map(\.name)).count, 12, "the IDLs declare \(declared.map(\.name))")
        for error in declared {
            var full: JSONObject = [:]
            for field in error.fields {
                guard let value = Self.sample(field) else { return XCTFail("\(error.name): no sample for \(field.type)") }
                full[field.name] = value
            }
            let required = full.filter { key, _ in error.fields.contains { $0.name == key && !$0.type.hasPrefix("?") } }
            for parameters in Set([full, required]) {
                let advice = ErrorAdvice.forRemote(VarlinkError(name: error.name, parameters: parameters), serverVersion: "9.9.9")
                let shortName = String(error.name.split(separator: ".").last!)
                XCTAssertFalse(advice.explanation.contains(shortName), "\(error.name): \(advice.explanation)")
                XCTAssertFalse(advice.explanation.contains("answered with the error"), "\(error.name) has no sentence of its own")
                for (key, value) in parameters {
                    let shown: String
                    switch value {
                    case let .string(text): shown = text
                    case let .integer(number): shown = "\(number)"
                    default: continue
                    }
                    XCTAssertTrue(advice.explanation.contains(shown), "\(error.name): \(key) is not in \"\(advice.explanation)\"")
                }
                XCTAssertNotNil(advice.fix, "\(error.name) has no fix")
                XCTAssertFalse(advice.explanation.contains("\n") || (advice.fix ?? "").contains("\n"), "\(error.name): one line each")
            }
        }
    }

    /// What each error tells the user to do: the file, key and command where there is one.
    func testFixesNameTheFileKeyAndCommand() {
        func advice(_ name: String, _ parameters: JSONObject = [:]) -> ErrorAdvice {
            ErrorAdvice.forRemote(VarlinkError(name: name, parameters: parameters), clientVersion: "1.2.0", serverVersion: "1.1.0")
        }
        let error = ReachabilityInterface.Error.self
        let cases: [(ErrorAdvice, explanation: [String], fix: [String])] = [
            (advice(error.probingDisabled), ["probing is not configured", "[probe]", "/etc/reachd/reachd.toml", "url or https-url"],
             ["url = \"http://", "[probe] of /etc/reachd/reachd.toml", "IPAddressAllow=", "systemctl restart reachd"]),
            (advice(error.reloadRefused, ["reason": .string("reachd.toml:3: log.level: no such level")]),
             ["keeps running on the old one", "reachd.toml:3: log.level: no such level"],
             ["reachd --check-config /etc/reachd/reachd.toml", "systemctl reload reachd"]),
            (advice(error.noSuchInterface, ["interface": .string("eth7")]), ["no interface named eth7"], ["reachctl interfaces"]),
            (advice(error.nothingToProbe), ["no interface has a usable route"], ["reachctl status"]),
            (advice(error.nothingToProbe, ["interface": .string("wg0")]), ["wg0 carries no usable route"], ["reachctl interfaces"]),
            (advice(error.limitReached, ["limit": .string("connectivity checks per minute per user"), "maximum": .integer(6)]),
             ["limit of 6 connectivity checks per minute per user"], ["wait and try again"]),
            (advice(error.connectionLimitReached, ["limit": .string("connections per user"), "maximum": .integer(1024)]),
             ["limit of 1024 connections per user"], ["close some of this user's other connections"]),
            (advice(VarlinkError.Name.methodNotFound, ["method": .string("io.reachd.Reachability.Future")]),
             ["does not know the method io.reachd.Reachability.Future", "older than this client"],
             ["reachd is 1.1.0, this client 1.2.0", "systemctl restart reachd"]),
            (advice(VarlinkError.Name.interfaceNotFound, ["interface": .string("io.reachd.Next")]),
             ["does not serve the interface io.reachd.Next"], ["reachd is 1.1.0, this client 1.2.0"]),
            (advice(VarlinkError.Name.invalidParameter, ["parameter": .string("requiredInterfaceType")]),
             ["did not accept the parameter requiredInterfaceType"], ["check the value given for requiredInterfaceType", "reachd is 1.1.0"]),
            (advice(VarlinkError.Name.permissionDenied), ["only root and reachd's own user"], ["sudo systemctl reload reachd"]),
        ]
        for (advice, explanation, fix) in cases {
            for part in explanation { XCTAssertTrue(advice.explanation.contains(part), "\"\(part)\" not in \"\(advice.explanation)\"") }
            for part in fix { XCTAssertTrue(advice.fix?.contains(part) == true, "\"\(part)\" not in \"\(advice.fix ?? "nil")\"") }
        }
        // Without reachd's version the advice says it is unknown, never a made-up one.
        let unknown = ErrorAdvice.forRemote(.methodNotFound(method: "x.Y"), clientVersion: "1.2.0")
        XCTAssertTrue(unknown.fix?.contains("reachd is of an unknown version, this client 1.2.0") == true, unknown.fix ?? "nil")
    }

    /// The file and keys the ProbingDisabled fix names are the ones reachd reads: a file
    /// that sets the key the advice names turns probing on.
    func testProbingFixNamesKeysTheConfigurationAccepts() throws {
        XCTAssertEqual(ErrorAdvice.Configuration.path, ReachdConfiguration.defaultPath)
        let directory = try Paths.makeTemporaryDirectory("advice-keys")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (key, url) in zip(ErrorAdvice.Configuration.probeKeys, ["http://192.0.2.80/generate_204", "https://192.0.2.80/generate_204"]) {
            let path = directory + "/reachd.toml"
            try "[\(ErrorAdvice.Configuration.probeTable)]\n\(key) = \"\(url)\"\n".write(toFile: path, atomically: true, encoding: .utf8)
            let loaded = try ConfigurationLoader.load(explicitPath: path)
            XCTAssertTrue(loaded.configuration.probe.isEnabled, "\(key) did not turn probing on")
        }
        XCTAssertFalse(try ConfigurationLoader.load(explicitPath: nil, defaultPath: directory + "/absent.toml").configuration.probe.isEnabled,
                       "probing is off by default, as ProbingDisabled says")
    }

    /// Connection failures: what to start, which socket setting or group lets this user in.
    func testConnectionFailureAdvice() {
        let system = SocketLocation.systemPath
        let cases: [(ErrorAdvice, fix: [String])] = [
            (.daemonNotRunning(socketPath: system, connectionRefused: false), ["systemctl start reachd.socket"]),
            (.daemonNotRunning(socketPath: system, connectionRefused: true), ["systemctl restart reachd.socket"]),
            (.daemonNotRunning(socketPath: "/tmp/r/s", connectionRefused: false), ["reachd with --socket /tmp/r/s", "$REACHD_SOCKET"]),
            (.daemonNotRunning(socketPath: "/tmp/r/s", connectionRefused: true), ["reachd with --socket /tmp/r/s"]),
            (.daemonNotRunning(socketPath: "/run/user/1000/reachd/s", connectionRefused: false, userDefaultPath: "/run/user/1000/reachd/s"),
             ["systemctl start reachd.socket", "reachd --socket /run/user/1000/reachd/s"]),
            (.permissionDenied(socketPath: system, deniedPath: system, access: PathAccess(mode: 0o660, owner: "root", group: "netdev"), user: "alice"),
             ["the socket \(system) is rw-rw---- (0660) root:netdev", "usermod -aG netdev alice", "SocketMode=0666 in reachd.socket"]),
            (.permissionDenied(socketPath: system, deniedPath: system, access: PathAccess(mode: 0o600, owner: "root", group: "root"), user: "alice"),
             ["the socket \(system) is rw------- (0600) root:root", "SocketMode=0666 in reachd.socket"]),
            (.permissionDenied(socketPath: system, deniedPath: "/run/reachd", access: PathAccess(mode: 0o750, owner: "root", group: "reach"), user: "bob"),
             ["the directory /run/reachd is rwxr-x--- (0750) root:reach", "usermod -aG reach bob", "DirectoryMode=0755"]),
            (.permissionDenied(socketPath: system, deniedPath: "/run/reachd", access: nil, user: "bob"), ["ls -ld /run/reachd"]),
            (.permissionDenied(socketPath: system, deniedPath: nil, access: nil, user: "bob"), ["ls -ld \(system)"]),
            (.timedOut, ["systemctl status reachd"]),
            (.connectionClosed, ["journalctl -u reachd"]),
            (.protocolError(socketPath: system, clientVersion: "1.2.0"), ["reachd --version", "1.2.0"]),
        ]
        for (advice, fix) in cases {
            for part in fix { XCTAssertTrue(advice.fix?.contains(part) == true, "\"\(part)\" not in \"\(advice.fix ?? "nil")\"") }
        }
        // The permission a group member lacks decides: write on a socket, search on a directory.
        let searchable = ErrorAdvice.permissionDenied(socketPath: system, deniedPath: "/run/reachd", access: PathAccess(mode: 0o760, owner: "root", group: "g"), user: "u")
        XCTAssertFalse(searchable.fix!.contains("usermod"), "the group may not search 0760: joining it does not help")
    }

    /// The error's own description carries the sentence, with the name kept for searches;
    /// the advice of a refused permission reads the real path's mode and group.
    func testClientErrorCarriesTheSentence() throws {
        let path = "/run/reachd/io.reachd.Reachability"
        let error = ReachClientError.remoteError(socketPath: path, name: ReachabilityInterface.Error.probingDisabled, parameters: [:])
        XCTAssertEqual("\(error)", "reachd at \(path) answered with an error: probing is not configured: the [probe] table of /etc/reachd/reachd.toml sets no url or https-url (io.reachd.Reachability.ProbingDisabled)")
        XCTAssertEqual(error.recoverySuggestion, error.advice().fix)

        let directory = try Paths.makeTemporaryDirectory("advice-mode")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socket = directory + "/s"
        XCTAssertTrue(FileManager.default.createFile(atPath: socket, contents: nil, attributes: [.posixPermissions: 0o640]))
        let owner = String(cString: getpwuid(getuid())!.pointee.pw_name)
        let group = String(cString: getgrgid(getgid())!.pointee.gr_name)
        let denied = ReachClientError.permissionDenied(socketPath: socket, deniedPath: socket)
        XCTAssertTrue(denied.recoverySuggestion?.contains("the socket \(socket) is rw-r----- (0640) \(owner):\(group)") == true, denied.recoverySuggestion ?? "nil")
    }
}
