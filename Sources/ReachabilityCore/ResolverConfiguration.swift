/// Which DNS servers the host's resolver is configured with, from resolv.conf text.
///
/// When resolv.conf points only at systemd-resolved's stub (127.0.0.53 / 127.0.0.54),
/// the stub being there says nothing about upstream servers, so the caller also reads
/// resolved's own upstream list (`/run/systemd/resolve/resolv.conf`) and asks
/// `hasNameserver(resolvConf:resolvedUpstream:)`.
package enum ResolverConfiguration {
    /// systemd-resolved's stub listener addresses.
    package static let resolvedStubAddresses: Set<String> = ["127.0.0.53", "127.0.0.54"]

    /// The `nameserver` entries of a resolv.conf text, in order.
    package static func nameservers(in text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).compactMap { line in
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2, fields[0] == "nameserver" else { return nil }
            return String(fields[1])
        }
    }

    /// Whether a usable DNS server is configured. A stub-only resolv.conf counts only if
    /// resolved's upstream list (when readable) names a server of its own.
    package static func hasNameserver(resolvConf: String?, resolvedUpstream: String?) -> Bool {
        let servers = resolvConf.map(nameservers(in:)) ?? []
        guard !servers.isEmpty else { return false }
        let nonStub = servers.filter { !resolvedStubAddresses.contains($0) }
        if !nonStub.isEmpty { return true }
        guard let upstream = resolvedUpstream else { return true }  // stub without a readable upstream list: trust it
        return nameservers(in: upstream).contains { !resolvedStubAddresses.contains($0) }
    }
}
