/// The names of a hosts(5) file with their addresses, read as glibc's `files` service
/// reads them, and whether nsswitch.conf consults that file before DNS. With both, a name
/// of /etc/hosts is answered at once, without the network and without a resolver thread.
package struct HostsTable: Sendable, Equatable {
    /// Addresses by lower-cased name (canonical names and aliases alike), in file order.
    private var addressesByName: [String: [IPAddress]] = [:]

    /// A table with no names.
    package init() {}

    /// The entries of hosts(5) text: `address name [alias ...]` per line, `#` starting a
    /// comment. A line whose address does not parse or that names nothing is skipped, as
    /// glibc skips it.
    package init(parsing text: String) {
        for line in text.split(whereSeparator: \.isNewline) {
            let content = line.prefix { $0 != "#" }
            let fields = content.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2, let address = IPAddress(fields[0]) else { continue }
            for name in fields.dropFirst() {
                let key = Self.folded(name)
                if addressesByName[key]?.contains(address) == true { continue }
                addressesByName[key, default: []].append(address)
            }
        }
    }

    /// Every address listed for `name` (compared without regard to ASCII case, as glibc's
    /// `strcasecmp`), both families, in file order; nil when the file does not list it.
    package func addresses(of name: String) -> [IPAddress]? {
        addressesByName[Self.folded(name)]
    }

    /// How many names the table holds.
    package var count: Int { addressesByName.count }

    /// Whether the `hosts` line of nsswitch.conf text names `files` as its first service,
    /// so that an answer from the hosts file is what `getaddrinfo` would give. Without the
    /// file (nil) or a `hosts` line, glibc's default is `dns [!UNAVAIL=return] files`: false.
    /// Like glibc, the last `hosts` line counts.
    package static func consultsFilesFirst(nsswitch: String?) -> Bool {
        var first: Substring?
        for line in (nsswitch ?? "").split(whereSeparator: \.isNewline) {
            let content = line.prefix { $0 != "#" }.drop { $0 == " " || $0 == "\t" }
            guard let colon = content.firstIndex(of: ":"),
                  content[..<colon].trimmingSuffix(while: { $0 == " " || $0 == "\t" }) == "hosts"
            else { continue }
            // Services and their `[STATUS=action]` brackets; the first service is what matters.
            let services = content[content.index(after: colon)...].split(whereSeparator: { $0 == " " || $0 == "\t" })
            first = services.first { !$0.hasPrefix("[") }
        }
        return first == "files"
    }

    /// `name` with ASCII letters lower-cased (glibc compares host names with `strcasecmp`).
    private static func folded(_ name: some StringProtocol) -> String {
        String(decoding: name.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
    }
}

extension Substring {
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> Substring {
        var end = endIndex
        while end > startIndex, predicate(self[index(before: end)]) { end = index(before: end) }
        return self[startIndex..<end]
    }
}
