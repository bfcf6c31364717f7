import Foundation
import TestSupport
import XCTest

/// Two namespaces joined by a veth pair: `host` (where reachd runs) and `router`.
///
/// Neither end is called veth*: that name is ignored by reachd's default policy.
final class VethTopology {
    let host: NetworkNamespace
    let router: NetworkNamespace
    /// `/etc/netns/HOST`, once `hostFiles` wrote it; removed with the topology.
    private var netnsFiles: String?

    init() throws {
        host = try NetworkNamespace(prefix: "reachd-host")
        router = try NetworkNamespace(prefix: "reachd-router")
        try sh("ip", "link", "add", "eth0", "netns", host.name, "type", "veth", "peer", "name", "eth0", "netns", router.name)
        try host.ip("link", "set", "eth0", "up")
        try router.ip("link", "set", "eth0", "up")
        try router.ip("addr", "add", "10.77.0.1/24", "dev", "eth0")
        try router.ip("addr", "add", "fd77::1/64", "dev", "eth0", "nodad")
    }

    /// Files `ip netns exec` binds over `/etc` for programs run in the host namespace (reachd
    /// among them): `hosts`, `nsswitch.conf` and, if given, `resolv.conf`.
    func hostFiles(hosts: String, nsswitch: String, resolvConf: String? = nil) throws {
        let directory = "/etc/netns/\(host.name)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        netnsFiles = directory
        try hosts.write(toFile: directory + "/hosts", atomically: true, encoding: .utf8)
        try nsswitch.write(toFile: directory + "/nsswitch.conf", atomically: true, encoding: .utf8)
        if let resolvConf { try resolvConf.write(toFile: directory + "/resolv.conf", atomically: true, encoding: .utf8) }
    }

    deinit {
        if let netnsFiles { try? FileManager.default.removeItem(atPath: netnsFiles) }
    }

    /// Adds another veth pair, `hostName` in the host and `routerName` in the router, with
    /// `prefix.1/24` on the router side and, if `hostAddress`, `prefix.2/24` on the host side.
    func addPair(hostName: String, routerName: String, prefix: String, hostAddress: Bool = true) throws {
        try sh("ip", "link", "add", hostName, "netns", host.name, "type", "veth", "peer", "name", routerName, "netns", router.name)
        try host.ip("link", "set", hostName, "up")
        try router.ip("link", "set", routerName, "up")
        try router.ip("addr", "add", "\(prefix).1/24", "dev", routerName)
        if hostAddress { try host.ip("addr", "add", "\(prefix).2/24", "dev", hostName) }
    }

    /// Gives the host an IPv4 address and, optionally, a default route via the router.
    func configureIPv4(defaultRoute: Bool = true) throws {
        try host.ip("addr", "add", "10.77.0.2/24", "dev", "eth0")
        if defaultRoute { try host.ip("route", "add", "default", "via", "10.77.0.1", "dev", "eth0") }
    }

    /// Gives the host a global IPv6 address (no DAD wait) and, optionally, a default route.
    func configureIPv6(defaultRoute: Bool = true) throws {
        try host.ip("addr", "add", "fd77::2/64", "dev", "eth0", "nodad")
        if defaultRoute { try host.ip("-6", "route", "add", "default", "via", "fd77::1", "dev", "eth0") }
    }

    /// Waits until DAD is done on both ends' link-local addresses: a router advertisement
    /// needs a link-local source, and a host past DAD to take it.
    func waitForLinkLocal() async throws {
        for _ in 0..<100 {
            let tentative = try host.ip("-6", "addr", "show", "tentative") + router.ip("-6", "addr", "show", "tentative")
            let linkLocal = try router.ip("-6", "addr", "show", "dev", "eth0", "scope", "link")
            if tentative.isEmpty && linkLocal.contains("fe80") { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTFail("link-local addresses still tentative after 10 s")
    }

    /// Starts a Python server fixture (`Tests/Fixtures/NAME`) in the router namespace with
    /// `arguments`, and waits for the `ready` line it prints once it listens.
    func launchRouterServer(_ fixture: String, _ arguments: [String]) throws -> Process {
        let ready = Pipe()
        let server = try Command.launch(
            ["ip", "netns", "exec", router.name, "python3", Paths.repository.appendingPathComponent("Tests/Fixtures/" + fixture).path] + arguments,
            stdout: ready
        )
        XCTAssertTrue(String(decoding: ready.fileHandleForReading.availableData, as: UTF8.self).hasPrefix("ready"), "\(fixture) started")
        return server
    }
}

/// A self-signed certificate for `probe.test` and `portal.test` (the names the router's
/// servers answer for), made with openssl in `directory`: `cert.pem` and `key.pem`.
struct TestCertificate {
    /// The certificate (PEM).
    let certificate: String
    /// Its private key (PEM).
    let key: String

    init(in directory: String, commonName: String = "probe.test") throws {
        guard Command.exists("openssl") else { throw TestCertificateError.noOpenSSL }
        certificate = directory + "/cert.pem"
        key = directory + "/key.pem"
        _ = try sh("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                   "-keyout", key, "-out", certificate, "-days", "2", "-subj", "/CN=\(commonName)",
                   "-addext", "subjectAltName=DNS:probe.test,DNS:portal.test")
    }

    /// The server fixtures' `--cert`/`--key` arguments.
    var serverArguments: [String] { ["--cert", certificate, "--key", key] }
}

/// Why a test certificate could not be made.
enum TestCertificateError: Error, CustomStringConvertible {
    case noOpenSSL

    var description: String { "openssl is needed (scripts/bootstrap --test installs it)" }
}
